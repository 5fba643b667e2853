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
//! Layers, bottom up (a module imports only from its own layer and those below; the order is
//! the table `LAYERS` of `tests/layering.rs`, which checks every import against it):
//! `error`, `shape`, `check` < `kernel`, `tune`, `io` < `context` < `tensor` < `expr` < `reference` <
//! `fused`, `ops` < `plan`, `scan` < `mixer`, `element_scan` < `generate` < `train`, `autograd`, `models` < `parity`.
//!
//! The modules: [`autograd`] (the tape: variables, backward rules, gradients), [`check`] (seeded inputs, compare, the tolerance gates the shipped tests and
//! parity rows share), [`context`] (adapter, device, info, buffer pool, readback, dispatch,
//! the tuning seam), [`element_scan`] (user recurrences compiled to WGSL, with gradients),
//! [`error`] (the one `Error` enum), [`expr`] (the one expression IR: op vocabulary, f64
//! interpreter, WGSL code generator, derivative rules), [`fused`] (elementwise expression
//! graphs compiled into one kernel), [`generate`] (sampling, the device sampler and decode
//! state, the generator over compiled plans for any [`generate::Decoder`]), [`io`] (the
//! safetensors reader and writer), [`kernel`] (WGSL sources and the shader table, pipeline
//! cache, uniform parameters), [`mixer`] (minGRU mixers on the scans, with gradients and
//! their f64 reference), [`models`] (GPT-2 and its reference forward, the character model),
//! [`ops`] (tensor ops), [`parity`] (the parity suite), [`plan`] (captured op sequences
//! replayed in one pass), [`reference`](mod@reference) (the CPU oracle of the ops, f64
//! accumulation), [`scan`] (the four associative scans, forward and backward), [`shape`]
//! (element counts, view layouts, broadcasting, `matmul_shapes`, checked arithmetic, `DType`),
//! [`train`] (loss, optimiser, character vocabulary), [`tune`] (the tuner's modes, shape keys,
//! entries and cache file), [`tensor`] (buffers, views, the strided copy).

#![deny(clippy::unwrap_used, clippy::expect_used)]
#![warn(missing_docs)]

pub mod autograd;
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
    #[doc = include_str!("../docs/src/autograd.md")]
    struct Autograd;
    #[doc = include_str!("../docs/src/training.md")]
    struct Training;
}
