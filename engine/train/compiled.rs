//! [`CompiledStep`]: a whole training step (the forward recorded on a tape, its backward and
//! the optimiser's update) captured once as a [`Plan`] and replayed, so that a step costs
//! no allocation, no bind group and no host work beyond recording its dispatches.
//!
//! What changes between steps must be in device buffers the step reads: the batch goes into
//! input tensors the caller writes with [`Tensor::write`] before each [`CompiledStep::step`],
//! and the optimisers keep what they count on the device (Adam's bias corrections). The
//! forward must not upload or read back (a `Tensor::from_slice` or `to_vec` in it is the
//! capture's error, naming the op the forward called); constants are fine (`Tensor::full`
//! inside the capture is a fill kernel each replay runs, and the scalar ops such as
//! `x.rsub_scalar(1.0)` carry their scalar in the kernel). Ops that take host ids
//! (`Var::embedding`, `Var::cross_entropy`) upload them and so belong to eager steps.
//! A forward inside `autograd::autocast` is captured like any other (its conversions are
//! kernels). A loss-scaled F16 step is captured with [`CompiledStep::capture_scaled`]: the
//! scaler's S, its overflow test and its update stay on the device, and the optimiser skips
//! an overflowed update there (PyTorch's capturable `GradScaler`).
//! A parameter that the loss does not use, or a frozen one, is skipped by the step. Plans need a GPU: on the CPU context
//! [`CompiledStep::capture`] is an `Error::Unsupported`.
//!
//! ```no_run
//! use wgsl_compute::train::{Adam, CompiledStep};
//! use wgsl_compute::{Context, Tensor};
//! let ctx = Context::new()?;
//! let w = Tensor::randn(&ctx, &[8, 1], 1)?;                 // the parameter (8, 1)
//! let x = Tensor::zeros(&ctx, &[32, 8])?;                   // the batch's inputs (32, 8)
//! let y = Tensor::zeros(&ctx, &[32, 1])?;                   // and targets (32, 1)
//! let mut adam = Adam::new(&[&w], 1e-2)?;
//! let step = CompiledStep::capture(&ctx, &[&w], &[&x, &y], &mut adam, |v| {
//!     let (xv, yv) = (wgsl_compute::autograd::Var::constant(&x), wgsl_compute::autograd::Var::constant(&y));
//!     let d = xv.matmul(&v[0])?.sub(&yv)?;                   // (32, 1)
//!     d.mul(&d)?.mean_all()                                  // ()
//! })?;
//! for _ in 0..100 {
//!     x.write(&vec![0.5; 32 * 8])?;                          // this step's batch
//!     y.write(&vec![1.0; 32])?;
//!     let loss = step.step()?;                               // forward, backward, Adam
//!     let _ = loss.to_vec()?;                                // the loss before the update
//! }
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

use super::loss_scale::{unscale_all, update, LossScaler};
use super::optim::{gather, Optimizer};
use crate::autograd::{Tape, Var};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::tensor::Tensor;

/// One training step captured as a plan.
pub struct CompiledStep {
    ctx: Context,
    plan: Plan,
    /// The loss () the last replay computed, before its update.
    loss: Tensor,
}

impl CompiledStep {
    /// Captures one step: `loss_of(&vars)` records the forward over `params` as variables of
    /// a fresh tape (in `params` order) and returns the scalar loss; then its backward and
    /// `optimizer`'s step over the same parameters are captured too. `inputs` lists every
    /// other tensor the forward reads (the batch the caller writes before each step); the
    /// plan holds them, the parameters and the optimiser's state. Nothing runs until the
    /// first [`CompiledStep::step`]; the capture counts as one call of the optimiser's step
    /// on the host (`Adam::steps`), its replays do not.
    pub fn capture<O: Optimizer + ?Sized>(
        ctx: &Context,
        params: &[&Tensor],
        inputs: &[&Tensor],
        optimizer: &mut O,
        loss_of: impl FnOnce(&[Var]) -> Result<Var>,
    ) -> Result<CompiledStep> {
        let op = "CompiledStep::capture";
        require_gpu(ctx, op)?;
        // The backward's seed, dL/dL = 1: made before the capture (an upload inside it is an
        // error), held by the plan.
        let seed = Tensor::full(ctx, &[], 1.0)?;
        Self::capture_with(
            ctx,
            op,
            params,
            inputs,
            optimizer,
            &[&seed],
            loss_of,
            |vars, loss, opt| {
                let grads = loss.backward_with(&seed)?;
                opt.step_vars(vars, &grads)
            },
        )
    }

