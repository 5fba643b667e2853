//! Softmax cross-entropy with its gradient, one launch (`shaders/ops/cross_entropy.wgsl`),
//! against targets on the host or on the device ([`super::Ids`]), and the tied head's form
//! over logits padded to a multiple of 64 columns (`cross_entropy_padded`).

use ndarray::Ix2;

use super::Ids;
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::reference;
use crate::tensor::Tensor;

const CROSS_ENTROPY: KernelDef =
    KernelDef::new("ops/cross_entropy", shader!("ops/cross_entropy.wgsl"), "cross_entropy");

/// Per-row losses and the gradient of their mean.
#[derive(Clone, Debug)]
pub struct CrossEntropy {
    /// (R,): logsumexp(logits_r) - logits_r\[target_r\].
    pub loss: Tensor,
    /// (R, V): d mean(loss) / d logits.
    pub grad: Tensor,
}

/// Cross-entropy of logits (R, V) against `targets` (R class indices below V).
pub fn cross_entropy(logits: &Tensor, targets: &[u32]) -> Result<CrossEntropy> {
    let op = "cross_entropy";
    let (rows, cols) = check_logits(op, logits)?;
    let ctx = logits.context();
    let Some(gpu) = ctx.gpu() else {
        check_host_targets(op, targets, rows, cols)?;
        let x = logits
            .host(op)?
            .into_dimensionality::<Ix2>()
            .map_err(|_| Error::shape(op, "logits", "(N, V)", logits.shape()))?;
        let (loss, grad) = reference::nn::cross_entropy(&x.view(), targets)?;
        return Ok(CrossEntropy {
            loss: Tensor::from_host(ctx, loss.into_dyn())?,
            grad: Tensor::from_host(ctx, grad.into_dyn())?,
        });
    };
    run(op, gpu, logits, Ids::Host(targets))
}

/// [`cross_entropy`] with the targets on the device ((R,) F32 exact whole values, written by
/// `Tensor::write_ids`, which checked them below V): no upload, so a compiled step can hold
/// it. On the CPU context the targets are read back and the host path runs.
pub(crate) fn cross_entropy_of(logits: &Tensor, targets: &Tensor) -> Result<CrossEntropy> {
    let op = "cross_entropy";
    let ctx = logits.context();
    Ids::check_device(targets, ctx, op, "targets")?;
    let Some(gpu) = ctx.gpu() else {
        return cross_entropy(logits, &Ids::read_back(targets, op, "targets")?);
    };
    check_logits(op, logits)?;
    run(op, gpu, logits, Ids::Device(targets))
}

/// The kernel over logits (R, V) on the device: the gradient of the mean, dense.
fn run(op: &'static str, gpu: &Gpu, logits: &Tensor, targets: Ids) -> Result<CrossEntropy> {
    let (rows, cols) = (logits.shape()[0], logits.shape()[1]);
    let target = device_targets(op, logits, targets, rows, cols)?;
    let logits = logits.contiguous()?;
    let grad = Tensor::uninit(logits.context(), &[rows, cols], op)?;
    let loss = launch(op, gpu, &logits, cols, &target, 1.0 / rows.max(1) as f32, &grad)?;
    Ok(CrossEntropy { loss, grad })
}

