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
//! kernels); `LossScaler` reads a number back, so a loss-scaled F16 step stays eager, and a
//! captured mixed-precision step uses BF16.
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

use super::optim::Optimizer;
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
        if !ctx.is_gpu() {
            return Err(Error::Unsupported {
                op,
                message:
                    "a compiled step is a plan, and plans need a GPU context; on the CPU context run the step eagerly"
                        .into(),
            });
        }
        // The backward's seed, dL/dL = 1: made before the capture (an upload inside it is an
        // error), held by the plan.
        let seed = Tensor::full(ctx, &[], 1.0)?;
        let state: Vec<Tensor> = optimizer.state().into_iter().cloned().collect();
        let mut hold: Vec<&Tensor> = params.iter().chain(inputs).copied().collect();
        hold.extend(&state);
        hold.push(&seed);
        let unknown = "neither a parameter, nor one of `inputs`, nor the optimiser's state: \
                       pass every tensor the forward reads (the batch, constants made before the capture) in `inputs`";
        let (plan, loss) = Plan::capture_as(ctx, op, unknown, &hold, || {
            let tape = Tape::new(ctx);
            let vars = params.iter().map(|p| tape.var(p)).collect::<Result<Vec<_>>>()?;
            let loss = loss_of(&vars)?;
            if !loss.shape().is_empty() {
                return Err(Error::shape(op, "loss", "a scalar () loss", loss.shape()));
            }
            let grads = loss.backward_with(&seed)?;
            optimizer.step_vars(&vars, &grads)?;
            Ok(loss.tensor().clone())
        })?;
        Ok(CompiledStep {
            ctx: ctx.clone(),
            plan,
            loss,
        })
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
