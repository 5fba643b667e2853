//! Tensor ops. Each runs its WGSL kernel on a GPU context and its `reference` twin on the
//! CPU context, under one name.
//!
//! Fusion inside an op stays with the op: the matmul's bias, GELU and residual epilogue in
//! [`matmul`](mod@matmul) (its kernels' shared uniform), the projection fused with the residual add and
//! the next layer norm in [`layer_norm`](mod@layer_norm) ([`linear_residual_layer_norm`]). Elementwise
//! compositions are not ops written here but graphs that [`crate::fused`] generates; a kernel
//! only one model uses belongs to that model. The rule, and the five places it puts the
//! engine's fused kernels, is in [`crate::fused`]'s docs ("Where a fused kernel belongs").
//!
//! ```
//! use wgsl_compute::{ops, Context, Tensor};
//! let ctx = Context::cpu(); // or Context::new()? for the GPU the environment picks
//! let x = Tensor::from_slice(&ctx, &[2, 3], &[1., 2., 3., 4., 5., 6.])?;   // (2, 3)
//! let w = Tensor::from_slice(&ctx, &[3, 1], &[1., 0., -1.])?;              // (3, 1)
//! assert_eq!(ops::matmul(&x, &w)?.to_vec()?, vec![-2., -2.]);               // (2, 1)
//! let p = ops::softmax_last(&x, None)?;                                     // rows sum to 1
//! let s = ops::sum_last(&p)?.to_vec()?;
//! assert!(s.iter().all(|v| (v - 1.0).abs() < 1e-6));
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

pub mod argmax;
pub mod attention;
pub mod cat;
pub mod cross_entropy;
pub mod elementwise;
pub mod embedding;
pub mod gelu;
mod ids;
pub mod layer_norm;
pub mod matmul;
mod methods;
pub mod reduce;
pub mod rms_norm;
pub mod rope;
pub mod softmax;

pub use crate::tensor::copy_into;
pub use argmax::argmax_last;
pub use attention::{attention, attention_with, AttentionPath};
pub use cat::cat;
pub use cross_entropy::{cross_entropy, CrossEntropy};
// Every function of `elementwise`: binary, unary, where_ and the named ops of the one table
// (`expr::float_unaries`, `float_binaries`) and the comparisons.
pub use elementwise::*;
pub use embedding::{embedding, embedding_backward};
pub use gelu::gelu;
pub use ids::Ids;
pub use layer_norm::{layer_norm, layer_norm_backward, linear_residual_layer_norm};
pub use matmul::{linear, linear_gelu, linear_residual, matmul, matmul_with, tune_matmul, MatmulPath};
pub use reduce::{mean_all, mean_last, sum_all, sum_last};
pub use rms_norm::{rms_norm, rms_norm_backward};
pub use rope::{rope, rope_adjoint, swiglu};
pub use softmax::{softmax_backward, softmax_last};
