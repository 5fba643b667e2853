//! # Autograd
//!
//! Reverse-mode differentiation over the engine's own ops. A [`Tape`] records, in the order
//! they run, the ops applied to its variables ([`Var`]), each with its backward rule;
//! [`Var::backward`] sweeps the tape in reverse and returns [`Grads`], keyed by variable.
//! Nothing is recorded unless asked: plain [`Tensor`](crate::Tensor) ops never see a tape,
//! ops on constants ([`Var::constant`], [`Var::detach`]) and ops inside [`no_grad`] return
//! constants. The forward and every rule run the engine's ops, so the same code runs on a
//! GPU context and on the CPU reference context.
//!
//! The rules: elementwise bodies get their backward from the expression IR's derivative
//! rules, compiled like any fused graph (`elementwise`); gradients of broadcast inputs are
//! summed over the broadcast axes; products, row ops, attention, embedding, views,
//! cross-entropy and the recurrences each have theirs (`linalg`, `rows`, `nn`, `views`,
//! `scans`). A new op is one [`Var::record`] call: its forward and a [`rule`] closure; an op
//! made of other ops records under its own name with [`Var::composite`].
//!
//! Mixed precision: products recorded inside [`autocast`] run in F16 or BF16 with f32
//! accumulation, the parameters and every other op staying f32 (`autocast`'s module says
//! which ops; `train::LossScaler` scales an F16 step's loss).
//!
//! The tape reads like the math: scalar operands (`x.rsub_scalar(1.0)` is `1 - x`, no
//! constant tensor needed), every unary op of the tensors (`softplus`, `sigmoid`, ...), and
//! `std::ops` returning `Result` as candle's do (`operators`):
//!
//! ```
//! use wgsl_compute::autograd::{Tape, Var};
//! use wgsl_compute::{Context, Tensor};
//! let ctx = Context::cpu();
//! let tape = Tape::new(&ctx);
//! let z = tape.var(&Tensor::from_slice(&ctx, &[2], &[0.25, 0.5])?)?; // (2,)
//! let h = tape.var(&Tensor::from_slice(&ctx, &[2], &[1.0, 2.0])?)?;  // (2,)
//! let mixed = ((1.0 - &z)? * &h)?;                      // (1 - z) h, (2,)
//! let loss = (&mixed.softplus()? * 0.5)?.sum_all()?;     // ()
//! assert!(loss.item()? > 0.0);
//! let w = Var::constant(&Tensor::zeros(&ctx, &[3])?);    // (3,)
//! assert!((&z + &w).is_err());                           // (2,) + (3,): an error, no panic
//! # Ok::<(), wgsl_compute::Error>(())
//! ```
//!
//! ```
//! use wgsl_compute::autograd::{no_grad, Tape, Var};
//! use wgsl_compute::{Context, Tensor};
//! let ctx = Context::cpu(); // or Context::new()? for the GPU the environment picks
//! let tape = Tape::new(&ctx);
//! let x = Var::constant(&Tensor::from_slice(&ctx, &[2, 3], &[1., 2., 3., 4., 5., 6.])?); // (2, 3)
//! let w = tape.var(&Tensor::from_slice(&ctx, &[3, 1], &[0.1, 0.2, 0.3])?)?;             // (3, 1)
//! let b = tape.var(&Tensor::from_slice(&ctx, &[1], &[0.5])?)?;                          // (1,)
//! let y = x.matmul(&w)?.add(&b)?.tanh()?;                     // (2, 1), b broadcast
//! let loss = y.sum_all()?;                                    // ()
//! let grads = loss.backward()?;
//! assert_eq!(grads.get(&w).unwrap().shape(), &[3, 1]);        // dL/dw
//! assert_eq!(grads.get(&b).unwrap().shape(), &[1]);           // summed over the rows
//! assert!(grads.get(&x).is_none());                           // a constant
//! assert!(loss.backward().is_err());                          // the tape was freed
//! let z = no_grad(|| w.exp())?;                               // not recorded
//! assert!(!z.is_variable());
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

mod autocast;
mod elementwise;
mod linalg;
mod nn;
mod operators;
mod rows;
mod scalar;
mod scans;
mod tape;
mod var;
mod views;

pub use autocast::autocast;
pub use nn::HEAD_BLOCK_BYTES;
pub use tape::{is_recording, no_grad, Grads, Rule, RuleFn, Tape};
pub use var::{rule, when, Var};
