//! Adam and AdamW, updating parameters in place on the device (`shaders/train/optim/adam.wgsl`).
//!
//! Per element, with `t` the step count, `c1 = 1 - beta1^t`, `c2 = 1 - beta2^t` (beta^t as
//! running f32 products, kept on the host and on the device alike: a captured step that a
//! plan replays steps on):
//! `g' = g + l2 w` (Adam's L2 decay), `m = beta1 m + (1 - beta1) g'`,
//! `v = beta2 v + (1 - beta2) g'^2`, `w = w (1 - lr wd) - lr (m / c1) / (sqrt(v / c2) + eps)`
//! (AdamW's decoupled decay `wd`). With both decays 0 the update is plain Adam, bit for bit.

use super::{check_nonnegative, check_step, state_file, zero_state, Optimizer};
use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::tensor::Tensor;

const ADAM: KernelDef = KernelDef::new("train/optim/adam", shader!("train/optim/adam.wgsl"), "adam");
const ADAM_TICK: KernelDef = KernelDef::new(
    "train/optim/adam_tick",
    shader!("train/optim/adam_tick.wgsl"),
    "adam_tick",
);

/// Adam's settings and its moments, one pair per parameter tensor.
#[derive(Debug)]
pub struct Adam {
    /// Learning rate.
    pub lr: f32,
    /// Decay of the first moment (0.9).
    pub beta1: f32,
    /// Decay of the second moment (0.999).
    pub beta2: f32,
    /// Added to the second moment's square root (1e-8).
    pub eps: f32,
    /// Weight decay (0: none): decoupled (AdamW) when `decoupled`, else added to the gradient
    /// as `weight_decay * w` (Adam with L2).
    pub weight_decay: f32,
    /// Whether `weight_decay` is AdamW's decoupled decay.
    pub decoupled: bool,
    steps: u32,
    /// (m, v) per parameter, the parameter's shape.
    moments: Vec<(Tensor, Tensor)>,
    /// beta1^t and beta2^t as running f32 products on the host (the CPU context's step) ...
    powers: (f32, f32),
    /// ... and on the device (2,), advanced by each step's first kernel
    /// (`shaders/train/optim/adam_tick.wgsl`) with the same multiplications: the bias corrections
    /// come from them, so a training step captured in a plan steps on at every replay. On the
    /// parameters' context (None without parameters).
    device_powers: Option<Tensor>,
    /// (1,) zero: the gate of an ungated step on the device (the kernels read one always).
    no_gate: Option<Tensor>,
}

/// Adam's settings: lr and weight_decay finite and >= 0, beta1 and beta2 in [0, 1), eps
/// finite and > 0.
fn check_settings(a: &Adam) -> Result<()> {
    let op = "adam";
    check_nonnegative(op, "lr", "learning rate", a.lr)?;
    check_nonnegative(op, "weight_decay", "weight decay", a.weight_decay)?;
    for (name, b) in [("beta1", a.beta1), ("beta2", a.beta2)] {
        if !(0.0..1.0).contains(&b) {
            return Err(Error::value(op, name, "a value in [0, 1)", b));
        }
    }
    if !(a.eps > 0.0 && a.eps.is_finite()) {
        return Err(Error::value(op, "eps", "a finite value > 0", a.eps));
    }
    Ok(())
}

impl Adam {
    /// Zero moments for `params` (dense tensors the optimiser will update in place). `lr`
    /// must be finite and >= 0 (a NaN would turn every parameter into NaN).
    pub fn new(params: &[&Tensor], lr: f32) -> Result<Self> {
        Self::with_decay(params, lr, 0.0, false)
    }

    /// AdamW: Adam with decoupled weight decay `weight_decay` (finite, >= 0): each step first
    /// shrinks every weight by `lr * weight_decay` of itself (Loshchilov & Hutter).
    pub fn adamw(params: &[&Tensor], lr: f32, weight_decay: f32) -> Result<Self> {
        Self::with_decay(params, lr, weight_decay, true)
    }

