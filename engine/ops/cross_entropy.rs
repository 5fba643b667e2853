//! Softmax cross-entropy with its gradient, one launch (`shaders/ops/cross_entropy.wgsl`).

use ndarray::Ix2;

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
    if logits.rank() != 2 || logits.shape()[1] == 0 {
        return Err(Error::shape(op, "logits", "(R, V) with V >= 1", logits.shape()));
    }
    let (rows, cols) = (logits.shape()[0], logits.shape()[1]);
    if targets.len() != rows {
        return Err(Error::value(
            op,
            "targets",
            format!("{rows} indices (one per logits row)"),
            targets.len(),
        ));
    }
    if cols >= 1 << 24 {
        return Err(Error::shape(
            op,
            "logits",
            "V below 2^24 (targets travel as f32)",
            logits.shape(),
        ));
    }
    if let Some((i, &t)) = targets.iter().enumerate().find(|(_, &t)| t as usize >= cols) {
        return Err(Error::value(
            op,
            "targets",
            format!("class indices below V = {cols}"),
            format!("{t} at [{i}]"),
        ));
    }
    let ctx = logits.context();
    let Some(gpu) = ctx.gpu() else {
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
    let target: Vec<f32> = targets.iter().map(|&t| t as f32).collect();
    let target = Tensor::from_slice(ctx, &[rows], &target)?;
    run(op, gpu, logits, &target)
}

/// [`cross_entropy`] with the targets on the device ((R,) F32 exact whole values, written by
/// `Tensor::write_ids`, which checked them below V): no upload, so a compiled step can hold
/// it. On the CPU context the targets are read back and the host path runs.
pub(crate) fn cross_entropy_of(logits: &Tensor, targets: &Tensor) -> Result<CrossEntropy> {
    let op = "cross_entropy";
    let ctx = logits.context();
    super::Ids::check_device(targets, ctx, op, "targets")?;
    let Some(gpu) = ctx.gpu() else {
        return cross_entropy(logits, &super::Ids::read_back(targets, op, "targets")?);
    };
    if logits.rank() != 2 || logits.shape()[1] == 0 || logits.shape()[1] >= 1 << 24 {
        return Err(Error::shape(op, "logits", "(R, V) with 1 <= V < 2^24", logits.shape()));
    }
    if targets.len() != logits.shape()[0] {
        return Err(Error::value(
            op,
            "targets",
            format!("{} indices (one per logits row)", logits.shape()[0]),
            targets.len(),
        ));
    }
    run(op, gpu, logits, &targets.contiguous()?)
}

/// The kernel over logits (R, V) and dense targets (R,) on the device.
fn run(op: &'static str, gpu: &crate::context::Gpu, logits: &Tensor, target: &Tensor) -> Result<CrossEntropy> {
    let ctx = logits.context();
    let (rows, cols) = (logits.shape()[0], logits.shape()[1]);
    let logits = logits.contiguous()?;
    let loss = Tensor::uninit(ctx, &[rows], op)?;
    let grad = Tensor::uninit(ctx, &[rows, cols], op)?;
    if rows > 0 {
        gpu.dispatch(
            &gpu.kernel(&CROSS_ENTROPY, &[])?,
            &Params::new().usize(rows).usize(cols),
            &[
                logits.gpu_buffer(op)?,
                target.gpu_buffer(op)?,
                loss.gpu_buffer(op)?,
                grad.gpu_buffer(op)?,
            ],
            groups_1d(rows as u32),
        )?;
    }
    Ok(CrossEntropy { loss, grad })
}
