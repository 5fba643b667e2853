//! Dtype slots: how one kernel source reads an operand stored as F32, F16 or BF16.
//!
//! A kernel names each such binding once in a `// dtype: NAME scalar`, `// dtype: NAME vec2`
//! or `// dtype: NAME vec4` line and declares it `array<NAME_t>` (or, for the older spelling,
//! `array<NAME_word>` (scalar) / `array<NAME_vec4>` (vec4)): one, two or four elements per
//! array element. The engine prepends a generated prelude, per dtype of each slot, defining
//! that element type and the accessors the kernel reads and writes through:
//! - `NAME_at(i) -> f32`: element i (scalar and vec4 slots);
//! - `NAME_at4(q) -> vec4<f32>`: elements 4q .. 4q + 3 (vec4 slots);
//! - `NAME_ld(u) -> W`: array element u as W = f32, `vec2<f32>` or `vec4<f32>` (scalar,
//!   vec2, vec4), and for a slot declared `// dtype: NAME vec2 store` (a read_write binding)
//!   `NAME_st(u, v: W)`: a kernel written over a width alias reads and writes every width and
//!   dtype with the same calls.
//!
//! Stores round to nearest even with the integer conversions of `shaders/tensor/dtype.wgsl`
//! (WGSL leaves the rounding of `pack2x16float` to the implementation). A half is half of a
//! packed word, so a store of one half would be a read-modify-write that races with the
//! invocation writing the word's other half: a half **scalar** store slot is refused (the
//! prelude is an error naming the slot). Vec2 and vec4 stores write whole words,
//! so a kernel whose invocations own distinct array elements never shares a word.
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
    Vec2,
    Vec4,
}

/// One `// dtype:` line: the binding's name, its access and whether the kernel stores to it.
struct Slot<'a> {
    name: &'a str,
    access: Access,
    store: bool,
}

/// The slots a kernel source declares, in order, from its `// dtype:` lines.
fn slots(wgsl: &str) -> Result<Vec<Slot<'_>>, String> {
    wgsl.lines()
        .filter_map(|l| l.strip_prefix("// dtype: "))
        .map(|rest| {
            let mut words = rest.split_whitespace();
            let (name, access) = match (words.next(), words.next()) {
                (Some(name), Some("scalar")) => (name, Access::Scalar),
                (Some(name), Some("vec2")) => (name, Access::Vec2),
                (Some(name), Some("vec4")) => (name, Access::Vec4),
                _ => {
                    return Err(format!(
                        "`// dtype: {rest}`: expected `// dtype: NAME scalar|vec2|vec4 [store]`"
                    ))
                }
            };
            let store = match words.next() {
                None => false,
                Some("store") => true,
                Some(w) => return Err(format!("`// dtype: {rest}`: `{w}` is not `store`")),
            };
            Ok(Slot { name, access, store })
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
    if let Some((name, _)) = dtypes.iter().find(|(n, _)| !slots.iter().any(|s| s.name == *n)) {
        return Err(format!("no `// dtype: {name} ...` slot in the kernel"));
    }
    let mut out = String::from("// Generated dtype slots (kernel::dtype).\n");
    let mut rounding = false;
    for s in slots {
        let dtype = dtypes
            .iter()
            .find(|(n, _)| *n == s.name)
            .map_or(DType::F32, |&(_, d)| d);
        if s.store && dtype.is_half() && s.access == Access::Scalar {
            return Err(format!(
                "`// dtype: {} scalar store` as {dtype}: a half is half a word, and a store of one races \
                 with the invocation storing the other half; store {dtype} through vec2 or vec4 slots",
                s.name
            ));
        }
        rounding |= s.store && dtype.is_half();
        out.push_str(&slot(s.name, s.access, dtype));
        out.push_str(&unit_accessors(s.name, s.access, s.store, dtype));
    }
    // Half stores round with the element conversions, once per kernel (unless it has them).
    if rounding && !wgsl.contains("fn f32_bits_to_f16(") {
        out.push_str(ROUNDING);
    }
    Ok(out)
}

/// The integer element conversions (`shaders/tensor/dtype.wgsl`) that half stores round with.
const ROUNDING: &str = include_str!("../../shaders/tensor/dtype.wgsl");

/// W (f32, vec2, vec4) of an access.
fn width(access: Access) -> &'static str {
    match access {
        Access::Scalar => "f32",
        Access::Vec2 => "vec2<f32>",
        Access::Vec4 => "vec4<f32>",
    }
}

/// `NAME_t`, `NAME_ld` and, for a store slot, `NAME_st` (see the module docs).
fn unit_accessors(x: &str, access: Access, store: bool, dtype: DType) -> String {
    let w = width(access);
    let mut out = unit_loads(x, access, dtype);
    if store {
        out.push_str(&match (dtype, access) {
            (DType::F32, _) => format!("fn {x}_st(u: u32, v: {w}) {{ {x}[u] = v; }}\n"),
            (_, Access::Scalar) => String::new(), // refused by dtype_prelude
            (_, Access::Vec2) => format!(
                "fn {x}_st(u: u32, v: vec2<f32>) {{ {x}[u] = {}; }}\n",
                word(dtype, "v.x", "v.y")
            ),
            (_, Access::Vec4) => format!(
                "fn {x}_st(u: u32, v: vec4<f32>) {{ {x}[u] = vec2<u32>({}, {}); }}\n",
                word(dtype, "v.x", "v.y"),
                word(dtype, "v.z", "v.w")
            ),
        });
    }
    out
}

