//! A small reader and writer for the safetensors format (no I/O, so it runs in wasm).
//!
//! Layout: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name
//! to `{dtype, shape, data_offsets: [begin, end]}` (offsets relative to the data section,
//! which follows the header), optionally `__metadata__`. Every offset and size is checked
//! against the buffer, and a key may appear once, so a truncated or hostile file is an
//! error, never a panic or a silent choice.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::shape::DType;

/// One tensor of a parsed file: its header entry and its bytes (borrowed from the file).
#[derive(Clone, Debug)]
pub struct TensorBytes<'a> {
    /// The header's dtype string (kept as text so unknown dtypes fail only when used).
    pub dtype: String,
    /// Dimensions.
    pub shape: Vec<usize>,
    /// The raw little-endian elements.
    pub data: &'a [u8],
}

impl TensorBytes<'_> {
    /// The element type, or an error naming the tensor (`what`) for one the engine does not
    /// hold (only F32, F16 and BF16 are tensors here).
    pub fn dtype(&self, what: &str) -> Result<DType> {
        match self.dtype.as_str() {
            "F32" => Ok(DType::F32),
            "F16" => Ok(DType::F16),
            "BF16" => Ok(DType::BF16),
            other => Err(Error::Io {
                what: what.to_string(),
                message: format!("dtype {other} is not supported (F32, F16, BF16 are)"),
            }),
        }
    }

    /// The elements widened to f32 (row-major, exact for every dtype); `what` names the
    /// tensor in errors.
    pub fn to_f32(&self, what: &str) -> Result<Vec<f32>> {
        Ok(match self.dtype(what)? {
            DType::F32 => self
                .data
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            DType::F16 => self
                .data
                .chunks_exact(2)
                .map(|b| half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32())
                .collect(),
            DType::BF16 => self
                .data
                .chunks_exact(2)
                .map(|b| half::bf16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32())
                .collect(),
        })
    }
}

/// Bytes per element of every dtype the format defines (the loader widens only F32, F16 and
/// BF16, but every entry's shape is checked against its bytes).
fn element_size(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "BOOL" | "U8" | "I8" | "F8_E5M2" | "F8_E4M3" => 1,
        "U16" | "I16" | "F16" | "BF16" => 2,
        "U32" | "I32" | "F32" => 4,
        "U64" | "I64" | "F64" => 8,
        _ => return None,
    })
}

/// Largest header accepted (the format's own reference implementation uses 100 MB).
const MAX_HEADER: u64 = 100_000_000;

/// Parses a safetensors file held in memory; `what` names the file in errors.
pub fn parse<'a>(bytes: &'a [u8], what: &str) -> Result<BTreeMap<String, TensorBytes<'a>>> {
    let io = |message: String| Error::Io {
        what: what.to_string(),
        message,
    };
    if bytes.len() < 8 {
        return Err(io(format!(
            "{} bytes is too short for a safetensors header",
            bytes.len()
        )));
    }
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap_or([0; 8]));
    let rest = (bytes.len() - 8) as u64;
    if n > MAX_HEADER || n > rest {
        return Err(io(format!(
            "header length {n} does not fit the file ({rest} bytes after the length): not safetensors, or truncated"
        )));
    }
    let header = &bytes[8..8 + n as usize];
    let data = &bytes[8 + n as usize..];
    let v: Value = serde_json::from_slice(header).map_err(|e| io(format!("header is not valid JSON: {e}")))?;
    let obj = v.as_object().ok_or_else(|| io("header is not a JSON object".into()))?;
    // serde_json keeps the last of a repeated key: two entries of one name would load one of
    // them silently (a shape or dtype the writer did not mean).
    if let Some(key) = repeated_key(header) {
        return Err(io(format!(
            "header key `{key}` appears more than once (a file names each tensor once)"
        )));
    }
    let mut out = BTreeMap::new();
    let mut spans: Vec<(usize, usize, &str)> = Vec::with_capacity(obj.len());
    for (name, entry) in obj {
        if name == "__metadata__" {
            continue;
        }
        let bad = |m: &str| Error::Io {
            what: format!("{what}: tensor `{name}`"),
            message: m.to_string(),
        };
        let dtype = entry
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("missing `dtype`"))?;
        let shape: Vec<usize> = entry
            .get("shape")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("missing `shape`"))?
            .iter()
            .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("`shape` is not a list of sizes"))?;
        let offsets: Vec<usize> = entry
            .get("data_offsets")
            .and_then(Value::as_array)
            .filter(|a| a.len() == 2)
            .ok_or_else(|| bad("`data_offsets` is not [begin, end]"))?
            .iter()
            .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("`data_offsets` are not sizes"))?;
        let (begin, end) = (offsets[0], offsets[1]);
        if begin > end || end > data.len() {
            return Err(bad(&format!(
                "data_offsets [{begin}, {end}] fall outside the {} data bytes (truncated file?)",
                data.len()
            )));
        }
        let elem = element_size(dtype).ok_or_else(|| bad(&format!("unknown dtype `{dtype}`")))?;
        let bytes = shape
            .iter()
            .try_fold(elem, |a, &d| a.checked_mul(d))
            .ok_or_else(|| bad(&format!("shape {shape:?} of {dtype} overflows a byte count")))?;
        if bytes != end - begin {
            return Err(bad(&format!(
                "shape {shape:?} of {dtype} needs {bytes} bytes, data_offsets give {}",
                end - begin
            )));
        }
        spans.push((begin, end, name.as_str()));
        out.insert(
            name.clone(),
            TensorBytes {
                dtype: dtype.to_string(),
                shape,
                data: &data[begin..end],
            },
        );
    }
    // As Hugging Face's `safetensors` crate: the entries tile the data section exactly, in
    // offset order, with no overlap, no gap and nothing after the last one.
    spans.sort_unstable();
    let mut at = 0;
    for &(begin, end, name) in &spans {
        if begin != at {
            let kind = if begin < at {
                "overlaps the tensor before it"
            } else {
                "leaves a gap after the tensor before it"
            };
            return Err(io(format!(
                "tensor `{name}`: data_offsets [{begin}, {end}] {kind} (which ends at {at})"
            )));
        }
        at = end;
    }
    if at != data.len() {
        return Err(io(format!(
            "the tensors cover {at} of the {} data bytes; the rest belongs to no tensor",
            data.len()
        )));
    }
    Ok(out)
}

