//! Models built on the engine's tensor ops: GPT-2 ([`gpt2`], inference, with its f64
//! reference forward), a Llama-style decoder ([`llama`]) and a character-level language
//! model of residual minGRU mixer layers ([`char_model`], trained with [`crate::train`]).
//! [`Shipped`] finds the models that ship with the crate from any working directory.

pub mod char_model;
pub mod gpt2;
pub mod llama;

pub use char_model::{random_windows, CharModel, CharModelConfig, LossAndGrads, MAX_WINDOW_IDS};
pub use gpt2::Shipped;
