//! Gradient clipping by global norm: `norm = sqrt(sum over params of sum(g^2))`; when it
//! exceeds `max_norm` every gradient is scaled by `max_norm / (norm + 1e-6)` (PyTorch's
//! `clip_grad_norm_`). Built from tensor ops, so the same code runs on a GPU context and on
//! the CPU reference context; the scale is computed on the device, so
//! [`clip_grad_norm_tensor`] needs no readback (the wasm form) and [`clip_grad_norm`] reads
//! back one number.

use crate::autograd::{Grads, Var};
use crate::error::{Error, Result};
use crate::ops;
use crate::tensor::Tensor;

/// Added to the norm before dividing, as PyTorch does, so a zero norm stays finite.
const NORM_EPS: f32 = 1e-6;

/// Scales the gradients of `vars` in `grads` so that their global L2 norm is at most
/// `max_norm` (finite, > 0); returns the norm before clipping as a (1,) tensor, without
/// reading anything back. A variable without a gradient is an error, before anything changes.
pub fn clip_grad_norm_tensor(vars: &[Var], grads: &mut Grads, max_norm: f32) -> Result<Tensor> {
    let op = "clip_grad_norm";
    if !(max_norm > 0.0 && max_norm.is_finite()) {
        return Err(Error::value(op, "max_norm", "a finite value > 0", max_norm));
    }
    let Some(first) = vars.first() else {
        return Err(Error::value(op, "vars", "at least one parameter", 0));
    };
    let ctx = first.tensor().context().clone();
    let gs = super::gather(vars, grads)?;
    let mut total: Option<Tensor> = None;
    for g in &gs {
        let g = g.contiguous()?;
        let sq = ops::mul(&g, &g)?.reshape(&[1, g.len()])?; // (1, n)
        let s = ops::sum_last(&sq)?; // (1,)
        total = Some(match total {
            Some(t) => ops::add(&t, &s)?,
            None => s,
        });
    }
    let Some(total) = total else {
        return Err(Error::value(op, "vars", "at least one parameter", 0));
    };
    let norm = ops::sqrt(&total)?; // (1,)
                                   // scale = min(1, max_norm / (norm + eps)): exactly 1 (no change) when under the bound.
    let bound = Tensor::full(&ctx, &[1], max_norm)?;
    let eps = Tensor::full(&ctx, &[1], NORM_EPS)?;
    let one = Tensor::full(&ctx, &[1], 1.0)?;
    let scale = ops::minimum(&one, &ops::div(&bound, &ops::add(&norm, &eps)?)?)?; // (1,)
    let scaled: Vec<Tensor> = gs.iter().map(|g| ops::mul(g, &scale)).collect::<Result<_>>()?;
    for (v, s) in vars.iter().zip(scaled) {
        if let Some(g) = grads.get_mut(v) {
            *g = s;
        }
    }
    Ok(norm)
}

/// [`clip_grad_norm_tensor`], returning the norm before clipping as a number (one readback).
#[cfg(not(target_arch = "wasm32"))]
pub fn clip_grad_norm(vars: &[Var], grads: &mut Grads, max_norm: f32) -> Result<f32> {
    let norm = clip_grad_norm_tensor(vars, grads, max_norm)?;
    Ok(norm.to_vec()?[0])
}
