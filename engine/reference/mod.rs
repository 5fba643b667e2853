//! CPU reference implementations: the oracle of every test and the CPU context's backend.
//!
//! Each takes and returns f32 `ndarray` arrays and accumulates in f64 where it matters.
//! The oracles of ops sit here, just above the shape layer (they import nothing above it but
//! the op vocabulary); composites keep theirs beside them: `mixer::reference` and
//! `models::gpt2::reference`.

pub mod elementwise;
pub mod matmul;
pub mod nn;
pub mod reduce;
pub mod scan;
