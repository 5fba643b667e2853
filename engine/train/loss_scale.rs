//! Dynamic loss scaling for steps whose products run in F16 (`autograd::autocast`), as
//! PyTorch's `GradScaler` does it: the loss is multiplied by a scale S before the backward,
//! so small gradients stay above F16's smallest values, and the gradients are divided by S
//! before the optimiser sees them. A step whose gradients hold an inf or NaN (the scale was
//! too large) is skipped and S halves; after `growth_interval` finite steps in a row S
//! doubles. BF16 has f32's range and needs none of this.
//!
//! The rule runs on the device over a state of five numbers (S, finite steps in a row, found,
//! skipped steps, last found): `unscale.wgsl` divides each gradient by S and sets found,
//! `loss_scale_update.wgsl` moves S and the counts. An eager step uploads the state, runs them
//! and reads it back (one small readback a step); a step captured with
//! `train::CompiledStep::capture_scaled` keeps it on the device, where Adam skips an
//! overflowed update itself, and [`LossScaler::sync`] reads it back when asked.
//!
//! ```
//! use wgsl_compute::autograd::{autocast, Tape, Var};
//! use wgsl_compute::train::{Adam, LossScaler, Optimizer};
//! use wgsl_compute::{Context, DType, Tensor};
//! let ctx = Context::cpu();
//! let w0 = Tensor::from_slice(&ctx, &[2, 1], &[0.5, -0.25])?;   // (2, 1), f32 master weight
//! let mut adam = Adam::new(&[&w0], 1e-2)?;
//! let mut scaler = LossScaler::new();
//! let x = Tensor::from_slice(&ctx, &[3, 2], &[1., 2., 3., 4., 5., 6.])?; // (3, 2)
//! for _ in 0..3 {
//!     let tape = Tape::new(&ctx);
//!     let w = tape.var(&w0)?;                                  // shares w0's buffer
//!     let y = autocast(DType::F16, || Var::constant(&x).matmul(&w))?; // (3, 1), f16 product
//!     let loss = (&y * &y)?.mean_all()?;
//!     let mut grads = scaler.scale_loss(&loss)?.backward()?;
//!     scaler.step(&mut adam, &[w], &mut grads)?;              // skipped on an overflow
//! }
//! assert_eq!(adam.steps() + scaler.skipped(), 3);
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

use crate::autograd::{Grads, Var};
use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::shape::DType;
use crate::tensor::Tensor;
use crate::train::Optimizer;

const UNSCALE: KernelDef = KernelDef::new("train/unscale", shader!("train/unscale.wgsl"), "unscale");
const UPDATE: KernelDef = KernelDef::new(
    "train/loss_scale_update",
    shader!("train/loss_scale_update.wgsl"),
    "loss_scale_update",
);
/// Elements of the state the kernels keep: (S, finite steps in a row, found, steps skipped,
/// last found).
const STATE_LEN: usize = 5;

/// The scale, its growth and the steps it skipped (see the module).
#[derive(Clone, Debug)]
pub struct LossScaler {
    scale: f32,
    growth_interval: u32,
    finite_steps: u32,
    skipped: u32,
    /// The state of the captured step this scaler was given to, if any (`device_state`).
    device: Option<Tensor>,
}

impl Default for LossScaler {
    fn default() -> Self {
        LossScaler::new()
    }
}

impl LossScaler {
    /// PyTorch's defaults: S = 2^16, doubled after 2000 finite steps, halved at an overflow.
    pub fn new() -> Self {
        LossScaler {
            scale: 65536.0,
            growth_interval: 2000,
            finite_steps: 0,
            skipped: 0,
            device: None,
        }
    }

