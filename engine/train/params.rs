//! [`ParamStore`]: a model's parameters as an insertion-ordered map from name to tensor,
//! saved to and loaded from safetensors (bytes everywhere, files natively). The order is
//! the optimisers' order; the file keeps it in its metadata (`param_order`, a JSON list),
//! since the format itself lays tensors out by name.
//!
//! Loading into an existing store ([`ParamStore::load_into`]) checks the file against the
//! store before writing anything: a missing name and a dtype that differs are each an
//! [`Error::Io`], a shape that differs an [`Error::Shape`], each naming the file, the
//! tensor, what was expected and what was found. A parameter may not be called
//! `__metadata__` (the header's metadata key), and a file that names a tensor twice is
//! refused (`io::safetensors::parse`).

use crate::autograd::{Tape, Var};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::io::safetensors;
use crate::ops;
use crate::shape::DType;
use crate::tensor::Tensor;

/// The metadata key holding the insertion order.
const ORDER_KEY: &str = "param_order";

/// The safetensors header key of the metadata, which no parameter may take.
const METADATA_KEY: &str = "__metadata__";

/// Named parameters (dense F32 tensors of one context), in insertion order.
#[derive(Clone, Debug, Default)]
pub struct ParamStore {
    entries: Vec<(String, Tensor)>,
}

impl ParamStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds parameter `name` (a new name other than `__metadata__`; a dense F32 tensor on the
    /// context of the others).
    pub fn insert(&mut self, name: impl Into<String>, t: Tensor) -> Result<()> {
        let op = "ParamStore::insert";
        let name = name.into();
        if self.index_of(&name).is_some() {
            return Err(Error::value(op, "name", "a name not yet in the store", name));
        }
        // The file's header holds the metadata under this key: a tensor of that name would
        // write a checkpoint that cannot be read.
        if name == METADATA_KEY {
            return Err(Error::value(
                op,
                "name",
                format!("a name other than `{METADATA_KEY}` (safetensors reserves it for metadata)"),
                name,
            ));
        }
        t.expect_dtype(op, "t", &[DType::F32])?;
        if !t.is_contiguous() {
            return Err(Error::value(op, "t", "a dense tensor (updated in place)", "a view"));
        }
        if let Some((_, first)) = self.entries.first() {
            t.expect_context(first.context(), op, "t")?;
        }
        self.entries.push((name, t));
        Ok(())
    }

    /// The parameter called `name`.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }

    /// Position of `name` in insertion order.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|(n, _)| n == name)
    }

    /// Names in insertion order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Tensors in insertion order (what an optimiser is created with).
    pub fn tensors(&self) -> Vec<&Tensor> {
        self.entries.iter().map(|(_, t)| t).collect()
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the store holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Each parameter as a leaf variable of `tape` (insertion order), sharing its buffer, so
    /// an optimiser stepping these variables updates the store.
    pub fn vars(&self, tape: &Tape) -> Result<Vec<Var>> {
        self.entries.iter().map(|(_, t)| tape.var(t)).collect()
    }

    /// The store as a safetensors file, reading the tensors back without blocking (the
    /// browser's form).
    pub async fn to_bytes_async(&self) -> Result<Vec<u8>> {
        let mut tensors = Vec::with_capacity(self.entries.len());
        for (name, t) in &self.entries {
            let data: Vec<u8> = t.to_vec_async().await?.iter().flat_map(|v| v.to_le_bytes()).collect();
            tensors.push((name.clone(), DType::F32, t.shape().to_vec(), data));
        }
        let order = serde_json::to_string(&self.names()).unwrap_or_default();
        Ok(safetensors::serialize(&tensors, &[(ORDER_KEY, &order)]))
    }

    /// The store as a safetensors file (blocks on the readback).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        pollster::block_on(self.to_bytes_async())
    }

    /// Writes the store to `path` as safetensors.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn save(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        let path = path.as_ref();
        std::fs::write(path, self.to_bytes()?).map_err(|e| Error::Io {
            what: path.display().to_string(),
            message: format!("writing: {e}"),
        })
    }

    /// A store of every F32 tensor of a safetensors file, uploaded to `ctx`, in the order
    /// the file's `param_order` metadata gives (name order when it has none); `what` names
    /// the file in errors.
    pub fn from_bytes(ctx: &Context, bytes: &[u8], what: &str) -> Result<Self> {
        let file = safetensors::parse(bytes, what)?;
        let mut names: Vec<String> = safetensors::metadata(bytes, what)?
            .get(ORDER_KEY)
            .and_then(|o| serde_json::from_str::<Vec<String>>(o).ok())
            .unwrap_or_default();
        names.retain(|n| file.contains_key(n));
        for n in file.keys() {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        let mut store = ParamStore::new();
        for name in names {
            let tb = &file[&name];
            let tensor_what = format!("{what}: tensor `{name}`");
            expect_f32(&tensor_what, &tb.dtype)?;
            let t = Tensor::from_slice(ctx, &tb.shape, &tb.to_f32(&tensor_what)?)?;
            store.insert(name, t)?;
        }
        Ok(store)
    }

    /// Reads the store written at `path` onto `ctx` ([`ParamStore::from_bytes`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn load(ctx: &Context, path: impl AsRef<std::path::Path>) -> Result<Self> {
        let path = path.as_ref();
        let what = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| Error::Io {
            what: what.clone(),
            message: format!("reading: {e}"),
        })?;
        Self::from_bytes(ctx, &bytes, &what)
    }

    /// Overwrites every parameter in place with the file's tensor of the same name (tensors
    /// of the file the store lacks are ignored). Checks all of them first: a name missing
    /// from the file or a dtype other than F32 is an [`Error::Io`], a different shape an
    /// [`Error::Shape`] naming the parameter, and nothing is written. `what` names the file
    /// in errors.
    pub fn load_into(&self, bytes: &[u8], what: &str) -> Result<()> {
        let file = safetensors::parse(bytes, what)?;
        let mut values = Vec::with_capacity(self.entries.len());
        for (name, t) in &self.entries {
            let tensor_what = format!("{what}: tensor `{name}`");
            let Some(tb) = file.get(name) else {
                return Err(Error::Io {
                    what: what.to_string(),
                    message: format!(
                        "expected a tensor named `{name}` of shape {:?} (F32), found none (the file has {})",
                        t.shape(),
                        file.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                    ),
                });
            };
            if tb.shape != t.shape() {
                return Err(Error::Shape {
                    op: "ParamStore::load_into",
                    arg: "bytes",
                    expected: format!(
                        "{:?} for parameter `{name}` (its shape in the store; {what})",
                        t.shape()
                    ),
                    actual: tb.shape.as_slice().into(),
                });
            }
            expect_f32(&tensor_what, &tb.dtype)?;
            values.push(tb.to_f32(&tensor_what)?);
        }
        for ((_, t), v) in self.entries.iter().zip(values) {
            ops::copy_into(t, &Tensor::from_slice(t.context(), t.shape(), &v)?)?;
        }
        Ok(())
    }
}

/// A dtype mismatch: parameters are F32.
fn expect_f32(what: &str, dtype: &str) -> Result<()> {
    if dtype != "F32" {
        return Err(Error::Io {
            what: what.to_string(),
            message: format!("expected dtype F32, found dtype {dtype}"),
        });
    }
    Ok(())
}
