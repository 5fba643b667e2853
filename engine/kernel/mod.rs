//! Compute kernels: WGSL source, its bind group layout, the pipeline cache, uniform
//! parameters and workgroup grids. The device that owns the cache and records dispatches is
//! one layer up, in `context`.
//!
//! A kernel is identified by a [`KernelKey`] (shader name, entry point, specialization
//! constants). Shapes and scalars travel in a uniform, never in the key, so one pipeline
//! serves every shape. Binding `i` of group 0 is `bindings[i]` of the kernel's source.

pub(crate) mod cache;
mod dtype;
mod launch;
mod shaders;
mod subgroups;

use std::borrow::Cow;

pub use cache::Kernel;
pub use dtype::{dtype_prelude, has_dtype_slots};
pub(crate) use launch::{groups_1d, push_dims, Params};
pub(crate) use shaders::shader;
pub use shaders::{Shader, SHADERS};
pub(crate) use subgroups::for_the_adapter;
pub use subgroups::uses_subgroups;

/// How a kernel sees one of its bindings (all in `@group(0)`, binding index = position).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    /// `var<uniform>`: the shape and scalar parameters.
    Uniform,
    /// `var<storage, read>`.
    Read,
    /// `var<storage, read_write>`.
    ReadWrite,
}

/// What identifies a pipeline in the cache.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelKey {
    /// The shader's name, e.g. `ops/softmax`.
    pub name: Cow<'static, str>,
    /// The entry point.
    pub entry: Cow<'static, str>,
    /// Pipeline-overridable constants, as `(name, f64 bits)` so the key is hashable.
    pub constants: Vec<(Cow<'static, str>, u64)>,
}

/// Everything needed to build a pipeline on a miss.
#[derive(Clone, Debug)]
pub struct KernelSource {
    /// The WGSL source.
    pub wgsl: Cow<'static, str>,
    /// How the kernel sees each binding of group 0, in binding order; empty: as the WGSL
    /// declares them.
    pub bindings: Vec<Binding>,
}

/// A hand-written kernel: WGSL from `shaders/`, one entry point. Its bindings and its
/// workgroup size are what the WGSL declares (read with naga when the pipeline is built), so
/// [`KernelDef::new`] takes neither.
#[derive(Clone, Copy, Debug)]
pub struct KernelDef {
    /// The shader's name, e.g. `ops/softmax`.
    pub name: &'static str,
    /// The WGSL source (`include_str!` of a file under `shaders/`).
    pub wgsl: &'static str,
    /// The entry point.
    pub entry: &'static str,
    /// How the kernel sees each binding of group 0, in binding order; empty (what
    /// [`KernelDef::new`] gives): as the WGSL declares them.
    pub bindings: &'static [Binding],
}

impl KernelDef {
    /// The kernel `name` (e.g. `ops/softmax`): entry point `entry` of `wgsl` (from
    /// `shader!`), its bindings as the WGSL declares them.
    pub const fn new(name: &'static str, wgsl: &'static str, entry: &'static str) -> Self {
        KernelDef {
            name,
            wgsl,
            entry,
            bindings: &[],
        }
    }

    /// The key of this kernel specialised with `constants` (WGSL `override` values).
    pub fn key(&self, constants: &[(&'static str, f64)]) -> KernelKey {
        KernelKey {
            name: Cow::Borrowed(self.name),
            entry: Cow::Borrowed(self.entry),
            constants: constants
                .iter()
                .map(|(n, v)| (Cow::Borrowed(*n), v.to_bits()))
                .collect(),
        }
    }

    /// The key of this kernel with its dtype slots (`// dtype:` lines, see
    /// [`dtype_prelude`]) set to `dtypes` and specialised with `constants`.
    pub fn typed_key(&self, dtypes: &[(&str, crate::shape::DType)], constants: &[(&'static str, f64)]) -> KernelKey {
        let mut key = self.key(constants);
        key.name = Cow::Owned(dtype::typed_name(self.name, dtypes));
        key
    }

    /// What the cache needs to build this kernel with its dtype slots set to `dtypes`: the
    /// generated prelude, then the source.
    pub fn typed_source(&self, dtypes: &[(&str, crate::shape::DType)]) -> Result<KernelSource, String> {
        let prelude = dtype_prelude(self.wgsl, dtypes)?;
        Ok(KernelSource {
            wgsl: Cow::Owned(format!("{prelude}{}", self.wgsl)),
            bindings: self.bindings.to_vec(),
        })
    }

    /// What the cache needs to build this kernel's pipeline.
    pub fn source(&self) -> KernelSource {
        KernelSource {
            wgsl: Cow::Borrowed(self.wgsl),
            bindings: self.bindings.to_vec(),
        }
    }
}
