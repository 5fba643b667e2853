//! Tensor ops. Each runs its WGSL kernel on a GPU context and its `reference` twin on the
//! CPU context, under one name.

pub mod broadcast;
pub(crate) mod copy;
pub mod elementwise;
pub mod reduce;

pub use broadcast::broadcast_shape;
pub use elementwise::{
    abs, add, binary, div, exp, log, maximum, minimum, mul, neg, pow, relu, sigmoid, sqrt, sub, tanh, unary, BinaryOp,
    UnaryOp,
};
pub use reduce::sum_last;
