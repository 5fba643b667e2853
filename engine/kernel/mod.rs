//! Compute kernels: WGSL source, its bind group layout, the pipeline cache and dispatch.
//!
//! A kernel is identified by a [`KernelKey`] (shader name, entry point, specialization
//! constants). Shapes and scalars travel in a uniform, never in the key, so one pipeline
//! serves every shape. Binding `i` of group 0 is `bindings[i]` of the kernel's source.

pub(crate) mod cache;
mod launch;

use std::borrow::Cow;

pub use cache::Kernel;
pub(crate) use launch::{groups_1d, Params};

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
    /// The shader's name, e.g. `reduce/softmax`.
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
    /// How the kernel sees each binding of group 0, in binding order.
    pub bindings: Vec<Binding>,
}

/// A hand-written kernel: WGSL from `shaders/`, one entry point, a fixed binding list.
#[derive(Clone, Copy, Debug)]
pub struct KernelDef {
    /// The shader's name, e.g. `reduce/softmax`.
    pub name: &'static str,
    /// The WGSL source (`include_str!` of a file under `shaders/`).
    pub wgsl: &'static str,
    /// The entry point.
    pub entry: &'static str,
    /// How the kernel sees each binding of group 0, in binding order.
    pub bindings: &'static [Binding],
}

impl KernelDef {
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

    /// What the cache needs to build this kernel's pipeline.
    pub fn source(&self) -> KernelSource {
        KernelSource {
            wgsl: Cow::Borrowed(self.wgsl),
            bindings: self.bindings.to_vec(),
        }
    }
}

/// Builds `wgsl` (entry point `main`, no bindings) on `ctx` as kernel `name`, returning the
/// compile error (kernel name, message, source) if any. Useful to check user or generated
/// WGSL before running it; on the CPU context it validates with naga only.
pub fn check_wgsl(ctx: &crate::Context, name: &str, wgsl: &str) -> crate::Result<()> {
    let Some(gpu) = ctx.gpu() else {
        return cache::validate_wgsl(wgsl).map_err(|message| crate::Error::Shader {
            kernel: name.to_string(),
            message,
            wgsl: wgsl.to_string(),
        });
    };
    let key = KernelKey {
        name: Cow::Owned(name.to_string()),
        entry: Cow::Borrowed("main"),
        constants: vec![],
    };
    let source = KernelSource {
        wgsl: Cow::Owned(wgsl.to_string()),
        bindings: vec![],
    };
    gpu.kernels.get(&gpu.device, &key, || Ok(source)).map(|_| ())
}
