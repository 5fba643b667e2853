//! # Optimisers
//!
//! Each optimiser keeps its state (moments, velocities) as tensors of its parameters' shapes
//! and updates every parameter in place with one fused elementwise launch per parameter
//! (`shaders/train/optim/{sgd,adam}.wgsl`); on the CPU context the same update runs on the host
//! in f32, the reference the kernels are tested against.
//!
//! - [`Sgd`]: momentum, optional Nesterov, L2 weight decay.
//! - [`Adam`]: Adam, with L2 weight decay or, as AdamW ([`Adam::adamw`]), decoupled decay.
//! - [`clip_grad_norm`]: scales gradients so that their global L2 norm is at most a bound.
//!
//! Two ways to step: over tensors (`step(&[&Tensor], &[&Tensor])`, each optimiser's own
//! method, params and grads in the order of creation) and over a tape's variables with the
//! [`Grads`] of a backward ([`Optimizer::step_vars`], which skips a parameter without a
//! gradient: frozen, or unused by the loss). Every step checks every pair before it moves
//! anything, so an error leaves the parameters as they were.
//!
//! An optimiser's state (moments, velocities, step count) saves to safetensors beside the
//! parameters ([`Optimizer::save_state`]; the layout in `state_file`) and loads back in place, so that a
//! run resumed from a checkpoint takes the same steps, bit for bit, as one never stopped.

mod adam;
mod clip;
mod sgd;
mod state_file;

pub use adam::Adam;
#[cfg(not(target_arch = "wasm32"))]
pub use clip::clip_grad_norm;
pub use clip::clip_grad_norm_tensor;
pub use sgd::Sgd;

use crate::autograd::{Grads, Var};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// What every optimiser does: one in-place step over its parameters, and its state saved
/// and restored ([`Optimizer::state_bytes`], [`Optimizer::load_state_bytes`]) so that a
/// resumed run continues bit for bit.
pub trait Optimizer {
    /// One step over the parameters that have a gradient (same order and shapes as at
    /// creation): parameter i moves against `grads[i]`; a parameter whose gradient is None
    /// (frozen, or unused by this loss) is left as it is, its state too. The step count
    /// (Adam's bias corrections) advances once per call.
    fn step_some(&mut self, params: &[&Tensor], grads: &[Option<&Tensor>]) -> Result<()>;

    /// [`Optimizer::step_some`] on the device, changing nothing (parameters, state, step
    /// count on the device) where `gate`, a one-element tensor, is not 0 when the step runs:
    /// how a captured loss-scaled step skips an update whose gradients overflowed
    /// ([`crate::train::CompiledStep::capture_scaled`]). Adam has it; the default is an
    /// `Error::Unsupported`.
    fn step_some_gated(&mut self, params: &[&Tensor], grads: &[Option<&Tensor>], gate: &Tensor) -> Result<()> {
        let _ = (params, grads, gate);
        Err(Error::Unsupported {
            op: "optimizer step",
            message: "this optimiser cannot skip a step on the device (a loss-scaled compiled step needs Adam)".into(),
        })
    }

    /// One step: each parameter (dense, as at creation) moves against its gradient (same
    /// order and shapes).
    fn step_tensors(&mut self, params: &[&Tensor], grads: &[&Tensor]) -> Result<()> {
        let some: Vec<Option<&Tensor>> = grads.iter().map(|g| Some(*g)).collect();
        self.step_some(params, &some)
    }

    /// The learning rate.
    fn lr(&self) -> f32;

    /// Sets the learning rate for the next steps (a schedule's, `train::LrSchedule`); checked
    /// (finite, >= 0) at the next step, as the public field is.
    fn set_lr(&mut self, lr: f32);

    /// The optimiser's state tensors (moments, velocities, counts on the device), which a
    /// plan that captures a step must hold ([`crate::train::CompiledStep`]).
    fn state(&self) -> Vec<&Tensor>;

    /// One step over tape variables `vars` (the parameters, as at creation) with the
    /// gradients of a backward. A variable without a gradient (a frozen parameter, a
    /// constant, one the loss does not use) is skipped, as PyTorch skips a parameter whose
    /// `grad` is None; when none has a gradient (the grads of another tape) it is an error
    /// and nothing moves.
    fn step_vars(&mut self, vars: &[Var], grads: &Grads) -> Result<()> {
        let params: Vec<&Tensor> = vars.iter().map(Var::tensor).collect();
        let grads = gather("optimizer step", vars, grads)?;
        self.step_some(&params, &grads)
    }

    /// The state as a safetensors file (the module `state_file`; blocks on the readback,
    /// native only): the optimiser's name, step count
    /// and every state tensor, to save beside the parameters (`ParamStore::save`) and load
    /// into an optimiser of the same kind over the same parameters to resume bit for bit.
    #[cfg(not(target_arch = "wasm32"))]
    fn state_bytes(&self) -> Result<Vec<u8>>;

    /// Overwrites the state in place (so a captured step that holds it resumes too) with a
    /// file of [`Optimizer::state_bytes`]; `what` names it in errors. A file of another
    /// optimiser, another parameter count or other shapes is an error and nothing changes.
    /// The settings (lr, betas, decay) are not in the file: they stay as they are.
    fn load_state_bytes(&mut self, bytes: &[u8], what: &str) -> Result<()>;

    /// Writes [`Optimizer::state_bytes`] to `path`.
    #[cfg(not(target_arch = "wasm32"))]
    fn save_state(&self, path: &std::path::Path) -> Result<()> {
        state_file::write_file(path, &self.state_bytes()?)
    }

    /// Reads `path` into the state ([`Optimizer::load_state_bytes`]).
    #[cfg(not(target_arch = "wasm32"))]
    fn load_state(&mut self, path: &std::path::Path) -> Result<()> {
        let bytes = state_file::read_file(path)?;
        self.load_state_bytes(&bytes, &path.display().to_string())
    }
}

/// The gradient of each variable, in order (None: it has none); an error naming `op` when
/// none of them has one.
pub(crate) fn gather<'a>(op: &'static str, vars: &[Var], grads: &'a Grads) -> Result<Vec<Option<&'a Tensor>>> {
    let found: Vec<Option<&Tensor>> = vars.iter().map(|v| grads.get(v)).collect();
    if !vars.is_empty() && found.iter().all(Option::is_none) {
        return Err(Error::value(
            op,
            "grads",
            format!("a gradient for at least one of the {} parameters", vars.len()),
            "none: the loss depends on none of them, or they are on another tape",
        ));
    }
    Ok(found)
}

/// Checks a step's arguments against the state's shapes (`states[i]` is param i's shape at
/// creation): counts, shapes, dense params, one context, no parameter twice. A parameter
/// without a gradient (None) is checked too: it is skipped, not forgotten. `op` names the
/// optimiser.
pub(crate) fn check_step(
    op: &'static str,
    states: &[&Tensor],
    params: &[&Tensor],
    grads: &[Option<&Tensor>],
) -> Result<()> {
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
        if let Some(g) = g {
            if g.shape() != p.shape() {
                return Err(Error::mismatch(op, "grad", g.shape(), "param", p.shape()));
            }
            g.expect_context(s.context(), op, "grads")?;
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
