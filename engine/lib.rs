//! # wgsl-compute
//!
//! A portable GPU compute engine: every kernel is a WGSL compute shader run through wgpu, so
//! the same code runs on Vulkan, Metal, DX12, OpenGL and, compiled to wasm, in a browser
//! over WebGPU. Without a GPU, [`Context::cpu`] runs every op on its f64-accumulating CPU
//! reference.
//!
//! ## A first computation
//!
//! ```no_run
//! use wgsl_compute::{Context, Tensor};
//! let ctx = Context::new()?;                       // ENGINE_BACKEND / WGPU_ADAPTER_NAME
//! let a = Tensor::from_slice(&ctx, &[2, 3], &[1., 2., 3., 4., 5., 6.])?;
//! let b = Tensor::from_slice(&ctx, &[3], &[10., 20., 30.])?;
//! let c = a.add(&b)?;                              // (2, 3) + (3,) -> (2, 3), broadcast
//! assert_eq!(c.sum_last()?.to_vec()?, vec![66., 75.]); // reading back: the one wait
//! let y = a.exp()?.add_scalar(1.0)?.log()?;        // methods chain; scalars need no tensor
//! let z = a.softplus()?;                           // the same, stable at x = 1000
//! assert!(y.sub(&z)?.abs()?.sum_all()?.to_vec()?[0] < 1e-4);
//! # Ok::<(), wgsl_compute::Error>(())
//! ```
//!
//! Every method is one op of [`ops`] (`x.exp()` is `ops::exp(&x)`); the free functions stay
//! for generic code. [`Tensor::randn`] / [`Tensor::rand`] make seeded inputs, [`Tensor::cat`]
//! joins, [`Tensor::where_`] selects, [`Tensor::write`] overwrites a tensor in place.
//!
//! ## Write a layer
//!
//! A layer is a function of tensors; captured once as a [`plan::Plan`], it replays with no
//! host work, and its input is rewritten in place between replays:
//!
//! ```no_run
//! use wgsl_compute::{plan::Plan, Context, Tensor};
//! let ctx = Context::new()?;
//! let (w1, b1) = (Tensor::randn(&ctx, &[64, 256], 1)?.mul_scalar(0.125)?, Tensor::zeros(&ctx, &[256])?);
//! let w2 = Tensor::randn(&ctx, &[256, 64], 2)?.mul_scalar(0.0625)?;
//! // x (T, 64) -> (T, 64): a GELU MLP with a residual.
//! let mlp = |x: &Tensor| x.linear_gelu(&w1, Some(&b1))?.matmul(&w2)?.add(x);
//! let x = Tensor::randn(&ctx, &[8, 64], 3)?;
//! let (plan, y) = Plan::capture(&ctx, &[&x, &w1, &b1, &w2], || mlp(&x))?;
//! plan.replay(&ctx)?;                              // y holds mlp(x)
//! let first = y.to_vec()?;
//! x.write(&vec![0.5; 8 * 64])?;                    // a new input, same buffer
//! plan.replay(&ctx)?;                              // y holds mlp(new x)
//! # let _ = first;
//! # Ok::<(), wgsl_compute::Error>(())
//! ```
//!
//! ## Stream GPT-2
//!
//! ```no_run
//! use wgsl_compute::models::gpt2::{Gpt2, TextStream, Tokenizer};
//! use wgsl_compute::generate::{Generate, Sampling};
//! use wgsl_compute::models::Shipped;
//! let ctx = wgsl_compute::Context::new()?;
//! let model = Gpt2::new(&ctx, &Shipped::Shakespeare.weights()?)?;
//! let tok = Tokenizer::gpt2()?;
//! let mut text = TextStream::new(tok);             // never splits a UTF-8 character
//! model.generate(&tok.encode("ROMEO:"), 40, Sampling::recommended(3), |id| {
//!     print!("{}", text.push(id).unwrap_or_default());
//! })?;
//! println!("{}", text.finish());
//! # Ok::<(), wgsl_compute::Error>(())
//! ```
//!
//! The crate re-exports what a program needs beside it at matching versions:
//! [`wgpu`] (to share a device, [`Context::from_wgpu`]), [`ndarray`] (`Tensor::from_array`,
//! `to_array`) and, natively, `pollster` (to block on the `*_async` calls).
//!
//! ## The crate
//!
//! Layers, bottom up (a module imports only from its own layer and those below; the order is
//! the table `LAYERS` of `tests/layering.rs`, which checks every import against it):
//! `error`, `shape`, `check` < `kernel`, `tune`, `io` < `context` < `recurrence` < `tensor` < `expr` < `reference` <
//! `fused`, `ops` < `plan`, `scan` < `mixer`, `element_scan` < `generate` < `train`, `autograd`, `nn`, `models` < `parity`.
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
//! [`nn`] (layers on the tape with named parameters: `Linear`, `Embedding`, `LayerNorm`,
//! `Mlp`, `MinGru`, `Dropout`, the `VarBuilder` that names and initialises them),
//! [`ops`] (tensor ops, and the same ops as methods on [`Tensor`]), [`parity`] (the parity
//! suite), [`plan`] (captured op sequences replayed in one pass), [`recurrence`] (what every
//! recurrence kernel shares: the walk plans, the one launch, the look-back protocol, the WGSL
//! prelude and chunk/carry skeleton; a new scan kernel's launch lives here),
//! [`reference`](mod@reference)
//! (the CPU oracle of the ops, f64 accumulation), [`scan`] (the four associative scans,
//! forward and backward), [`shape`] (element counts, view layouts, broadcasting,
//! `matmul_shapes`, checked arithmetic, `DType`), [`train`] (loss, optimiser, character
//! vocabulary), [`tune`] (the tuner's modes, shape keys, entries and cache file), [`tensor`]
//! (buffers, views, the strided copy, in-place writes, seeded random tensors).

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
pub mod nn;
pub mod ops;
#[cfg(feature = "parity")]
pub mod parity;
pub mod plan;
pub mod recurrence;
pub mod reference;
pub mod scan;
pub mod shape;
pub mod tensor;
pub mod train;
pub mod tune;

pub use check::Rng;
pub use context::{Context, DeviceInfo, DeviceKind};
pub use error::{Error, Result};
pub use expr::{Binary, Unary};
pub use shape::DType;
pub use tensor::Tensor;

/// The ndarray of [`Tensor::from_array`] and `Tensor::to_array`.
pub use ndarray;
/// The executor the blocking calls use, for the `*_async` ones (native only).
#[cfg(not(target_arch = "wasm32"))]
pub use pollster;
/// The wgpu this crate is built on (for [`Context::from_wgpu`] and `Tensor::wgpu_buffer`).
pub use wgpu;

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
    #[doc = include_str!("../docs/src/build-a-model.md")]
    struct BuildAModel;
    #[doc = include_str!("../docs/src/gpt2.md")]
    struct Gpt2;
}
