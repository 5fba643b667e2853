//! Row ops on variables (the last axis): sum, softmax, layer norm, RMS norm, and the
//! whole-tensor sum built from them. Each backward is composed of the engine's tensor ops;
//! the two norms' backward is one launch (`ops::layer_norm_backward`, `ops::rms_norm_backward`)
//! and the column sums for their weights.

use super::var::{rule, when, Var};
use crate::element_scan::reduce_to::{broadcast_to, reduce_to};
use crate::error::{Error, Result};
use crate::ops;
use crate::tensor::Tensor;

/// `x (..., n)` -> its shape with the last axis 1, `(..., 1)`: a row value kept for broadcast.
fn keep_last(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let mut s = shape.to_vec();
    if let Some(last) = s.last_mut() {
        *last = 1;
    }
    x.reshape(&s)
}

impl Var {
    /// Sum along the last axis. (..., n) -> (...).
    pub fn sum_last(&self) -> Result<Var> {
        Var::record("sum_last", &[self], |t| {
            let y = ops::sum_last(t[0])?;
            let shape = t[0].shape().to_vec();
            Ok((
                y,
                rule(move |g, need| {
                    // Every element of a row gets the row's gradient: (...) -> (..., n).
                    Ok(vec![when(need[0], || {
                        broadcast_to(&keep_last(g, &shape)?, &shape)?.contiguous()
                    })?])
                }),
            ))
        })
    }

    /// Sum of every element: reshape to (len,) and sum the row. (...) -> ().
    pub fn sum_all(&self) -> Result<Var> {
        Var::composite("sum_all", || self.reshape(&[self.tensor().len()])?.sum_last())
    }

    /// Softmax over the last axis, optionally causal (see `ops::softmax_last`).
    /// (..., n) -> (..., n). dx = y * (g - sum_last(g * y)).
    pub fn softmax_last(&self, causal: Option<usize>) -> Result<Var> {
        Var::record("softmax_last", &[self], |t| {
            let y = ops::softmax_last(t[0], causal)?;
            let saved = y.clone();
            Ok((
                y,
                rule(move |g, need| Ok(vec![when(need[0], || ops::softmax_backward(&saved, g))?])),
            ))
        })
    }

    /// Layer norm over the last axis with gamma, beta (n,) (see `ops::layer_norm`).
    /// x (..., n) -> (..., n). With xhat = (x - mean) rstd and dxhat = g gamma:
    /// dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), dgamma = sum(g xhat),
    /// dbeta = sum(g) over every row.
    pub fn layer_norm(&self, gamma: &Var, beta: &Var, eps: f32) -> Result<Var> {
        Var::record("layer_norm", &[self, gamma, beta], |t| {
            let y = ops::layer_norm(t[0], t[1], t[2], eps)?;
            let (x, gamma) = (t[0].clone(), t[1].clone());
            Ok((
                y,
                rule(move |g, need| {
                    let n = gamma.shape().to_vec();
                    // dx and g xhat in one launch (`ops::layer_norm_backward`), then the
                    // column sums for gamma and beta.
                    let (dx, gxhat) = ops::layer_norm_backward(&x, &gamma, &g.contiguous()?, eps)?;
                    let dx = when(need[0], || Ok(dx))?;
                    let dgamma = when(need[1], || reduce_to(&gxhat, &n))?;
                    let dbeta = when(need[2], || reduce_to(g, &n))?;
                    Ok(vec![dx, dgamma, dbeta])
                }),
            ))
        })
    }
}

impl Var {
    /// RMS norm over the last axis with weight (n,) (see `ops::rms_norm`). x (..., n) ->
    /// (..., n). With rstd = 1 / sqrt(mean(x^2) + eps) and gw = g weight:
    /// dx = rstd (gw - x rstd^2 mean(gw x)), dweight = sum(g x rstd) over every row.
    pub fn rms_norm(&self, weight: &Var, eps: f32) -> Result<Var> {
        Var::record("rms_norm", &[self, weight], |t| {
            let y = ops::rms_norm(t[0], t[1], eps)?;
            let (x, weight) = (t[0].clone(), t[1].clone());
            Ok((
                y,
                rule(move |g, need| {
                    let n = weight.shape().to_vec();
                    // dx and g x rstd in one launch (`ops::rms_norm_backward`), then the
                    // column sums for the weight.
                    let (dx, gxhat) = ops::rms_norm_backward(&x, &weight, &g.contiguous()?, eps)?;
                    let dx = when(need[0], || Ok(dx))?;
                    let dweight = when(need[1], || reduce_to(&gxhat, &n))?;
                    Ok(vec![dx, dweight])
                }),
            ))
        })
    }
}

impl Var {
    /// The index of each row's largest element (`ops::argmax_last`), as f32. (..., n) ->
    /// (...). Recorded without a gradient: a backward that reaches it fails with
    /// `Error::NoGradient`; detach it to use it as a constant.
    pub fn argmax_last(&self) -> Result<Var> {
        Var::record_without_rule("argmax_last", &[self], |t| ops::argmax_last(t[0]))
    }
}

impl Var {
    /// The mean of every element (`ops::mean_all`). (...) -> (). Its gradient spreads dL/d
    /// mean evenly: 1/n to each element. An empty variable is an error, as for the op.
    pub fn mean_all(&self) -> Result<Var> {
        let n = self.tensor().len();
        if n == 0 {
            return Err(Error::shape("mean_all", "x", "at least one element", self.shape()));
        }
        Var::composite("mean_all", || self.sum_all()?.scale(1.0 / n as f32))
    }

    /// The mean over the last axis (`ops::mean_last`). (..., n) -> (...). A rank-0 variable
    /// or an empty last axis is an error, as for the op.
    pub fn mean_last(&self) -> Result<Var> {
        let n = self.shape().last().copied().unwrap_or(0);
        if n == 0 {
            return Err(Error::shape(
                "mean_last",
                "x",
                "rank >= 1, a last axis of at least one element",
                self.shape(),
            ));
        }
        Var::composite("mean_last", || self.sum_last()?.scale(1.0 / n as f32))
    }
}
