//! Reductions along the last axis, one workgroup per row.

use crate::context::Gpu;
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
    dispatch_rows(
        gpu,
        op,
        &SUM_ROWS,
        &Params::new().usize(rows).usize(cols),
        &x,
        &out,
        rows,
    )?;
    Ok(out)
}

/// Launches a row kernel that reads x (rows, cols) and writes out, one workgroup per row
/// (sum_rows, argmax, softmax); x and out are dense.
pub(crate) fn dispatch_rows(
    gpu: &Gpu,
    op: &'static str,
    def: &KernelDef,
    params: &Params,
    x: &Tensor,
    out: &Tensor,
    rows: usize,
) -> Result<()> {
    let kernel = gpu.kernel(def, &[])?;
    gpu.dispatch(
        &kernel,
        params,
        &[x.gpu_buffer(op)?, out.gpu_buffer(op)?],
        groups_1d(rows as u32),
    )
}
