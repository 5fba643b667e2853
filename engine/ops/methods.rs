//! The ops as methods on [`Tensor`]: `x.matmul(&w)?`, `x.exp()?`, `x.add(&y)?`,
//! `x.add_scalar(1.0)?`, `x.sum_all()?`. Each method is one call of the op of the same name
//! in [`crate::ops`] (whose docs hold the shapes, broadcasting and kernels); nothing here
//! computes anything itself. They live in the ops layer, not in `tensor`, because a tensor
//! sits below the ops it would otherwise have to import.
//!
//! ```
//! use wgsl_compute::{Context, Tensor};
//! let ctx = Context::cpu(); // or Context::new()? for the GPU the environment picks
//! let x = Tensor::from_slice(&ctx, &[2, 2], &[0., 1., 2., 3.])?;   // (2, 2)
//! let y = x.exp()?.add_scalar(1.0)?.log()?;                          // log(1 + e^x)
//! let s = x.softplus()?;                                             // the same, stable
//! let d = y.sub(&s)?.abs()?.sum_all()?.to_vec()?;
//! assert!(d[0] < 1e-5);
//! assert_eq!(x.gt_scalar(1.5)?.to_vec()?, vec![0., 0., 1., 1.]);    // comparisons: 1.0 / 0.0
//! assert_eq!(x.mean_all()?.to_vec()?, vec![1.5]);
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

use super::{elementwise, matmul, reduce};
use crate::error::Result;
use crate::expr::{Binary, Unary};
use crate::tensor::Tensor;

macro_rules! binary_methods {
    ($($name:ident => $op:ident),* $(,)?) => {$(
        #[doc = concat!("`ops::", stringify!($name), "(self, rhs)`: elementwise with numpy broadcasting. ",
            "self (...a), rhs (...b) -> (broadcast shape).")]
        pub fn $name(&self, rhs: &Tensor) -> Result<Tensor> {
            elementwise::binary(Binary::$op, self, rhs)
        }
    )*};
}

macro_rules! scalar_methods {
    ($($name:ident => $op:ident),* $(,)?) => {$(
        #[doc = concat!("`ops::binary_scalar(", stringify!($op), ", self, s)`: `", stringify!($op),
            "` of each element and the scalar `s` (a constant of the kernel; see `ops::binary_scalar`). ",
            "self (...) -> (...).")]
        pub fn $name(&self, s: f32) -> Result<Tensor> {
            elementwise::binary_scalar(Binary::$op, self, s)
        }
    )*};
}

macro_rules! unary_methods {
    ($($name:ident => $op:ident),* $(,)?) => {$(
        #[doc = concat!("`ops::", stringify!($name), "(self)`: elementwise. self (...) -> (...) dense.")]
        pub fn $name(&self) -> Result<Tensor> {
            elementwise::unary(Unary::$op, self)
        }
    )*};
}

/// Elementwise ops, with a tensor or a scalar operand.
impl Tensor {
    crate::expr::float_binaries!(binary_methods);
    binary_methods!(lt => Lt, le => Le, gt => Gt, ge => Ge, eq => Eq, ne => Ne);
    scalar_methods!(
        add_scalar => Add, sub_scalar => Sub, mul_scalar => Mul, div_scalar => Div, pow_scalar => Pow,
        maximum_scalar => Max, minimum_scalar => Min,
    );
    scalar_methods!(lt_scalar => Lt, le_scalar => Le, gt_scalar => Gt, ge_scalar => Ge, eq_scalar => Eq, ne_scalar => Ne);
    crate::expr::float_unaries!(unary_methods);

    /// `ops::gelu(self)`: GELU, tanh form. self (...) -> (...).
    pub fn gelu(&self) -> Result<Tensor> {
        super::gelu(self)
    }

    /// `ops::where_(cond, self, other)`: self where `cond` is non-zero, else `other` (torch's
    /// `x.where(cond, y)`). self, cond, other broadcast -> (broadcast shape).
    pub fn where_(&self, cond: &Tensor, other: &Tensor) -> Result<Tensor> {
        elementwise::where_(cond, self, other)
    }
}

/// Products, reductions, joins and copies.
impl Tensor {
    /// `ops::matmul(self, rhs)`. self (..., M, K), rhs (..., K, N) -> (..., M, N).
    pub fn matmul(&self, rhs: &Tensor) -> Result<Tensor> {
        matmul::matmul(self, rhs)
    }

    /// `ops::linear(self, w, bias)`: `self @ w + bias`. self (..., K), w (K, N), bias (N,)
    /// -> (..., N).
    pub fn linear(&self, w: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        matmul::linear(self, w, bias)
    }

    /// `ops::linear_gelu(self, w, bias)`: `gelu(self @ w + bias)`. self (..., K), w (K, N),
    /// bias (N,) -> (..., N).
    pub fn linear_gelu(&self, w: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        matmul::linear_gelu(self, w, bias)
    }

    /// `ops::sum_all(self)`: the sum of every element. self (...) -> ().
    pub fn sum_all(&self) -> Result<Tensor> {
        reduce::sum_all(self)
    }

    /// `ops::mean_all(self)`: the mean of every element. self (...) -> ().
    pub fn mean_all(&self) -> Result<Tensor> {
        reduce::mean_all(self)
    }

    /// `ops::sum_last(self)`: sums along the last axis. self (..., n) -> (...).
    pub fn sum_last(&self) -> Result<Tensor> {
        reduce::sum_last(self)
    }

    /// `ops::mean_last(self)`: means along the last axis. self (..., n) -> (...).
    pub fn mean_last(&self) -> Result<Tensor> {
        reduce::mean_last(self)
    }

    /// `ops::softmax_last(self, None)`: softmax along the last axis. self (..., n) -> (..., n).
    pub fn softmax_last(&self) -> Result<Tensor> {
        super::softmax_last(self, None)
    }

    /// `ops::argmax_last(self)`: the index of each row's largest element. self (..., n) -> (...).
    pub fn argmax_last(&self) -> Result<Tensor> {
        super::argmax_last(self)
    }

    /// `ops::cat(tensors, axis)`: the tensors joined along `axis`.
    /// `tensors[i]` (..., n_i, ...) -> (..., sum n_i, ...).
    pub fn cat(tensors: &[&Tensor], axis: usize) -> Result<Tensor> {
        super::cat(tensors, axis)
    }

    /// `ops::copy_into(self, src)`: writes `src` (same shape) into this view, in place.
    pub fn copy_from(&self, src: &Tensor) -> Result<()> {
        super::copy_into(self, src)
    }
}
