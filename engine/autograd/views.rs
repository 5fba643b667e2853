//! Views on variables: transpose, narrow and reshape. Their backward is the inverse view of
//! the gradient (transpose, reshape) or the gradient written into zeros (narrow).

use super::var::{rule, when, Var};
use crate::error::Result;
use crate::ops;
use crate::tensor::Tensor;

impl Var {
    /// The view with axes `a` and `b` swapped (no copy); see `Tensor::transpose`.
    pub fn transpose(&self, a: usize, b: usize) -> Result<Var> {
        Var::record("transpose", &[self], |t| {
            let y = t[0].transpose(a, b)?;
            Ok((y, rule(move |g, need| Ok(vec![when(need[0], || g.transpose(a, b))?]))))
        })
    }

    /// The view keeping `start..end` of `axis` (no copy); its gradient is zero outside it.
    pub fn narrow(&self, axis: usize, start: usize, end: usize) -> Result<Var> {
        Var::record("narrow", &[self], |t| {
            let y = t[0].narrow(axis, start, end)?;
            let (ctx, shape) = (t[0].context().clone(), t[0].shape().to_vec());
            Ok((
                y,
                rule(move |g, need| {
                    Ok(vec![when(need[0], || {
                        let d = Tensor::zeros(&ctx, &shape)?; // (shape of the input)
                        ops::copy_into(&d.narrow(axis, start, end)?, g)?;
                        Ok(d)
                    })?])
                }),
            ))
        })
    }

    /// The same elements under another shape; see `Tensor::reshape`.
    pub fn reshape(&self, shape: &[usize]) -> Result<Var> {
        Var::record("reshape", &[self], |t| {
            let y = t[0].reshape(shape)?;
            let from = t[0].shape().to_vec();
            Ok((y, rule(move |g, need| Ok(vec![when(need[0], || g.reshape(&from))?]))))
        })
    }
}

impl Var {
    /// The variables joined along `axis` (`ops::cat`); each one's gradient is its slice of
    /// the output's (a view, no copy). Every input (..., n_i, ...) -> (..., sum n_i, ...).
    pub fn cat(vars: &[&Var], axis: usize) -> Result<Var> {
        Var::record("cat", vars, |t| {
            let y = ops::cat(t, axis)?;
            let sizes: Vec<usize> = t.iter().map(|x| x.shape().get(axis).copied().unwrap_or(0)).collect();
            Ok((
                y,
                rule(move |g, need| {
                    let mut start = 0;
                    let mut grads = vec![];
                    for (k, &n) in sizes.iter().enumerate() {
                        grads.push(when(need[k], || g.narrow(axis, start, start + n))?);
                        start += n;
                    }
                    Ok(grads)
                }),
            ))
        })
    }
}
