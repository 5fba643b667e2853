//! Reductions along the last axis, one workgroup per row.

use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::reference;
use crate::tensor::Tensor;

const SUM_ROWS: KernelDef = KernelDef::new("reduce/sum_rows", shader!("reduce/sum_rows.wgsl"), "sum_rows");

/// Sum along the last axis (f32 accumulation on the GPU). x (..., n) -> (...).
pub fn sum_last(x: &Tensor) -> Result<Tensor> {
    let op = "sum_last";
    let Some((&cols, lead)) = x.shape().split_last() else {
        return Err(Error::shape(op, "x", "rank >= 1", x.shape()));
    };
    let ctx = x.context();
    let Some(gpu) = ctx.gpu() else {
        return Tensor::from_host(ctx, reference::reduce::sum_last(&x.host(op)?.view()));
    };
    let x = x.contiguous()?;
    let rows: usize = lead.iter().product();
    let out = Tensor::uninit(ctx, lead, op)?;
    let kernel = gpu.kernel(&SUM_ROWS, &[])?;
    let params = Params::new().usize(rows).usize(cols);
    gpu.dispatch(
        &kernel,
        &params,
        &[x.gpu_buffer(op)?, out.gpu_buffer(op)?],
        groups_1d(rows as u32),
    )?;
    Ok(out)
}