/// The first top-level key of the JSON object `header` (valid JSON, parsed already) that
/// repeats an earlier one, compared as decoded strings.
fn repeated_key(header: &[u8]) -> Option<String> {
    let mut seen = std::collections::BTreeSet::new();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < header.len() {
        match header[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i;
                i += 1;
                while i < header.len() && header[i] != b'"' {
                    i += if header[i] == b'\\' { 2 } else { 1 };
                }
                // A string inside the top-level object followed by `:` is one of its keys.
                let next = header.get(i + 1..)?.iter().find(|b| !b.is_ascii_whitespace());
                if depth == 1 && next == Some(&b':') {
                    let key: String = serde_json::from_slice(header.get(start..=i)?).ok()?;
                    if !seen.insert(key.clone()) {
                        return Some(key);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Serialises tensors `(name, dtype, shape, little-endian bytes)` to a safetensors file.
///
/// Deterministic: entries are laid out in name order, the header's keys are sorted, and the
/// header is padded with spaces to a multiple of 8 bytes as the format recommends.
pub fn serialize(tensors: &[(String, DType, Vec<usize>, Vec<u8>)], metadata: &[(&str, &str)]) -> Vec<u8> {
    let mut order: Vec<&(String, DType, Vec<usize>, Vec<u8>)> = tensors.iter().collect();
    order.sort_by(|a, b| a.0.cmp(&b.0));
    let mut header = Map::new();
    if !metadata.is_empty() {
        let m: Map<String, Value> = metadata.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        header.insert("__metadata__".into(), Value::Object(m));
    }
    let mut offset = 0usize;
    for (name, dtype, shape, bytes) in &order {
        header.insert(
            name.clone(),
            json!({"dtype": dtype.name(), "shape": shape, "data_offsets": [offset, offset + bytes.len()]}),
        );
        offset += bytes.len();
    }
    let mut text = Value::Object(header).to_string().into_bytes();
    while !text.len().is_multiple_of(8) {
        text.push(b' ');
    }
    let mut out = Vec::with_capacity(8 + text.len() + offset);
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(&text);
    for (_, _, _, bytes) in &order {
        out.extend_from_slice(bytes);
    }
    out
}

/// The `__metadata__` string map of a safetensors file (empty when it has none); `what`
/// names the file in errors. The header is checked as [`parse`] checks it.
pub fn metadata(bytes: &[u8], what: &str) -> Result<BTreeMap<String, String>> {
    parse(bytes, what)?;
    // parse checked the length and the JSON: the slice and the object are there.
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap_or([0; 8])) as usize;
    let v: Value = serde_json::from_slice(&bytes[8..8 + n]).map_err(|e| Error::Io {
        what: what.to_string(),
        message: format!("header is not valid JSON: {e}"),
    })?;
    let Some(Value::Object(m)) = v.get("__metadata__") else {
        return Ok(BTreeMap::new());
    };
    Ok(m.iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect())
}
