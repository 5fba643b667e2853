//! # Training
//!
//! What training a small recurrent language model on the engine needs beyond the mixers'
//! own backward ([`crate::mixer`]): softmax cross-entropy with its gradient in one launch
//! ([`cross_entropy`]), Adam updating parameters in place ([`Adam`]) and a character
//! vocabulary ([`CharVocab`]). The model they train is `models::CharModel`;
//! `examples/train_mingru.rs` puts them together.

mod adam;
mod cross_entropy;
mod vocab;

pub use adam::Adam;
pub use cross_entropy::{cross_entropy, CrossEntropy};
pub use vocab::CharVocab;
