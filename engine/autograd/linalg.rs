//! Products on variables: `matmul` (batched, broadcast batch axes) and `linear` with its
//! fused epilogues (bias, bias + GELU, bias + residual). The forward runs the fused kernel;
//! the backward is products with the transposed operands (strided views, read in place),
//! summed back over broadcast batch axes, and for GELU the generated derivative of the GELU
//! graph at the recomputed pre-activation. Inside [`super::autocast`] each product reads its
//! operands in the scope's half dtype, forward and backward (the dtype is taken when the op is
//! recorded, so the backward sweep needs no scope).

use super::autocast::{operand, product_dtype};
use super::elementwise::vjp_of;
use super::var::{rule, when, Var};
use crate::element_scan::reduce_to::reduce_to;
use crate::error::{Error, Result};
use crate::fused;
use crate::ops;
use crate::shape::DType;
use crate::tensor::Tensor;

/// The view with the last two axes swapped: (..., M, K) -> (..., K, M).
fn t_last(x: &Tensor) -> Result<Tensor> {
    let r = x.rank();
    x.transpose(r - 2, r - 1)
}

/// The product's operands: `a` and `b` in the autocast dtype when one is open (`super::autocast`),
/// and that dtype, for the backward's products.
fn operands(a: &Tensor, b: &Tensor) -> Result<(Tensor, Tensor, Option<DType>)> {
    let dtype = product_dtype();
    Ok((operand(a, dtype)?, operand(b, dtype)?, dtype))
}

/// The gradients of `x @ w + bias` from g (..., N): dx (..., K), dw (K, N), dbias (N,); x and
/// w as the forward read them, the products in `dtype` as the forward's were.
fn linear_grads(
    x: &Tensor,
    w: &Tensor,
    g: &Tensor,
    need: &[bool],
    dtype: Option<DType>,
) -> Result<Vec<Option<Tensor>>> {
    let (k, n) = (w.shape()[0], w.shape()[1]);
    let m = x.len() / k.max(1);
    let g2 = g.reshape(&[m, n])?; // (M, N)
                                  // (M, N), the products' operand: converted only when a product needs it.
    let gp = if need[0] || need[1] {
        operand(&g2, dtype)?
    } else {
        g2.clone()
    };
    let dx = when(need[0], || ops::matmul(&gp, &w.transpose(0, 1)?)?.reshape(x.shape()))?;
    let dw = when(need[1], || ops::matmul(&x.reshape(&[m, k])?.transpose(0, 1)?, &gp))?;
    let db = when(need.get(2).copied().unwrap_or(false), || reduce_to(&g2, &[n]))?;
    Ok(vec![dx, dw, db])
}

/// Checks w (K, N) for a linear op before the tape records it.
fn check_w(op: &'static str, w: &Var) -> Result<()> {
    if w.shape().len() != 2 {
        return Err(Error::shape(op, "w", "(K, N)", w.shape()));
    }
    Ok(())
}

impl Var {
    /// `self @ b`. (..., M, K) @ (..., K, N) -> (..., M, N), batch axes broadcast.
    pub fn matmul(&self, b: &Var) -> Result<Var> {
        Var::record("matmul", &[self, b], |t| {
            let (a, b, dtype) = operands(t[0], t[1])?;
            let y = ops::matmul(&a, &b)?;
            Ok((
                y,
                rule(move |g, need| {
                    let g = if need[0] || need[1] {
                        operand(g, dtype)?
                    } else {
                        g.clone()
                    };
                    let da = when(need[0], || reduce_to(&ops::matmul(&g, &t_last(&b)?)?, a.shape()))?;
                    let db = when(need[1], || reduce_to(&ops::matmul(&t_last(&a)?, &g)?, b.shape()))?;
                    Ok(vec![da, db])
                }),
            ))
        })
    }

    /// `self @ w + bias` (`ops::linear`). x (..., K), w (K, N), bias (N,) -> (..., N).
    pub fn linear(&self, w: &Var, bias: Option<&Var>) -> Result<Var> {
        check_w("linear", w)?;
        let mut inputs = vec![self, w];
        inputs.extend(bias);
        Var::record("linear", &inputs, |t| {
            let (x, w, dtype) = operands(t[0], t[1])?;
            let y = ops::linear(&x, &w, t.get(2).copied())?;
            Ok((y, rule(move |g, need| linear_grads(&x, &w, g, need, dtype))))
        })
    }

    /// `gelu_tanh(self @ w + bias)` (`ops::linear_gelu`, one fused launch forward).
    /// x (..., K), w (K, N), bias (N,) -> (..., N).
    pub fn linear_gelu(&self, w: &Var, bias: &Var) -> Result<Var> {
        check_w("linear_gelu", w)?;
        Var::record("linear_gelu", &[self, w, bias], |t| {
            let (x, w, dtype) = operands(t[0], t[1])?;
            let y = ops::linear_gelu(&x, &w, Some(t[2]))?;
            let bias = t[2].clone();
            Ok((
                y,
                rule(move |g, need| {
                    let z = ops::linear(&x, &w, Some(&bias))?; // the pre-activation, recomputed
                    let gelu = fused::gelu_graph().body()?;
                    let Some(gz) = vjp_of("linear_gelu", &gelu, &[&z], g, 0)? else {
                        return Ok(vec![None, None, None]);
                    };
                    linear_grads(&x, &w, &gz, need, dtype)
                }),
            ))
        })
    }

    /// `residual + self @ w + bias` (`ops::linear_residual`, one fused launch forward).
    /// x (..., K), w (K, N), bias (N,), residual (..., N) -> (..., N).
    pub fn linear_residual(&self, w: &Var, bias: &Var, residual: &Var) -> Result<Var> {
        check_w("linear_residual", w)?;
        Var::record("linear_residual", &[self, w, bias, residual], |t| {
            let (x, w, dtype) = operands(t[0], t[1])?;
            let y = ops::linear_residual(&x, &w, t[2], &t[3].contiguous()?)?;
            let rs = t[3].shape().to_vec();
            Ok((
                y,
                rule(move |g, need| {
                    let mut grads = linear_grads(&x, &w, g, need, dtype)?;
                    grads.push(when(need[3], || reduce_to(g, &rs))?);
                    Ok(grads)
                }),
            ))
        })
    }
}