    fn with_decay(params: &[&Tensor], lr: f32, weight_decay: f32, decoupled: bool) -> Result<Self> {
        let adam = Adam {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay,
            decoupled,
            steps: 0,
            moments: vec![],
            powers: (1.0, 1.0),
            device_powers: None,
            no_gate: None,
        };
        check_settings(&adam)?;
        let m = zero_state("adam", params)?;
        let v = zero_state("adam", params)?;
        let device_powers = params
            .first()
            .map(|p| Tensor::full(p.context(), &[2], 1.0))
            .transpose()?;
        let no_gate = params.first().map(|p| Tensor::zeros(p.context(), &[1])).transpose()?;
        Ok(Adam {
            moments: m.into_iter().zip(v).collect(),
            device_powers,
            no_gate,
            ..adam
        })
    }

    /// Steps taken so far by [`Adam::step`] calls (a plan's replays of a captured step
    /// advance the device's count, not this one).
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// The optimiser's state tensors: each parameter's (m, v), then the device's powers.
    /// A plan that captures a step holds them (`train::CompiledStep`).
    pub fn state(&self) -> Vec<&Tensor> {
        let mut s: Vec<&Tensor> = self.moments.iter().flat_map(|(m, v)| [m, v]).collect();
        s.extend(&self.device_powers);
        s.extend(&self.no_gate);
        s
    }

    /// One step: each parameter moves against its gradient (same order and shapes as `new`).
    pub fn step(&mut self, params: &[&Tensor], grads: &[&Tensor]) -> Result<()> {
        self.step_tensors(params, grads)
    }

    /// [`Optimizer::step_some`]: the parameters whose gradient is None keep their values and
    /// moments; the bias corrections advance once for the step.
    pub fn step_some(&mut self, params: &[&Tensor], grads: &[Option<&Tensor>]) -> Result<()> {
        self.step_gated(params, grads, None)
    }

    /// [`Adam::step_some`] on the device, changing nothing (parameters, moments, powers) where
    /// `gate` (a one-element view) holds a value other than 0 when the step runs: how a
    /// captured loss-scaled step skips an overflowed update (`train::CompiledStep::capture_scaled`).
    /// GPU contexts only with a gate.
    fn step_gated(&mut self, params: &[&Tensor], grads: &[Option<&Tensor>], gate: Option<&Tensor>) -> Result<()> {
        let op = "adam";
        // The settings are public fields: checked again, with every pair, before anything
        // moves, so an error leaves the model as it was.
        check_settings(self)?;
        let states: Vec<&Tensor> = self.moments.iter().map(|(m, _)| m).collect();
        check_step(op, &states, params, grads)?;
        let powers = self.device_powers.as_ref().filter(|t| t.context().is_gpu());
        if gate.is_some() && powers.is_none() {
            return Err(Error::Unsupported {
                op,
                message: "a gated step runs on a GPU context's parameters".into(),
            });
        }
        let gate = gate.or(self.no_gate.as_ref());
        if let Some(g) = gate.filter(|g| g.len() != 1) {
            return Err(Error::shape(op, "gate", "one element", g.shape()));
        }
        let gate_buffer = || {
            gate.map_or(Err(Error::value(op, "params", "parameters", "none")), |g| {
                g.gpu_buffer(op)
            })
        };
        let gate_at = gate.map_or(0, |g| g.layout().offset);
        self.steps += 1;
        // 1 - beta^t from running products (not powi), the multiplications the device makes.
        self.powers = (self.powers.0 * self.beta1, self.powers.1 * self.beta2);
        let (c1, c2) = (1.0 - self.powers.0, 1.0 - self.powers.1);
        let (l2, wd) = match self.decoupled {
            true => (0.0, self.lr * self.weight_decay),
            false => (self.weight_decay, 0.0),
        };
        let (lr, b1, b2, eps) = (self.lr, self.beta1, self.beta2, self.eps);
        if let Some(t) = powers {
            let gpu = t.context().require_gpu(op)?;
            let params = Params::new().f32(self.beta1).f32(self.beta2).usize(gate_at);
            let buffers = [t.gpu_buffer(op)?, gate_buffer()?];
            gpu.dispatch(&gpu.kernel(&ADAM_TICK, &[])?, &params, &buffers, [1, 1, 1])?;
        }
        for ((p, g), (m, v)) in params.iter().zip(grads).zip(&self.moments) {
            let Some(g) = g else { continue };
            match p.context().gpu() {
                Some(gpu) => {
                    let g = g.contiguous()?;
                    let n = p.len();
                    let params = Params::new()
                        .usize(n)
                        .f32(lr)
                        .f32(b1)
                        .f32(b2)
                        .f32(eps)
                        .f32(l2)
                        .f32(wd)
                        .usize(gate_at);
                    gpu.dispatch_items(
                        &gpu.kernel(&ADAM, &[])?,
                        &params,
                        &[
                            g.gpu_buffer(op)?,
                            p.gpu_buffer(op)?,
                            m.gpu_buffer(op)?,
                            v.gpu_buffer(op)?,
                            powers.map_or(Err(Error::value(op, "params", "parameters", "none")), |t| {
                                t.gpu_buffer(op)
                            })?,
                            gate_buffer()?,
                        ],
                        n,
                    )?;
                }
                None => {
                    let (mut w, gr) = (p.host(op)?, g.host(op)?);
                    let (mut mh, mut vh) = (m.host(op)?, v.host(op)?);
                    ndarray::Zip::from(&mut w)
                        .and(&gr)
                        .and(&mut mh)
                        .and(&mut vh)
                        .for_each(|w, &g, m, v| {
                            let g = g + l2 * *w;
                            *m = b1 * *m + (1.0 - b1) * g;
                            *v = b2 * *v + (1.0 - b2) * g * g;
                            *w = *w * (1.0 - wd) - lr * (*m / c1) / ((*v / c2).sqrt() + eps);
                        });
                    p.host_write(&w.view(), op)?;
                    m.host_write(&mh.view(), op)?;
                    v.host_write(&vh.view(), op)?;
                }
            }
        }
        Ok(())
    }
}

