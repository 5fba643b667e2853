//! # Optimisers
//!
//! Each optimiser keeps its state (moments, velocities) as tensors of its parameters' shapes
//! and updates every parameter in place with one fused elementwise launch per parameter
//! (`shaders/train/{sgd,adam}.wgsl`); on the CPU context the same update runs on the host
//! in f32, the reference the kernels are tested against.
//!
//! - [`Sgd`]: momentum, optional Nesterov, L2 weight decay.
//! - [`Adam`]: Adam, with L2 weight decay or, as AdamW ([`Adam::adamw`]), decoupled decay.
//! - [`clip_grad_norm`]: scales gradients so that their global L2 norm is at most a bound.
//!
//! Two ways to step: over tensors (`step(&[&Tensor], &[&Tensor])`, each optimiser's own
//! method, params and grads in the order of creation) and over a tape's variables with the
//! [`Grads`] of a backward ([`Optimizer::step_vars`]). Every step checks every pair before
//! it moves anything, so an error leaves the parameters as they were.

mod adam;
mod clip;
mod sgd;

pub use adam::Adam;
#[cfg(not(target_arch = "wasm32"))]
pub use clip::clip_grad_norm;
pub use clip::clip_grad_norm_tensor;
pub use sgd::Sgd;

use crate::autograd::{Grads, Var};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// What every optimiser does: one in-place step over its parameters.
pub trait Optimizer {
    /// One step: each parameter (dense, as at creation) moves against its gradient (same
    /// order and shapes).
    fn step_tensors(&mut self, params: &[&Tensor], grads: &[&Tensor]) -> Result<()>;

    /// The optimiser's state tensors (moments, velocities, counts on the device), which a
    /// plan that captures a step must hold ([`crate::train::CompiledStep`]).
    fn state(&self) -> Vec<&Tensor>;

    /// One step over tape variables `vars` (the parameters, as at creation) with the
    /// gradients of a backward. A variable the loss does not depend on has no gradient: an
    /// error naming its index, before anything moves.
    fn step_vars(&mut self, vars: &[Var], grads: &Grads) -> Result<()> {
        let params: Vec<&Tensor> = vars.iter().map(Var::tensor).collect();
        let grads = gather(vars, grads)?;
        self.step_tensors(&params, &grads)
    }
}

/// The gradient of each variable, in order; an error for the first without one.
pub(crate) fn gather<'a>(vars: &[Var], grads: &'a Grads) -> Result<Vec<&'a Tensor>> {
    vars.iter()
        .enumerate()
        .map(|(i, v)| {
            grads.get(v).ok_or_else(|| {
                Error::value(
                    "optimizer step",
                    "grads",
                    format!("a gradient for every parameter (param {i} of shape {:?})", v.shape()),
                    "none: the loss does not depend on it, or it is on another tape",
                )
            })
        })
        .collect()
}

/// Checks a step's arguments against the state's shapes (`states[i]` is param i's shape at
/// creation): counts, shapes, dense params, one context, no parameter twice. `op` names the
/// optimiser.
pub(crate) fn check_step(op: &'static str, states: &[&Tensor], params: &[&Tensor], grads: &[&Tensor]) -> Result<()> {
    if params.len() != states.len() || grads.len() != params.len() {
        return Err(Error::value(
            op,
            "params / grads",
            format!("{} of each (as at creation)", states.len()),
            format!("{} params, {} grads", params.len(), grads.len()),
        ));
    }
    for (i, ((p, g), s)) in params.iter().zip(grads).zip(states).enumerate() {
        if p.shape() != s.shape() {
            return Err(Error::value(
                op,
                "params",
                format!(
                    "the tensors the optimiser was created with (param {i} of shape {:?})",
                    s.shape()
                ),
                format!("{:?}", p.shape()),
            ));
        }
        if g.shape() != p.shape() {
            return Err(Error::mismatch(op, "grad", g.shape(), "param", p.shape()));
        }
        if !p.is_contiguous() {
            return Err(Error::value(
                op,
                "params",
                "dense tensors (updated in place)",
                format!("a view at param {i}"),
            ));
        }
        p.expect_context(s.context(), op, "params")?;
        g.expect_context(s.context(), op, "grads")?;
        // A parameter passed twice (or two sharing elements) would move twice per step.
        if let Some(j) = params[..i].iter().position(|q| q.overlaps(p)) {
            return Err(Error::value(
                op,
                "params",
                "distinct tensors (each is updated in place once)",
                format!("param {i} shares its elements with param {j}"),
            ));
        }
    }
    Ok(())
}

/// Zero state tensors of each parameter's shape; params must be dense (updated in place).
pub(crate) fn zero_state(op: &'static str, params: &[&Tensor]) -> Result<Vec<Tensor>> {
    params
        .iter()
        .map(|p| {
            if !p.is_contiguous() {
                return Err(Error::value(op, "params", "dense tensors (updated in place)", "a view"));
            }
            Tensor::zeros(p.context(), p.shape())
        })
        .collect()
}

/// A setting that must be finite and >= 0 (a learning rate, a decay): NaN would turn every
/// parameter into NaN.
pub(crate) fn check_nonnegative(op: &'static str, name: &'static str, what: &str, v: f32) -> Result<()> {
    if !(v >= 0.0 && v.is_finite()) {
        return Err(Error::value(op, name, format!("a finite {what} >= 0"), v));
    }
    Ok(())
}