    /// A first `scale` (finite, > 0) doubled after `growth_interval` (>= 1) finite steps.
    pub fn with(scale: f32, growth_interval: u32) -> Result<Self> {
        let op = "LossScaler::with";
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(Error::value(op, "scale", "a finite value > 0", scale));
        }
        if growth_interval == 0 {
            return Err(Error::value(op, "growth_interval", "at least 1 step", growth_interval));
        }
        Ok(LossScaler {
            scale,
            growth_interval,
            ..LossScaler::new()
        })
    }

    /// The scale the next loss is multiplied by.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Finite steps before S doubles.
    pub fn growth_interval(&self) -> u32 {
        self.growth_interval
    }

    /// The steps skipped so far for gradients that were not finite.
    pub fn skipped(&self) -> u32 {
        self.skipped
    }

    /// `loss * S`: the root to call `backward` on.
    pub fn scale_loss(&self, loss: &Var) -> Result<Var> {
        loss.mul_scalar(self.scale)
    }

    /// Divides the gradients of `vars` in `grads` by S and updates S; returns whether they
    /// are all finite (one number read back). When they are not, the caller skips the step
    /// (`LossScaler::step` does).
    pub async fn unscale_async(&mut self, vars: &[Var], grads: &mut Grads) -> Result<bool> {
        let op = "LossScaler::unscale";
        super::optim::gather(op, vars, grads)?; // refuses the grads of another tape
        let Some(ctx) = vars.first().map(|v| v.tensor().context().clone()) else {
            return Ok(true);
        };
        // The state the kernels read and update, (5,): see `state`.
        let state = Tensor::from_slice(&ctx, &[STATE_LEN], &self.state())?;
        unscale_all(op, vars, grads, &state)?;
        update(op, &state, self.growth_interval)?;
        let state = state.to_vec_async().await?;
        self.set_state(&state);
        Ok(state[4] == 0.0)
    }

    /// What the kernels keep, (S, finite steps in a row, found, steps skipped, last found).
    fn state(&self) -> [f32; STATE_LEN] {
        [self.scale, self.finite_steps as f32, 0.0, self.skipped as f32, 0.0]
    }

    fn set_state(&mut self, s: &[f32]) {
        (self.scale, self.finite_steps, self.skipped) = (s[0], s[1] as u32, s[3] as u32);
    }

    /// The scaler's state as a device tensor (5,) a captured step reads and updates at each
    /// replay (`CompiledStep::capture_scaled`), made from this scaler's S and counts at the
    /// capture; [`LossScaler::sync_async`] reads it back into the scaler.
    pub(crate) fn device_state(&mut self, ctx: &crate::context::Context) -> Result<Tensor> {
        let t = Tensor::from_slice(ctx, &[STATE_LEN], &self.state())?;
        self.device = Some(t.clone());
        Ok(t)
    }

    /// Reads the state of the captured step this scaler was given to
    /// (`CompiledStep::capture_scaled`) back into it: S and the skipped steps after its
    /// replays. Nothing to read without one.
    pub async fn sync_async(&mut self) -> Result<()> {
        if let Some(t) = &self.device {
            let s = t.to_vec_async().await?;
            self.set_state(&s);
        }
        Ok(())
    }

    /// [`LossScaler::sync_async`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn sync(&mut self) -> Result<()> {
        pollster::block_on(self.sync_async())
    }

    /// [`LossScaler::unscale_async`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn unscale(&mut self, vars: &[Var], grads: &mut Grads) -> Result<bool> {
        pollster::block_on(self.unscale_async(vars, grads))
    }

    /// Unscales, then steps `optimizer` over `vars` when the gradients are finite; returns
    /// whether it stepped.
    pub async fn step_async(
        &mut self,
        optimizer: &mut impl Optimizer,
        vars: &[Var],
        grads: &mut Grads,
    ) -> Result<bool> {
        let finite = self.unscale_async(vars, grads).await?;
        if finite {
            optimizer.step_vars(vars, grads)?;
        }
        Ok(finite)
    }

    /// [`LossScaler::step_async`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn step(&mut self, optimizer: &mut impl Optimizer, vars: &[Var], grads: &mut Grads) -> Result<bool> {
        pollster::block_on(self.step_async(optimizer, vars, grads))
    }
}

/// Replaces the gradient of each of `vars` in `grads` by [`unscale`]'s, each taken from the
/// scaled gradient (a variable listed twice is divided once).
pub(crate) fn unscale_all(op: &'static str, vars: &[Var], grads: &mut Grads, state: &Tensor) -> Result<()> {
    let unscaled: Vec<Option<Tensor>> = vars
        .iter()
        .map(|v| grads.get(v).map(|g| unscale(op, g, state)).transpose())
        .collect::<Result<_>>()?;
    for (v, g) in vars.iter().zip(unscaled) {
        if let (Some(slot), Some(g)) = (grads.get_mut(v), g) {
            *slot = g;
        }
    }
    Ok(())
}

/// `g / S` (any shape, f32) as a new dense tensor, S = state[0], setting state[2] (found) to 1
/// when an element of g or of the result is not finite (`shaders/train/unscale.wgsl`).
fn unscale(op: &'static str, g: &Tensor, state: &Tensor) -> Result<Tensor> {
    g.expect_dtype(op, "grads", &[DType::F32])?;
    let g = g.contiguous()?;
    let out = Tensor::zeros(g.context(), g.shape())?;
    match g.context().gpu() {
        Some(gpu) => {
            let params = Params::new().usize(g.len());
            let buffers = [g.gpu_buffer(op)?, out.gpu_buffer(op)?, state.gpu_buffer(op)?];
            gpu.dispatch_items(&gpu.kernel(&UNSCALE, &[])?, &params, &buffers, g.len())?;
        }
        None => {
            let mut st = state.host(op)?;
            let host = g.host(op)?;
            let inv = 1.0 / st[[0]];
            let scaled = host.mapv(|v| v * inv);
            out.host_write(&scaled.view(), op)?;
            if host.iter().chain(scaled.iter()).any(|v| !v.is_finite()) {
                st[[2]] = 1.0;
                state.host_write(&st.view(), op)?;
            }
        }
    }
    Ok(out)
}

/// The scaler's step over its state (5,) after a step's unscale: `shaders/train/
/// loss_scale_update.wgsl`, whose rule the CPU context's branch repeats.
pub(crate) fn update(op: &'static str, state: &Tensor, growth_interval: u32) -> Result<()> {
    match state.context().gpu() {
        Some(gpu) => {
            let params = Params::new().u32(growth_interval);
            gpu.dispatch(&gpu.kernel(&UPDATE, &[])?, &params, &[state.gpu_buffer(op)?], [1, 1, 1])
        }
        None => {
            let mut s = state.host(op)?;
            let found = s[[2]];
            if found != 0.0 {
                // Halving stops at the smallest normal f32, so S never reaches 0.
                s[[0]] = (s[[0]] * 0.5).max(f32::MIN_POSITIVE);
                s[[1]] = 0.0;
                s[[3]] += 1.0;
            } else if s[[1]] + 1.0 >= growth_interval as f32 {
                s[[1]] = 0.0;
                // Doubling stops short of inf: S stays a finite power of two times the first.
                if (s[[0]] * 2.0).is_finite() {
                    s[[0]] *= 2.0;
                }
            } else {
                s[[1]] += 1.0;
            }
            s[[4]] = found;
            s[[2]] = 0.0;
            state.host_write(&s.view(), op)
        }
    }
}
