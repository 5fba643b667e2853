//! Dtype slots: how one kernel source reads an operand stored as F32, F16 or BF16.
//!
//! A kernel names each such binding once in a `// dtype: NAME scalar` or
//! `// dtype: NAME quad` line and declares it `array<NAME_word>` (scalar) or
//! `array<NAME_quad>` (quad: four elements per array element, read as a vec4). The engine
//! prepends a generated prelude, per dtype of each slot, defining those element types and
//! the accessors the kernel reads through:
//! - `NAME_at(i) -> f32`: element i (any slot);
//! - `NAME_at4(q) -> vec4<f32>`: elements 4q .. 4q + 3 (quad slots).
//!
//! F32 slots read `array<f32>` / `array<vec4<f32>>` exactly as a kernel written for f32
//! would; F16 and BF16 slots read the packed words (`u32` / `vec2<u32>`) and widen them in
//! registers: `unpack2x16float` for F16, a 16-bit shift for BF16. So the kernel is one
//! source for every dtype (no copies), and the f32 pipeline is the one it always was.

use crate::shape::DType;

/// How a kernel reads a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    Scalar,
    Quad,
}

/// The slots a kernel source declares, `(name, access)` in order, from its `// dtype:` lines.
fn slots(wgsl: &str) -> Result<Vec<(&str, Access)>, String> {
    wgsl.lines()
        .filter_map(|l| l.strip_prefix("// dtype: "))
        .map(|rest| {
            let mut words = rest.split_whitespace();
            match (words.next(), words.next()) {
                (Some(name), Some("scalar")) => Ok((name, Access::Scalar)),
                (Some(name), Some("quad")) => Ok((name, Access::Quad)),
                _ => Err(format!("`// dtype: {rest}`: expected `// dtype: NAME scalar|quad`")),
            }
        })
        .collect()
}

/// True when `wgsl` declares dtype slots (and so needs [`dtype_prelude`] first).
pub fn has_dtype_slots(wgsl: &str) -> bool {
    wgsl.lines().any(|l| l.starts_with("// dtype: "))
}

/// The generated prelude for the slots `wgsl` declares, each slot's dtype taken from
/// `dtypes` (`(name, dtype)`; a slot not listed is F32). An error names a malformed
/// `// dtype:` line or a listed name the source does not declare.
pub fn dtype_prelude(wgsl: &str, dtypes: &[(&str, DType)]) -> Result<String, String> {
    let slots = slots(wgsl)?;
    if let Some((name, _)) = dtypes.iter().find(|(n, _)| !slots.iter().any(|(s, _)| s == n)) {
        return Err(format!("no `// dtype: {name} ...` slot in the kernel"));
    }
    let mut out = String::from("// Generated dtype slots (kernel::dtype).\n");
    for (name, access) in slots {
        let dtype = dtypes.iter().find(|(n, _)| *n == name).map_or(DType::F32, |&(_, d)| d);
        out.push_str(&slot(name, access, dtype));
    }
    Ok(out)
}

fn slot(x: &str, access: Access, dtype: DType) -> String {
    // Widen one packed word's two halves: F16 by the builtin, BF16 by moving each half to
    // the top of an f32 (a bfloat16 is an f32 with its low 16 bits zero).
    let pair = |w: &str| match dtype {
        DType::BF16 => format!("vec2<f32>(bitcast<f32>({w} << 16u), bitcast<f32>({w} & 0xffff0000u))"),
        _ => format!("unpack2x16float({w})"),
    };
    match (access, dtype) {
        (Access::Scalar, DType::F32) => {
            format!("alias {x}_word = f32;\nfn {x}_at(i: u32) -> f32 {{ return {x}[i]; }}\n")
        }
        (Access::Scalar, _) => format!(
            "alias {x}_word = u32;\nfn {x}_at(i: u32) -> f32 {{ return {}[i & 1u]; }}\n",
            pair(&format!("{x}[i >> 1u]"))
        ),
        (Access::Quad, DType::F32) => format!(
            "alias {x}_quad = vec4<f32>;\n\
             fn {x}_at4(q: u32) -> vec4<f32> {{ return {x}[q]; }}\n\
             fn {x}_at(i: u32) -> f32 {{ return {x}[i >> 2u][i & 3u]; }}\n"
        ),
        (Access::Quad, _) => format!(
            "alias {x}_quad = vec2<u32>;\n\
             fn {x}_at4(q: u32) -> vec4<f32> {{ let v = {x}[q]; return vec4<f32>({}, {}); }}\n\
             fn {x}_at(i: u32) -> f32 {{ return {}[i & 1u]; }}\n",
            pair("v.x"),
            pair("v.y"),
            pair(&format!("{x}[i >> 2u][(i >> 1u) & 1u]"))
        ),
    }
}

/// The cache name of a kernel specialised to `dtypes`: `name` itself when every slot is
/// F32 (profiles keep their names), else `name[slot=F16,...]`.
pub(crate) fn typed_name(name: &str, dtypes: &[(&str, DType)]) -> String {
    let halves: Vec<String> = dtypes
        .iter()
        .filter(|(_, d)| d.is_half())
        .map(|(n, d)| format!("{n}={d}"))
        .collect();
    if halves.is_empty() {
        name.to_string()
    } else {
        format!("{name}[{}]", halves.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_generate_accessors_and_errors_name_the_problem() {
        let src = "// dtype: w quad\n// dtype: g scalar\n";
        let p = dtype_prelude(src, &[("w", DType::F16)]).unwrap();
        assert!(p.contains("alias w_quad = vec2<u32>;"));
        assert!(p.contains("alias g_word = f32;"));
        assert!(dtype_prelude(src, &[("v", DType::F16)]).unwrap_err().contains("v"));
        assert!(dtype_prelude("// dtype: w\n", &[]).is_err());
        assert_eq!(typed_name("k", &[("w", DType::F32)]), "k");
        assert_eq!(typed_name("k", &[("w", DType::BF16)]), "k[w=BF16]");
    }
}
