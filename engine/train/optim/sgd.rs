//! SGD with momentum, optional Nesterov and L2 weight decay, updating parameters in place on
//! the device (`shaders/train/optim/sgd.wgsl`).
//!
//! Per element (PyTorch's `SGD` without dampening): `g' = g + weight_decay w`,
//! `b = momentum b + g'` (b starts at 0, so the first step's b is g'), then
//! `w -= lr (g' + momentum b)` with Nesterov, else `w -= lr b`. Momentum 0 is plain SGD.

use super::{check_nonnegative, check_step, state_file, zero_state, Optimizer};
use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::tensor::Tensor;

const SGD: KernelDef = KernelDef::new("train/optim/sgd", shader!("train/optim/sgd.wgsl"), "sgd");

/// SGD's settings and its velocities, one per parameter tensor.
#[derive(Debug)]
pub struct Sgd {
    /// Learning rate.
    pub lr: f32,
    /// Momentum, in [0, 1) (0: plain SGD).
    pub momentum: f32,
    /// Nesterov momentum (needs `momentum > 0` to differ from plain SGD).
    pub nesterov: bool,
    /// L2 weight decay added to the gradient as `weight_decay * w`.
    pub weight_decay: f32,
    steps: u32,
    /// The velocity b per parameter, the parameter's shape.
    velocity: Vec<Tensor>,
}

fn check_settings(s: &Sgd) -> Result<()> {
    let op = "sgd";
    check_nonnegative(op, "lr", "learning rate", s.lr)?;
    check_nonnegative(op, "weight_decay", "weight decay", s.weight_decay)?;
    if !(0.0..1.0).contains(&s.momentum) {
        return Err(Error::value(op, "momentum", "a value in [0, 1)", s.momentum));
    }
    Ok(())
}

impl Sgd {
    /// SGD on `params` (dense tensors updated in place) with learning rate `lr` and
    /// `momentum` in [0, 1); no Nesterov, no decay (set the fields to change them).
    pub fn new(params: &[&Tensor], lr: f32, momentum: f32) -> Result<Self> {
        let sgd = Sgd {
            lr,
            momentum,
            nesterov: false,
            weight_decay: 0.0,
            steps: 0,
            velocity: vec![],
        };
        check_settings(&sgd)?;
        Ok(Sgd {
            velocity: zero_state("sgd", params)?,
            ..sgd
        })
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// One step: each parameter moves against its gradient (same order and shapes as `new`).
    pub fn step(&mut self, params: &[&Tensor], grads: &[&Tensor]) -> Result<()> {
        self.step_tensors(params, grads)
    }

    /// [`Optimizer::step_some`]: the parameters whose gradient is None keep their values and
    /// velocities.
    pub fn step_some(&mut self, params: &[&Tensor], grads: &[Option<&Tensor>]) -> Result<()> {
        let op = "sgd";
        check_settings(self)?;
        let states: Vec<&Tensor> = self.velocity.iter().collect();
        check_step(op, &states, params, grads)?;
        self.steps += 1;
        let (lr, mu, wd) = (self.lr, self.momentum, self.weight_decay);
        let nesterov = self.nesterov;
        for ((p, g), b) in params.iter().zip(grads).zip(&self.velocity) {
            let Some(g) = g else { continue };
            match p.context().gpu() {
                Some(gpu) => {
                    let g = g.contiguous()?;
                    let n = p.len();
                    let params = Params::new().usize(n).f32(lr).f32(mu).f32(wd).u32(nesterov as u32);
                    gpu.dispatch_items(
                        &gpu.kernel(&SGD, &[])?,
                        &params,
                        &[g.gpu_buffer(op)?, p.gpu_buffer(op)?, b.gpu_buffer(op)?],
                        n,
                    )?;
                }
                None => {
                    let (mut w, gr, mut bh) = (p.host(op)?, g.host(op)?, b.host(op)?);
                    ndarray::Zip::from(&mut w).and(&gr).and(&mut bh).for_each(|w, &g, b| {
                        let g = g + wd * *w;
                        *b = mu * *b + g;
                        let d = if nesterov { g + mu * *b } else { *b };
                        *w -= lr * d;
                    });
                    p.host_write(&w.view(), op)?;
                    b.host_write(&bh.view(), op)?;
                }
            }
        }
        Ok(())
    }
}

impl Optimizer for Sgd {
    fn lr(&self) -> f32 {
        self.lr
    }

    fn set_lr(&mut self, lr: f32) {
        self.lr = lr;
    }

    fn step_some(&mut self, params: &[&Tensor], grads: &[Option<&Tensor>]) -> Result<()> {
        Sgd::step_some(self, params, grads)
    }

    fn state(&self) -> Vec<&Tensor> {
        self.velocity.iter().collect()
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn state_bytes(&self) -> Result<Vec<u8>> {
        let tensors: Vec<(String, &Tensor)> = self
            .velocity
            .iter()
            .enumerate()
            .map(|(i, b)| (format!("velocity.{i}"), b))
            .collect();
        state_file::to_bytes(
            "sgd",
            self.velocity.len(),
            &tensors,
            &[("steps", self.steps.to_string())],
        )
    }

    fn load_state_bytes(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        let file = state_file::StateFile::parse(bytes, what, "sgd", self.velocity.len())?;
        let targets: Vec<(String, &Tensor)> = self
            .velocity
            .iter()
            .enumerate()
            .map(|(i, b)| (format!("velocity.{i}"), b))
            .collect();
        let steps = file.u32("steps")?;
        let values = file.values(&targets)?;
        state_file::write_all(&targets, values)?;
        self.steps = steps;
        Ok(())
    }
}