/// The tied head's form: logits (R, Vp) dense, of which the first `v` columns are the
/// classes' (Vp >= v, the rest padding), and the targets -> the per-row losses (R,) and the
/// gradient `(softmax - onehot) * scale` (R, Vp), its padding columns 0. On the GPU one
/// launch reads the padded logits and writes the padded gradient (no copy of either, no
/// fill); on the CPU context the host path runs and its gradient is padded.
pub(crate) fn cross_entropy_padded(logits: &Tensor, v: usize, targets: Ids, scale: f32) -> Result<(Tensor, Tensor)> {
    let op = "cross_entropy";
    let (rows, vp) = check_logits(op, logits)?;
    if v == 0 || v > vp || !logits.is_contiguous() {
        return Err(Error::shape(
            op,
            "logits",
            format!("dense (R, Vp >= V = {v})"),
            logits.shape(),
        ));
    }
    let ctx = logits.context();
    let Some(gpu) = ctx.gpu() else {
        let classes = logits.narrow(1, 0, v)?;
        let ce = match targets {
            Ids::Host(h) => cross_entropy(&classes, h)?,
            Ids::Device(d) => cross_entropy_of(&classes, d)?,
        };
        let grad = Tensor::zeros(ctx, &[rows, vp])?;
        let factor = scale * rows as f32; // ce.grad carries 1 / rows
        super::copy_into(
            &grad.narrow(1, 0, v)?,
            &super::binary_scalar(crate::expr::Binary::Mul, &ce.grad, factor)?,
        )?;
        return Ok((ce.loss, grad));
    };
    let target = device_targets(op, logits, targets, rows, v)?;
    let grad = Tensor::uninit(ctx, &[rows, vp], op)?;
    let loss = launch(op, gpu, logits, v, &target, scale, &grad)?;
    Ok((loss, grad))
}

/// Logits (R, V) with 1 <= V < 2^24 (targets travel as f32): (R, V).
fn check_logits(op: &'static str, logits: &Tensor) -> Result<(usize, usize)> {
    match *logits.shape() {
        [rows, cols] if cols >= 1 && cols < 1 << 24 => Ok((rows, cols)),
        _ => Err(Error::shape(op, "logits", "(R, V) with 1 <= V < 2^24", logits.shape())),
    }
}

/// Host targets: one per row, each below `classes`.
fn check_host_targets(op: &'static str, targets: &[u32], rows: usize, classes: usize) -> Result<()> {
    if targets.len() != rows {
        return Err(Error::value(
            op,
            "targets",
            format!("{rows} indices (one per logits row)"),
            targets.len(),
        ));
    }
    if let Some((i, &t)) = targets.iter().enumerate().find(|(_, &t)| t as usize >= classes) {
        return Err(Error::value(
            op,
            "targets",
            format!("class indices below V = {classes}"),
            format!("{t} at [{i}]"),
        ));
    }
    Ok(())
}

/// The targets as a dense (R,) tensor of exact f32 values on the logits' context: host
/// targets checked and uploaded, device targets checked for shape and context (their values
/// are `Tensor::write_ids`'s to check).
fn device_targets(op: &'static str, logits: &Tensor, targets: Ids, rows: usize, classes: usize) -> Result<Tensor> {
    let ctx = logits.context();
    match targets {
        Ids::Host(h) => {
            check_host_targets(op, h, rows, classes)?;
            let values: Vec<f32> = h.iter().map(|&t| t as f32).collect();
            Tensor::from_slice(ctx, &[rows], &values)
        }
        Ids::Device(d) => {
            Ids::check_device(d, ctx, op, "targets")?;
            if d.len() != rows {
                return Err(Error::value(
                    op,
                    "targets",
                    format!("{rows} indices (one per logits row)"),
                    d.len(),
                ));
            }
            d.contiguous()
        }
    }
}

/// One launch over dense logits (R, stride) of which `cols` are read, into `grad` (R, stride)
/// -> the losses (R,).
fn launch(
    op: &'static str,
    gpu: &Gpu,
    logits: &Tensor,
    cols: usize,
    target: &Tensor,
    scale: f32,
    grad: &Tensor,
) -> Result<Tensor> {
    let (rows, stride) = (logits.shape()[0], logits.shape()[1]);
    let loss = Tensor::uninit(logits.context(), &[rows], op)?;
    if rows > 0 {
        gpu.dispatch(
            &gpu.kernel(&CROSS_ENTROPY, &[])?,
            &Params::new().usize(rows).usize(cols).usize(stride).f32(scale),
            &[
                logits.gpu_buffer(op)?,
                target.gpu_buffer(op)?,
                loss.gpu_buffer(op)?,
                grad.gpu_buffer(op)?,
            ],
            groups_1d(rows as u32),
        )?;
    }
    Ok(loss)
}
