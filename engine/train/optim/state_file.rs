//! An optimiser's state as a safetensors file, to keep beside the parameters
//! (`ParamStore::save`): every state tensor under a name of its own (`m.0`, `v.0`, ..,
//! `device_powers` for Adam; `velocity.0`, .. for SGD), and in the metadata the optimiser's
//! name (`optimizer`: `adam`, `adamw` or `sgd`), its parameter count (`params`) and its host
//! scalars (the step count; Adam's running powers as f32 bit patterns, so they come back
//! exactly). Loading checks the name, the count, every tensor's presence, dtype and shape,
//! and the scalars before it writes anything, then writes each state tensor in place.

// In a browser the state is not read back (no blocking readback there): the writer half is unused.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::io::safetensors::{self, TensorBytes};
use crate::tensor::Tensor;

/// The op errors name.
const OP: &str = "Optimizer::load_state";

/// The metadata key of the optimiser's name.
const KIND_KEY: &str = "optimizer";
/// The metadata key of the parameter count.
const COUNT_KEY: &str = "params";

/// f32 values as their bit patterns in hex, comma separated (exact through text).
pub(crate) fn f32_bits(values: &[f32]) -> String {
    values
        .iter()
        .map(|v| format!("{:08x}", v.to_bits()))
        .collect::<Vec<_>>()
        .join(",")
}

/// The state file of optimiser `kind` over `count` parameters: `tensors` by name, `scalars`
/// as metadata (blocks on the readback; native only).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn to_bytes(
    kind: &str,
    count: usize,
    tensors: &[(String, &Tensor)],
    scalars: &[(&str, String)],
) -> Result<Vec<u8>> {
    let mut list = Vec::with_capacity(tensors.len());
    for (name, t) in tensors {
        let data: Vec<u8> = t.to_vec()?.iter().flat_map(|v| v.to_le_bytes()).collect();
        list.push((name.clone(), crate::shape::DType::F32, t.shape().to_vec(), data));
    }
    let count = count.to_string();
    let mut meta: Vec<(&str, &str)> = vec![(KIND_KEY, kind), (COUNT_KEY, &count)];
    meta.extend(scalars.iter().map(|(k, v)| (*k, v.as_str())));
    Ok(safetensors::serialize(&list, &meta))
}

/// A parsed state file, checked to be of the expected optimiser and parameter count.
pub(crate) struct StateFile<'a> {
    what: String,
    tensors: BTreeMap<String, TensorBytes<'a>>,
    meta: BTreeMap<String, String>,
}

impl<'a> StateFile<'a> {
    /// Parses `bytes` (named `what` in errors) as the state of optimiser `kind` over `count`
    /// parameters: a file of another optimiser, of no optimiser (a parameters file) or of
    /// another parameter count is an error naming what it is.
    pub(crate) fn parse(bytes: &'a [u8], what: &str, kind: &str, count: usize) -> Result<Self> {
        let tensors = safetensors::parse(bytes, what)?;
        let meta = safetensors::metadata(bytes, what)?;
        match meta.get(KIND_KEY) {
            None => {
                return Err(Error::value(
                    OP,
                    "bytes",
                    format!("the state file of a `{kind}` optimiser"),
                    format!("{what}, a safetensors file without `{KIND_KEY}` metadata (a parameters file?)"),
                ))
            }
            Some(k) if k != kind => {
                return Err(Error::value(
                    OP,
                    "bytes",
                    format!("the state file of a `{kind}` optimiser"),
                    format!("{what}, the state of a `{k}` optimiser"),
                ))
            }
            Some(_) => {}
        }
        let found = meta.get(COUNT_KEY).cloned().unwrap_or_default();
        if found != count.to_string() {
            return Err(Error::value(
                OP,
                "bytes",
                format!("the state of {count} parameters (this optimiser's)"),
                format!("{what}, the state of {found:?} parameters"),
            ));
        }
        Ok(StateFile {
            what: what.to_string(),
            tensors,
            meta,
        })
    }

    fn scalar(&self, key: &'static str) -> Result<&str> {
        self.meta.get(key).map(String::as_str).ok_or_else(|| Error::Io {
            what: self.what.clone(),
            message: format!("expected `{key}` in the state file's metadata, found none"),
        })
    }

    /// The metadata value `key` as a u32.
    pub(crate) fn u32(&self, key: &'static str) -> Result<u32> {
        let v = self.scalar(key)?;
        v.parse().map_err(|_| Error::Io {
            what: self.what.clone(),
            message: format!("expected a count for `{key}`, found {v:?}"),
        })
    }

    /// The metadata value `key` as `n` f32 bit patterns ([`f32_bits`]).
    pub(crate) fn f32_bits(&self, key: &'static str, n: usize) -> Result<Vec<f32>> {
        let v = self.scalar(key)?;
        let parsed: Option<Vec<f32>> = v
            .split(',')
            .map(|w| u32::from_str_radix(w, 16).ok().map(f32::from_bits))
            .collect();
        parsed.filter(|p| p.len() == n).ok_or_else(|| Error::Io {
            what: self.what.clone(),
            message: format!("expected {n} f32 bit patterns for `{key}`, found {v:?}"),
        })
    }

    /// The values of every target state tensor, by name, checked (present, F32, the
    /// target's shape) before any is written.
    pub(crate) fn values(&self, targets: &[(String, &Tensor)]) -> Result<Vec<Vec<f32>>> {
        targets
            .iter()
            .map(|(name, t)| {
                let tensor_what = format!("{}: tensor `{name}`", self.what);
                let Some(tb) = self.tensors.get(name) else {
                    return Err(Error::Io {
                        what: self.what.clone(),
                        message: format!(
                            "expected a state tensor named `{name}` of shape {:?}, found none",
                            t.shape()
                        ),
                    });
                };
                if tb.shape != t.shape() {
                    return Err(Error::Shape {
                        op: OP,
                        arg: "bytes",
                        expected: format!("{:?} for state tensor `{name}` ({})", t.shape(), self.what),
                        actual: tb.shape.as_slice().into(),
                    });
                }
                if tb.dtype != "F32" {
                    return Err(Error::Io {
                        what: tensor_what,
                        message: format!("expected dtype F32, found dtype {}", tb.dtype),
                    });
                }
                tb.to_f32(&tensor_what)
            })
            .collect()
    }
}

/// Writes each value into its target in place (every tensor sharing the buffer, a captured
/// step's plan included, sees it).
pub(crate) fn write_all(targets: &[(String, &Tensor)], values: Vec<Vec<f32>>) -> Result<()> {
    targets.iter().zip(values).try_for_each(|((_, t), v)| t.write(&v))
}

/// Writes `bytes` to `path`, naming it in errors.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| Error::Io {
        what: path.display().to_string(),
        message: format!("writing: {e}"),
    })
}

/// Reads `path`, naming it in errors.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn read_file(path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::Io {
        what: path.display().to_string(),
        message: format!("reading: {e}"),
    })
}
