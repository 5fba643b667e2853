//! Gradient clipping by global norm: `norm = sqrt(sum over params of sum(g^2))`, computed
//! scaled so that gradients near f32::MAX or under 1e-19 give their norm, not inf or 0; when
//! it exceeds `max_norm` every gradient is scaled by `max_norm / (norm + 1e-6)` (PyTorch's
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
/// reading anything back. A variable without a gradient (frozen, unused) is left out, as
/// `Optimizer::step_vars` skips it; none with a gradient, or one listed twice, is an error,
/// before anything changes.
pub fn clip_grad_norm_tensor(vars: &[Var], grads: &mut Grads, max_norm: f32) -> Result<Tensor> {
    let op = "clip_grad_norm";
    if !(max_norm > 0.0 && max_norm.is_finite()) {
        return Err(Error::value(op, "max_norm", "a finite value > 0", max_norm));
    }
    let Some(first) = vars.first() else {
        return Err(Error::value(op, "vars", "at least one parameter", 0));
    };
    let ctx = first.tensor().context().clone();
    // Parameters without a gradient (frozen, unused) are left out, as the step skips them.
    let found = super::gather(op, vars, grads)?;
    let (vars, gs): (Vec<&Var>, Vec<&Tensor>) = vars.iter().zip(found).filter_map(|(v, g)| Some((v, g?))).unzip();
    let mut seen = std::collections::HashSet::new();
    for (i, v) in vars.iter().enumerate() {
        // `gather` found each on the gradients' tape, so the entry index names the variable.
        if let Some((_, entry)) = v.node() {
            if !seen.insert(entry) {
                return Err(Error::value(
                    op,
                    "vars",
                    "each variable once (a repeat would count its gradient twice)",
                    format!("param {i} (shape {:?}) repeats an earlier one", v.shape()),
                ));
            }
        }
    }
    let gs: Vec<Tensor> = gs.iter().map(|g| g.contiguous()).collect::<Result<_>>()?;
    // The plain sum of squares picks a power-of-two scale s (exact to apply): 2^-90 when it
    // is past 2^100 or overflowed (gradients near f32::MAX), 2^86 when it is under 2^-60
    // (squares of gradients under about 1e-19 underflow), else 1; the norm is then
    // sqrt(sum((s g)^2)) / s, with no square out of range.
    let plain = sum_of_squares(&gs, None)?;
    let full = |v: f32| Tensor::full(&ctx, &[1], v);
    let one = full(1.0)?;
    let up = ops::where_(&plain.lt_scalar(2f32.powi(-60))?, &full(2f32.powi(86))?, &one)?;
    let s = ops::where_(&plain.ge_scalar(2f32.powi(100))?, &full(2f32.powi(-90))?, &up)?; // (1,)
    let norm = ops::div(&ops::sqrt(&sum_of_squares(&gs, Some(&s))?)?, &s)?; // (1,)
                                                                            // scale = min(1, max_norm / (norm + eps)): exactly 1 (no change) when under the bound.
    let (bound, eps) = (full(max_norm)?, full(NORM_EPS)?);
    let scale = ops::minimum(&one, &ops::div(&bound, &ops::add(&norm, &eps)?)?)?; // (1,)
    let scaled: Vec<Tensor> = gs.iter().map(|g| ops::mul(g, &scale)).collect::<Result<_>>()?;
    for (v, s) in vars.into_iter().zip(scaled) {
        if let Some(g) = grads.get_mut(v) {
            *g = s;
        }
    }
    Ok(norm)
}

/// sum(g^2) over every element of `gs` (dense), each scaled by the (1,) `s` first when given.
/// -> (1,).
fn sum_of_squares(gs: &[Tensor], s: Option<&Tensor>) -> Result<Tensor> {
    let mut total: Option<Tensor> = None;
    for g in gs {
        let g = match s {
            Some(s) => ops::mul(g, s)?,
            None => g.clone(),
        };
        let sq = ops::mul(&g, &g)?.reshape(&[1, g.len()])?; // (1, n)
        let part = ops::sum_last(&sq)?; // (1,)
        total = Some(match total {
            Some(t) => ops::add(&t, &part)?,
            None => part,
        });
    }
    total.ok_or_else(|| Error::value("clip_grad_norm", "vars", "at least one parameter", 0))
}

/// [`clip_grad_norm_tensor`], returning the norm before clipping as a number (one readback).
#[cfg(not(target_arch = "wasm32"))]
pub fn clip_grad_norm(vars: &[Var], grads: &mut Grads, max_norm: f32) -> Result<f32> {
    let norm = clip_grad_norm_tensor(vars, grads, max_norm)?;
    Ok(norm.to_vec()?[0])
}