impl Optimizer for Adam {
    fn lr(&self) -> f32 {
        self.lr
    }

    fn set_lr(&mut self, lr: f32) {
        self.lr = lr;
    }

    fn step_some(&mut self, params: &[&Tensor], grads: &[Option<&Tensor>]) -> Result<()> {
        Adam::step_some(self, params, grads)
    }

    fn step_some_gated(&mut self, params: &[&Tensor], grads: &[Option<&Tensor>], gate: &Tensor) -> Result<()> {
        Adam::step_gated(self, params, grads, Some(gate))
    }

    fn state(&self) -> Vec<&Tensor> {
        Adam::state(self)
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn state_bytes(&self) -> Result<Vec<u8>> {
        let mut tensors: Vec<(String, &Tensor)> = vec![];
        for (i, (m, v)) in self.moments.iter().enumerate() {
            tensors.push((format!("m.{i}"), m));
            tensors.push((format!("v.{i}"), v));
        }
        // The powers the bias corrections come from, written alike to the tensor and to the
        // metadata, so the file resumes on either kind of context: on a GPU the device's
        // (a captured step's replays advance them, not the host's), on the CPU the host's
        // (the device copy is not stepped there).
        let powers = match self.device_powers.as_ref().filter(|t| t.context().is_gpu()) {
            Some(t) => match t.to_vec()?.as_slice() {
                [b1, b2] => (*b1, *b2),
                _ => self.powers,
            },
            None => self.powers,
        };
        let device = match &self.device_powers {
            Some(t) => Some(Tensor::from_slice(t.context(), &[2], &[powers.0, powers.1])?),
            None => None,
        };
        if let Some(p) = &device {
            tensors.push(("device_powers".into(), p));
        }
        let scalars = [
            ("steps", self.steps.to_string()),
            ("powers", state_file::f32_bits(&[powers.0, powers.1])),
        ];
        state_file::to_bytes(self.kind(), self.moments.len(), &tensors, &scalars)
    }

    fn load_state_bytes(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        let file = state_file::StateFile::parse(bytes, what, self.kind(), self.moments.len())?;
        let mut targets: Vec<(String, &Tensor)> = vec![];
        for (i, (m, v)) in self.moments.iter().enumerate() {
            targets.push((format!("m.{i}"), m));
            targets.push((format!("v.{i}"), v));
        }
        if let Some(p) = &self.device_powers {
            targets.push(("device_powers".into(), p));
        }
        let steps = file.u32("steps")?;
        let powers = file.f32_bits("powers", 2)?;
        // Every check first (names, shapes, scalars), then the writes: nothing changes on error.
        let values = file.values(&targets)?;
        state_file::write_all(&targets, values)?;
        self.steps = steps;
        self.powers = (powers[0], powers[1]);
        Ok(())
    }
}

impl Adam {
    /// The optimiser's name in a state file: AdamW's decoupled decay makes it another one.
    fn kind(&self) -> &'static str {
        match self.decoupled {
            true => "adamw",
            false => "adam",
        }
    }
}
