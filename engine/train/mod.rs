//! # Training
//!
//! What training a small recurrent language model on the engine needs beyond the mixers'
//! own backward ([`crate::mixer`]): softmax cross-entropy with its gradient in one launch
//! ([`cross_entropy`]), Adam updating parameters in place ([`Adam`]), a character vocabulary
//! ([`CharVocab`]) and a character-level model of residual mixer layers with its explicit
//! backward chain ([`CharModel`]). `examples/train_mingru.rs` puts them together.

mod adam;
mod char_model;
mod cross_entropy;
mod vocab;

pub use adam::Adam;
pub use char_model::{random_windows, CharModel, CharModelConfig, LossAndGrads};
pub use cross_entropy::{cross_entropy, CrossEntropy};
pub use vocab::CharVocab;