    /// The capture both forms share: the forward over `params` as variables of a fresh tape,
    /// then `backward_and_step` (its backward and the optimiser's update), as one plan that
    /// holds the parameters, `inputs`, the optimiser's state and `held`.
    #[allow(clippy::too_many_arguments)]
    fn capture_with<O: Optimizer + ?Sized>(
        ctx: &Context,
        op: &'static str,
        params: &[&Tensor],
        inputs: &[&Tensor],
        optimizer: &mut O,
        held: &[&Tensor],
        loss_of: impl FnOnce(&[Var]) -> Result<Var>,
        backward_and_step: impl FnOnce(&[Var], &Var, &mut O) -> Result<()>,
    ) -> Result<CompiledStep> {
        let state: Vec<Tensor> = optimizer.state().into_iter().cloned().collect();
        let mut hold: Vec<&Tensor> = params.iter().chain(inputs).copied().collect();
        hold.extend(&state);
        hold.extend(held);
        let unknown = "neither a parameter, nor one of `inputs`, nor the optimiser's state: \
                       pass every tensor the forward reads (the batch, constants made before the capture) in `inputs`";
        let (plan, loss) = Plan::capture_as(ctx, op, unknown, &hold, || {
            let tape = Tape::new(ctx);
            let vars = params.iter().map(|p| tape.var(p)).collect::<Result<Vec<_>>>()?;
            let loss = loss_of(&vars)?;
            if !loss.shape().is_empty() {
                return Err(Error::shape(op, "loss", "a scalar () loss", loss.shape()));
            }
            backward_and_step(&vars, &loss, optimizer)?;
            Ok(loss.tensor().clone())
        })?;
        Ok(CompiledStep {
            ctx: ctx.clone(),
            plan,
            loss,
        })
    }

    /// [`CompiledStep::capture`] for a loss-scaled step (products inside `autocast(F16)`):
    /// the backward starts from the scale S instead of 1 (the gradients of S L), each
    /// gradient is divided by S, and `optimizer`'s update changes nothing at a replay whose
    /// gradients held an inf or a NaN; then S and its counts move as `scaler`'s rule says
    /// ([`LossScaler`]). All of it on the device, read back by nobody: `scaler` (its S and
    /// counts as they are now) hands its state to the plan, and [`LossScaler::sync`] reads it
    /// back after replays. The optimiser must be able to skip on the device (Adam).
    pub fn capture_scaled<O: Optimizer + ?Sized>(
        ctx: &Context,
        params: &[&Tensor],
        inputs: &[&Tensor],
        optimizer: &mut O,
        scaler: &mut LossScaler,
        loss_of: impl FnOnce(&[Var]) -> Result<Var>,
    ) -> Result<CompiledStep> {
        let op = "CompiledStep::capture_scaled";
        require_gpu(ctx, op)?;
        let state = scaler.device_state(ctx)?; // (5,): S first, the overflow flag third
        let growth = scaler.growth_interval();
        let seed = state.narrow(0, 0, 1)?.reshape(&[])?; // (), S
        let found = state.narrow(0, 2, 3)?; // (1,)
        Self::capture_with(
            ctx,
            op,
            params,
            inputs,
            optimizer,
            &[&state],
            loss_of,
            |vars, loss, opt| {
                let mut grads = loss.backward_with(&seed)?;
                unscale_all(op, vars, &mut grads, &state)?;
                let params: Vec<&Tensor> = vars.iter().map(Var::tensor).collect();
                opt.step_some_gated(&params, &gather(op, vars, &grads)?, &found)?;
                update(op, &state, growth)
            },
        )
    }

    /// Replays the step (forward, backward, update) on the inputs as they are now written;
    /// returns its loss (), computed before the update, to read back when wanted.
    pub fn step(&self) -> Result<&Tensor> {
        self.plan.replay(&self.ctx)?;
        Ok(&self.loss)
    }

    /// The plan (its dispatches, peak bytes, `dump`).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }
}

/// Plans need a GPU: on the CPU context a compiled step is an `Error::Unsupported`.
fn require_gpu(ctx: &Context, op: &'static str) -> Result<()> {
    if ctx.is_gpu() {
        return Ok(());
    }
    Err(Error::Unsupported {
        op,
        message: "a compiled step is a plan, and plans need a GPU context; on the CPU context run the step eagerly"
            .into(),
    })
}
