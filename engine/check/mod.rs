//! Checking results: seeded random inputs and tolerance comparisons against the reference.
//!
//! Shared by the test suite, the parity example and the benchmarks, so every one of them
//! judges a result the same way: `|got - want| <= atol + rtol * |want|`, elementwise, under
//! a [`Gate`] (the shared ones, each op family's, are in [`gates`]).
//!
//! ```
//! use wgsl_compute::check::{compare, Gate, Rng};
//! let want = Rng::new(7).vec_normal(100, 1.0); // seeded: the same 100 values every run
//! let mut got = want.clone();
//! got[42] += 1e-3;
//! let c = compare(&got, &want, Gate::new(1e-5, 0.0));
//! assert!(!c.ok && c.worst == 42); // the report names the worst element
//! assert!(compare(&got, &want, Gate::new(1e-2, 0.0)).ok);
//! ```

mod compare;
pub mod gates;
mod rng;

pub use compare::{compare, Comparison, Gate};
pub use rng::Rng;
