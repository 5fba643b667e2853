//! CPU reference implementations: the oracle of every test and the CPU context's backend.
//!
//! Each takes and returns f32 `ndarray` arrays and accumulates in f64 where it matters.

pub mod elementwise;
pub mod gpt2;
pub mod matmul;
pub mod mixer;
pub mod nn;
pub mod reduce;
pub mod scan;
