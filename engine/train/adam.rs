//! Adam, updating parameters in place on the device (`shaders/train/adam.wgsl`).

use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::tensor::Tensor;

const ADAM: KernelDef = KernelDef::new("train/adam", shader!("train/adam.wgsl"), "adam");

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
    steps: u32,
    /// (m, v) per parameter, the parameter's shape.
    moments: Vec<(Tensor, Tensor)>,
}

/// Adam's settings: lr finite and >= 0, beta1 and beta2 in [0, 1), eps finite and > 0.
fn check_settings(lr: f32, beta1: f32, beta2: f32, eps: f32) -> Result<()> {
    let op = "adam";
    if !(lr >= 0.0 && lr.is_finite()) {
        return Err(Error::value(op, "lr", "a finite learning rate >= 0", lr));
    }
    for (name, b) in [("beta1", beta1), ("beta2", beta2)] {
        if !(0.0..1.0).contains(&b) {
            return Err(Error::value(op, name, "a value in [0, 1)", b));
        }
    }
    if !(eps > 0.0 && eps.is_finite()) {
        return Err(Error::value(op, "eps", "a finite value > 0", eps));
    }
    Ok(())
}

impl Adam {
    /// Zero moments for `params` (dense tensors the optimiser will update in place). `lr`
    /// must be finite and >= 0 (a NaN would turn every parameter into NaN).
    pub fn new(params: &[&Tensor], lr: f32) -> Result<Self> {
        check_settings(lr, 0.9, 0.999, 1e-8)?;
        let moments = params
            .iter()
            .map(|p| {
                if !p.is_contiguous() {
                    return Err(Error::value(
                        "adam",
                        "params",
                        "dense tensors (updated in place)",
                        "a view",
                    ));
                }
                Ok((
                    Tensor::zeros(p.context(), p.shape())?,
                    Tensor::zeros(p.context(), p.shape())?,
                ))
            })
            .collect::<Result<_>>()?;
        Ok(Adam {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            steps: 0,
            moments,
        })
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// One step: each parameter moves against its gradient (same order and shapes as `new`).
    pub fn step(&mut self, params: &[&Tensor], grads: &[&Tensor]) -> Result<()> {
        let op = "adam";
        if params.len() != self.moments.len() || grads.len() != params.len() {
            return Err(Error::value(
                op,
                "params / grads",
                format!("{} of each (as at creation)", self.moments.len()),
                format!("{} params, {} grads", params.len(), grads.len()),
            ));
        }
        // The settings are public fields: checked again, with every pair, before anything
        // moves, so an error leaves the model as it was.
        check_settings(self.lr, self.beta1, self.beta2, self.eps)?;
        for (i, ((p, g), (m, _))) in params.iter().zip(grads).zip(&self.moments).enumerate() {
            if p.shape() != m.shape() {
                return Err(Error::value(
                    op,
                    "params",
                    format!("the tensors Adam was created with (param {i} of shape {:?})", m.shape()),
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
            p.expect_context(m.context(), op, "params")?;
            g.expect_context(m.context(), op, "grads")?;
        }
        self.steps += 1;
        let c1 = 1.0 - self.beta1.powi(self.steps as i32);
        let c2 = 1.0 - self.beta2.powi(self.steps as i32);
        for ((p, g), (m, v)) in params.iter().zip(grads).zip(&self.moments) {
            match p.context().gpu() {
                Some(gpu) => {
                    let g = g.contiguous()?;
                    let n = p.len();
                    let params = Params::new()
                        .usize(n)
                        .f32(self.lr)
                        .f32(self.beta1)
                        .f32(self.beta2)
                        .f32(self.eps)
                        .f32(c1)
                        .f32(c2);
                    gpu.dispatch_items(
                        &gpu.kernel(&ADAM, &[])?,
                        &params,
                        &[
                            g.gpu_buffer(op)?,
                            p.gpu_buffer(op)?,
                            m.gpu_buffer(op)?,
                            v.gpu_buffer(op)?,
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
                            *m = self.beta1 * *m + (1.0 - self.beta1) * g;
                            *v = self.beta2 * *v + (1.0 - self.beta2) * g * g;
                            *w -= self.lr * (*m / c1) / ((*v / c2).sqrt() + self.eps);
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
