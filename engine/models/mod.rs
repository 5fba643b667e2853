//! Models built on the engine's tensor ops.

pub mod gpt2;
