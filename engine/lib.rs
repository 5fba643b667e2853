//! # wgsl-compute
//!
//! A portable GPU compute engine: every kernel is a WGSL compute shader run through wgpu, so
//! the same code runs on Vulkan, Metal, DX12, OpenGL and, compiled to wasm, in a browser
//! over WebGPU.
//!
//! ```no_run
//! use wgsl_compute::{Context, Tensor, ops};
//! let ctx = Context::new()?;                       // ENGINE_BACKEND / WGPU_ADAPTER_NAME
//! let a = Tensor::from_slice(&ctx, &[2, 3], &[1., 2., 3., 4., 5., 6.])?;
//! let b = Tensor::from_slice(&ctx, &[3], &[10., 20., 30.])?;
//! let c = ops::add(&a, &b)?;                       // (2, 3) + (3,) -> (2, 3)
//! assert_eq!(ops::sum_last(&c)?.to_vec()?, vec![66., 75.]);
//! # Ok::<(), wgsl_compute::Error>(())
//! ```
//!
//! Layout, bottom up (a module imports only from those below it; `tests/layering.rs` checks
//! the folder graph has no cycle): [`shape`] (element counts, view layouts, broadcasting,
//! `matmul_shapes`, checked arithmetic), [`check`] (seeded inputs, the table of tolerance
//! gates), [`kernel`] (WGSL sources and the shader table, pipeline cache, uniform parameters),
//! [`tune`] (the tuner's modes, shape keys, entries and cache file), [`io`] (the safetensors
//! reader and writer), [`context`] (adapter, device, info, buffer pool, readback, dispatch,
//! the tuning seam), [`tensor`] (buffers,
//! views, the strided copy), [`expr`] (the one expression IR: op vocabulary, f64
//! interpreter, WGSL code generator, derivative rules), [`reference`](mod@reference) (the CPU
//! oracle of the ops, f64 accumulation), [`fused`] (elementwise expression graphs compiled into one kernel), [`ops`]
//! (tensor ops), [`plan`] (captured op sequences replayed in one pass), [`scan`] (the four
//! associative scans, forward and backward), [`mixer`] (minGRU mixers on the scans, with
//! gradients and their f64 reference), [`element_scan`] (user recurrences compiled to WGSL,
//! with gradients), [`generate`] (sampling, the device sampler and decode state, the
//! generator over compiled plans for any [`generate::Decoder`]), [`train`] (loss, optimiser, character vocabulary), [`models`] (GPT-2 and
//! its reference forward, the character model), [`parity`] (the parity suite).

#![deny(clippy::unwrap_used, clippy::expect_used)]
#![warn(missing_docs)]

pub mod check;
pub mod context;
pub mod element_scan;
pub mod error;
pub mod expr;
pub mod fused;
pub mod generate;
pub mod io;
pub mod kernel;
pub mod mixer;
pub mod models;
pub mod ops;
pub mod parity;
pub mod plan;
pub mod reference;
pub mod scan;
pub mod shape;
pub mod tensor;
pub mod train;
pub mod tune;

pub use context::{Context, DeviceInfo, DeviceKind};
pub use error::{Error, Result};
pub use shape::DType;
pub use tensor::Tensor;

/// The README's and the book's Rust snippets, compiled and run as doctests (`cargo test
/// --doc`): the chapters that hold runnable ones (fragments over tensors named in their
/// comments are marked `ignore` there).
#[cfg(doctest)]
mod book {
    #[doc = include_str!("../README.md")]
    struct Readme;
    #[doc = include_str!("../docs/src/getting-started.md")]
    struct GettingStarted;
    #[doc = include_str!("../docs/src/tensors.md")]
    struct Tensors;
    #[doc = include_str!("../docs/src/plans.md")]
    struct Plans;
    #[doc = include_str!("../docs/src/scans.md")]
    struct Scans;
    #[doc = include_str!("../docs/src/element-scans.md")]
    struct ElementScans;
}
