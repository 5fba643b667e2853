//! Products on variables: `matmul` (batched, broadcast batch axes) and `linear` with its
//! fused epilogues (bias, bias + GELU, bias + residual). The forward runs the fused kernel;
//! the backward is products with the transposed operands (strided views, read in place),
//! summed back over broadcast batch axes, and for GELU the generated derivative of the GELU
//! graph at the recomputed pre-activation.

use super::elementwise::vjp_of;
use super::var::{rule, when, Var};
use crate::element_scan::reduce_to::reduce_to;
use crate::error::{Error, Result};
use crate::fused;
use crate::ops;
use crate::tensor::Tensor;

/// The view with the last two axes swapped: (..., M, K) -> (..., K, M).
fn t_last(x: &Tensor) -> Result<Tensor> {
    let r = x.rank();
    x.transpose(r - 2, r - 1)
}

/// The gradients of `x @ w + bias` from g (..., N): dx (..., K), dw (K, N), dbias (N,).
fn linear_grads(x: &Tensor, w: &Tensor, g: &Tensor, need: &[bool]) -> Result<Vec<Option<Tensor>>> {
    let (k, n) = (w.shape()[0], w.shape()[1]);
    let m = x.len() / k.max(1);
    let g2 = g.reshape(&[m, n])?; // (M, N)
    let dx = when(need[0], || ops::matmul(&g2, &w.transpose(0, 1)?)?.reshape(x.shape()))?;
    let dw = when(need[1], || ops::matmul(&x.reshape(&[m, k])?.transpose(0, 1)?, &g2))?;
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
            let y = ops::matmul(t[0], t[1])?;
            let (a, b) = (t[0].clone(), t[1].clone());
            Ok((
                y,
                rule(move |g, need| {
                    let da = when(need[0], || reduce_to(&ops::matmul(g, &t_last(&b)?)?, a.shape()))?;
                    let db = when(need[1], || reduce_to(&ops::matmul(&t_last(&a)?, g)?, b.shape()))?;
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
            let y = ops::linear(t[0], t[1], t.get(2).copied())?;
            let (x, w) = (t[0].clone(), t[1].clone());
            Ok((y, rule(move |g, need| linear_grads(&x, &w, g, need))))
        })
    }

    /// `gelu_tanh(self @ w + bias)` (`ops::linear_gelu`, one fused launch forward).
    /// x (..., K), w (K, N), bias (N,) -> (..., N).
    pub fn linear_gelu(&self, w: &Var, bias: &Var) -> Result<Var> {
        check_w("linear_gelu", w)?;
        Var::record("linear_gelu", &[self, w, bias], |t| {
            let y = ops::linear_gelu(t[0], t[1], Some(t[2]))?;
            let (x, w, bias) = (t[0].clone(), t[1].clone(), t[2].clone());
            Ok((
                y,
                rule(move |g, need| {
                    let z = ops::linear(&x, &w, Some(&bias))?; // the pre-activation, recomputed
                    let gelu = fused::gelu_graph().body()?;
                    let Some(gz) = vjp_of("linear_gelu", &gelu, &[&z], g, 0)? else {
                        return Ok(vec![None, None, None]);
                    };
                    linear_grads(&x, &w, &gz, need)
                }),
            ))
        })
    }

    /// `residual + self @ w + bias` (`ops::linear_residual`, one fused launch forward).
    /// x (..., K), w (K, N), bias (N,), residual (..., N) -> (..., N).
    pub fn linear_residual(&self, w: &Var, bias: &Var, residual: &Var) -> Result<Var> {
        check_w("linear_residual", w)?;
        Var::record("linear_residual", &[self, w, bias, residual], |t| {
            let y = ops::linear_residual(t[0], t[1], t[2], &t[3].contiguous()?)?;
            let (x, w, rs) = (t[0].clone(), t[1].clone(), t[3].shape().to_vec());
            Ok((
                y,
                rule(move |g, need| {
                    let mut grads = linear_grads(&x, &w, g, need)?;
                    grads.push(when(need[3], || reduce_to(g, &rs))?);
                    Ok(grads)
                }),
            ))
        })
    }
}
