//! # Layers
//!
//! Layers on the autograd tape with named parameters. A [`VarBuilder`] creates each
//! parameter under a dotted path (`vb.pp("h").pp(0).pp("mlp")` then `"c_fc.weight"` makes
//! `h.0.mlp.c_fc.weight`, Hugging Face's names one to one), drawn from its [`Init`] with the
//! builder's seeded [`Rng`](crate::check::Rng) or taken from a checkpoint; it collects them
//! in a [`ParamStore`](crate::train::ParamStore) for the optimiser and for safetensors.
//! Every layer is a [`Module`]: it lists its [`Param`]s (name and tensor). A forward runs
//! in a [`Pass`]: [`Pass::train`] binds every parameter as a leaf of a fresh tape (its
//! [`Pass::vars`] are what `Optimizer::step_vars` takes), [`Pass::eval`] as constants (no
//! tape, no dropout). Layers hold no tape, so one model serves any number of passes.
//!
//! - [`Linear`]: `x w + b`, w (in, out) as GPT-2's `Conv1D` stores it.
//! - [`Embedding`]: rows of a table by id.
//! - [`LayerNorm`]: over the last axis, with weight and bias.
//! - [`Mlp`]: `c_fc`, an [`Activation`], `c_proj` (GPT-2's MLP).
//! - [`MinGru`]: `in_proj`, a minGRU mixer of any [`MixerKind`](crate::mixer::MixerKind)
//!   on the scans, `out_proj`.
//! - [`Dropout`]: zeroes a fraction of the elements in a training pass, nothing in eval.
//!
//! ```
//! use wgsl_compute::autograd::{Tape, Var};
//! use wgsl_compute::nn::{Activation, Module, Mlp, Pass, VarBuilder};
//! use wgsl_compute::train::{Adam, Optimizer};
//! use wgsl_compute::{Context, Tensor};
//! let ctx = Context::cpu();
//! let vb = VarBuilder::new(&ctx, 0);
//! let mlp = Mlp::new(&vb.pp("mlp"), 2, 8, 1, Activation::Gelu)?;
//! assert_eq!(mlp.param_names(), ["mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"]);
//! let mut adam = Adam::new(&vb.store().tensors(), 1e-2)?;
//! let x = Var::constant(&Tensor::from_slice(&ctx, &[4, 2], &[0., 0., 0., 1., 1., 0., 1., 1.])?); // (4, 2)
//! let y = Var::constant(&Tensor::from_slice(&ctx, &[4, 1], &[0., 1., 1., 0.])?);                 // (4, 1)
//! let tape = Tape::new(&ctx);
//! let pass = Pass::train(&tape, &mlp)?;
//! let d = mlp.forward(&pass, &x)?.sub(&y)?;   // (4, 1)
//! let loss = d.mul(&d)?.mean_all()?;          // ()
//! adam.step_vars(pass.vars(), &loss.backward()?)?;
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

mod builder;
mod dropout;
mod embedding;
mod init;
mod layer_norm;
mod linear;
mod min_gru;
mod mlp;
mod module;
mod pass;

pub use builder::VarBuilder;
pub use dropout::Dropout;
pub use embedding::Embedding;
pub use init::Init;
pub use layer_norm::LayerNorm;
pub use linear::Linear;
pub use min_gru::MinGru;
pub use mlp::{Activation, Mlp};
pub use module::{Module, Param};
pub use pass::Pass;