/// One packed word of `dtype` from two f32 expressions, each rounded to nearest even.
fn word(dtype: DType, lo: &str, hi: &str) -> String {
    let round = if dtype == DType::BF16 {
        "f32_bits_to_bf16"
    } else {
        "f32_bits_to_f16"
    };
    format!("({round}(bitcast<u32>({lo})) | ({round}(bitcast<u32>({hi})) << 16u))")
}

/// `NAME_t` and `NAME_ld` of a slot.
fn unit_loads(x: &str, access: Access, dtype: DType) -> String {
    let w = width(access);
    if dtype == DType::F32 {
        return format!("alias {x}_t = {w};\nfn {x}_ld(u: u32) -> {w} {{ return {x}[u]; }}\n");
    }
    match access {
        Access::Scalar => format!("alias {x}_t = u32;\nfn {x}_ld(u: u32) -> f32 {{ return {x}_at(u); }}\n"),
        Access::Vec2 => format!(
            "alias {x}_t = u32;\nfn {x}_ld(u: u32) -> vec2<f32> {{ let w = {x}[u]; return {}; }}\n",
            pair(dtype, "w")
        ),
        Access::Vec4 => format!("alias {x}_t = vec2<u32>;\nfn {x}_ld(u: u32) -> vec4<f32> {{ return {x}_at4(u); }}\n"),
    }
}

/// Widens one packed word's two halves: F16 by the builtin, BF16 by moving each half to the
/// top of an f32 (a bfloat16 is an f32 with its low 16 bits zero).
fn pair(dtype: DType, w: &str) -> String {
    match dtype {
        DType::BF16 => format!("vec2<f32>(bitcast<f32>({w} << 16u), bitcast<f32>({w} & 0xffff0000u))"),
        _ => format!("unpack2x16float({w})"),
    }
}

fn slot(x: &str, access: Access, dtype: DType) -> String {
    let pair = |w: &str| pair(dtype, w);
    match (access, dtype) {
        (Access::Vec2, _) => String::new(),
        (Access::Scalar, DType::F32) => {
            format!("alias {x}_word = f32;\nfn {x}_at(i: u32) -> f32 {{ return {x}[i]; }}\n")
        }
        (Access::Scalar, _) => format!(
            "alias {x}_word = u32;\nfn {x}_at(i: u32) -> f32 {{ return {}[i & 1u]; }}\n",
            pair(&format!("{x}[i >> 1u]"))
        ),
        (Access::Vec4, DType::F32) => format!(
            "alias {x}_vec4 = vec4<f32>;\n\
             fn {x}_at4(q: u32) -> vec4<f32> {{ return {x}[q]; }}\n\
             fn {x}_at(i: u32) -> f32 {{ return {x}[i >> 2u][i & 3u]; }}\n"
        ),
        (Access::Vec4, _) => format!(
            "alias {x}_vec4 = vec2<u32>;\n\
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
        let src = "// dtype: w vec4\n// dtype: g scalar\n";
        let p = dtype_prelude(src, &[("w", DType::F16)]).unwrap();
        assert!(p.contains("alias w_vec4 = vec2<u32>;"));
        assert!(p.contains("alias g_word = f32;"));
        assert!(dtype_prelude(src, &[("v", DType::F16)]).unwrap_err().contains("v"));
        assert!(dtype_prelude("// dtype: w\n", &[]).is_err());
        assert_eq!(typed_name("k", &[("w", DType::F32)]), "k");
        // Width-generic accessors; stores only for `store` slots, rounding helpers only then.
        let src = "// dtype: a vec2\n// dtype: o vec2 store\n// dtype: q vec4 store\n";
        let p = dtype_prelude(src, &[("a", DType::BF16), ("o", DType::F16), ("q", DType::BF16)]).unwrap();
        assert!(p.contains("alias a_t = u32;") && p.contains("fn a_ld(u: u32) -> vec2<f32>"));
        assert!(!p.contains("fn a_st("));
        assert!(p.contains("fn o_st(u: u32, v: vec2<f32>)") && p.contains("f32_bits_to_f16(bitcast<u32>(v.y)) << 16u"));
        assert!(p.contains("alias q_t = vec2<u32>;") && p.contains("f32_bits_to_bf16(bitcast<u32>(v.w))"));
        assert_eq!(p.matches("fn f32_bits_to_f16(").count(), 1);
        let f32s = dtype_prelude(src, &[]).unwrap();
        assert!(
            f32s.contains("alias o_t = vec2<f32>;") && f32s.contains("fn o_st(u: u32, v: vec2<f32>) { o[u] = v; }")
        );
        assert!(!f32s.contains("f32_bits_to_f16"));
        // A half scalar store would share its word with a neighbour's: refused, by name.
        let racy = "// dtype: out scalar store\n";
        assert!(dtype_prelude(racy, &[]).is_ok());
        let e = dtype_prelude(racy, &[("out", DType::F16)]).unwrap_err();
        assert!(e.contains("out") && e.contains("race"), "{e}");
        assert!(dtype_prelude("// dtype: w vec2 stored\n", &[]).is_err());
        assert_eq!(typed_name("k", &[("w", DType::BF16)]), "k[w=BF16]");
    }
}
