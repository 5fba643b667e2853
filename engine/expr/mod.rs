//! The one expression IR: one op vocabulary ([`Unary`], [`Binary`], [`Reduce`], in `op`),
//! one typed body ([`Body`], built with [`Builder`]), one f64 interpreter ([`Interp`]), one
//! WGSL code generator ([`codegen`]) and one set of derivative rules (`grad`).
//!
//! Everything elementwise lowers here: `ops::unary` / `ops::binary` are one-node
//! [`fused`](crate::fused) graphs, a fused graph is a body without state (its parameters are
//! its inputs), and an [`element_scan`](crate::element_scan) body is a body whose parameter 0
//! is the state carried from trip to trip. Each wraps the generated lines in its own kernel
//! (indexing, loops, stores); the operations themselves are written once.
//!
//! ```
//! use wgsl_compute::expr::{Binary, Body, Interp, Ty, Unary};
//! // f(x, y) = tanh(x * y)
//! let mut b = Body::builder(&[Ty::F32, Ty::F32]);
//! let (x, y) = (b.param(0), b.param(1));
//! let m = b.binary(Binary::Mul, x, y)?;
//! let t = b.unary(Unary::Tanh, m)?;
//! let body = b.finish(t)?;
//! assert_eq!(Interp::new(&body).call(&[&[0.5], &[2.0]])?, &[1f64.tanh()]);
//! // A missing argument is an error, not a panic.
//! assert!(Interp::new(&body).call(&[&[0.5]]).is_err());
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

pub mod codegen;
pub(crate) mod grad;
mod interp;
pub mod ir;
mod op;

pub use interp::Interp;
pub use ir::{Body, Builder, Id, Kind, Node, Op, Ty, MAX_BODY_NODES, MAX_PARAMS, MAX_WIDTH};
pub(crate) use op::{float_binaries, float_unaries};
pub use op::{Binary, Reduce, Unary, Width};
