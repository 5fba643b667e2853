//! Checking results: seeded random inputs and tolerance comparisons against the reference.
//!
//! Shared by the test suite, the parity example and the benchmarks, so every one of them
//! judges a result the same way: `|got - want| <= atol + rtol * |want|`, elementwise.

mod compare;
mod rng;

pub use compare::{compare, Comparison, Gate};
pub use rng::Rng;
