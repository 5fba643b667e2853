//! Tensor ops. Each runs its WGSL kernel on a GPU context and its `reference` twin on the
//! CPU context, under one name.

pub mod argmax;
pub mod attention;
pub mod broadcast;
pub mod copy;
pub mod elementwise;
pub mod embedding;
pub mod gelu;
pub mod layer_norm;
pub mod matmul;
pub mod reduce;
pub mod softmax;

pub use argmax::argmax_last;
pub use attention::{attention, attention_with, AttentionPath};
pub use broadcast::broadcast_shape;
pub use copy::copy_into;
pub use elementwise::{
    abs, add, binary, div, exp, log, maximum, minimum, mul, neg, pow, relu, sigmoid, sqrt, sub, tanh, unary, BinaryOp,
    UnaryOp,
};
pub use embedding::embedding;
pub use gelu::gelu;
pub use layer_norm::layer_norm;
pub use matmul::{linear, linear_gelu, linear_residual, matmul, matmul_with, MatmulPath};
pub use reduce::sum_last;
pub use softmax::softmax_last;
