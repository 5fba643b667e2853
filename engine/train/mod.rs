//! # Training
//!
//! What training a model on the engine needs beyond the gradients (the autograd tape,
//! [`crate::autograd`], or the mixers' own backward, [`crate::mixer`]): optimisers updating
//! parameters in place ([`optim`]: [`Sgd`], [`Adam`] and AdamW, [`clip_grad_norm`]), the
//! parameters as a named map saved to safetensors ([`ParamStore`]), softmax cross-entropy
//! with its gradient in one launch ([`cross_entropy()`]) and a character vocabulary
//! ([`CharVocab`]), a whole step captured as a plan ([`CompiledStep`]), seeded shuffled
//! mini-batches ([`Batches`]) and learning-rate schedules ([`LrSchedule`]: warm-up, cosine).
//! Mixed precision: the products of a forward inside `autograd::autocast` run in F16 or BF16
//! against f32 master weights; an F16 step scales its loss ([`LossScaler`]).
//! An optimiser's state saves beside the parameters and loads back for an exact resume
//! ([`Optimizer::save_state`]).
//! `models::CharModel` and `examples/train_mingru.rs` put them together; the book's training
//! chapter trains on the tape.

mod compiled;
mod data;
mod loss_scale;
pub mod optim;
mod params;
mod schedule;
mod vocab;

// Cross-entropy is a tensor op (below autograd, which records it); re-exported here for
// the training code that calls it by this path.
pub use crate::ops::{cross_entropy, CrossEntropy};
pub use compiled::CompiledStep;
pub use data::{gather_rows, Batches};
pub use loss_scale::LossScaler;
#[cfg(not(target_arch = "wasm32"))]
pub use optim::clip_grad_norm;
pub use optim::{clip_grad_norm_tensor, Adam, Optimizer, Sgd};
pub use params::ParamStore;
pub use schedule::LrSchedule;
pub use vocab::CharVocab;
