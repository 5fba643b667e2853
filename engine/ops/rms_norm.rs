//! RMS norm over the last axis, one workgroup per row (`shaders/ops/rms_norm.wgsl`): the
//! normalisation of Llama-style models; its backward is the layer norm's kernel with the
//! mean left out (`shaders/ops/layer_norm_backward.wgsl` with `RMS`).

use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::ops::softmax::rows_cols;
use crate::reference;
use crate::shape::DType;
use crate::tensor::Tensor;

const RMS_NORM: KernelDef = KernelDef::new("ops/rms_norm", shader!("ops/rms_norm.wgsl"), "rms_norm");

/// `x / sqrt(mean(x^2) + eps) * weight` over the last axis (Llama uses eps = 1e-5 or 1e-6).
/// x (..., n) F32, weight (n,) F32, F16 or BF16 -> (..., n) F32. Rows of any finite size
/// (up to f32::MAX) give finite results: the kernel scales each row by a power of two first.
pub fn rms_norm(x: &Tensor, weight: &Tensor, eps: f32) -> Result<Tensor> {
    let op = "rms_norm";
    x.expect_dtype(op, "x", &[DType::F32])?;
    let (rows, cols) = rows_cols(op, x)?;
    let ctx = x.context();
    weight.expect_context(ctx, op, "weight")?;
    if weight.shape() != [cols] {
        return Err(Error::shape(
            op,
            "weight",
            format!("[{cols}] (the last axis of x {:?})", x.shape()),
            weight.shape(),
        ));
    }
    if !(eps >= 0.0 && eps.is_finite()) {
        return Err(Error::value(op, "eps", "a finite value >= 0", eps));
    }
    let Some(gpu) = ctx.gpu() else {
        let w = weight.host_widened(op)?;
        return Tensor::from_host(ctx, reference::nn::rms_norm(&x.host(op)?.view(), &w.view(), eps)?);
    };
    let (x, weight) = (x.contiguous()?, weight.contiguous()?);
    let out = Tensor::uninit(ctx, x.shape(), op)?;
    if rows == 0 {
        return Ok(out);
    }
    let params = Params::new().usize(rows).usize(cols).f32(eps);
    let kernel = gpu.typed_kernel(&RMS_NORM, &[("weight", weight.dtype())], &[])?;
    let buffers = [x.gpu_buffer(op)?, weight.typed_buffer(op)?, out.gpu_buffer(op)?];
    gpu.dispatch(&kernel, &params, &buffers, groups_1d(rows as u32))?;
    Ok(out)
}

/// The backward of [`rms_norm`] from dL/dy `g`: (dx, g xhat) with xhat = x rstd, so
/// dL/dweight is the column sums of g xhat; with gw = g weight, dx = rstd (gw - xhat
/// mean(gw xhat)) per row. One launch on a GPU (the layer norm backward's kernel with `RMS`),
/// f64 rows on the CPU context. x, g (..., n) F32, weight (n,) F32, F16 or BF16 -> two
/// (..., n) F32.
pub fn rms_norm_backward(x: &Tensor, weight: &Tensor, g: &Tensor, eps: f32) -> Result<(Tensor, Tensor)> {
    crate::ops::layer_norm::norm_backward("rms_norm_backward", x, weight, g, eps, true)
}
