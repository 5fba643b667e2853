//! Broadcasting a tensor to a shape, and its adjoint: summing back over the broadcast axes.
//!
//! `broadcast_to` is a view with stride 0 on the GPU (no copy; the scan kernel reads it in
//! place) and a copy on the CPU context. `reduce_to` sums leading axes as column sums
//! (`ops::reduce::sum_columns`); otherwise it permutes the summed axes last (a view),
//! makes it dense and sums rows: short rows one invocation each
//! (`shaders/element_scan/sum_short_rows.wgsl`), long rows with `ops::sum_last` (one
//! workgroup each).

use ndarray::IxDyn;

use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, Binding, KernelDef, Params};
use crate::ops;
use crate::shape::{broadcast_shape, broadcast_strides};
use crate::tensor::{Layout, Tensor};

const OP: &str = "broadcast-to";

/// Rows up to this long are summed by one invocation each.
const SHORT_ROW: usize = 256;

const SUM_SHORT_ROWS: KernelDef = KernelDef {
    name: "element_scan/sum_short_rows",
    wgsl: shader!("element_scan/sum_short_rows.wgsl"),
    entry: "sum_short_rows",
    bindings: &[Binding::Uniform, Binding::Read, Binding::ReadWrite],
};

/// x (shape a) -> (shape), numpy rules (a aligned at the last axis, size-1 axes stretch).
pub(crate) fn broadcast_to(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if broadcast_shape(OP, x.shape(), shape)? != shape {
        return Err(Error::mismatch(OP, "x", x.shape(), "shape", shape));
    }
    let ctx = x.context();
    if !ctx.is_gpu() {
        let a = x.host(OP)?;
        let b = a
            .broadcast(IxDyn(shape))
            .ok_or_else(|| Error::mismatch(OP, "x", x.shape(), "shape", shape))?
            .to_owned();
        return Tensor::from_host(ctx, b);
    }
    let layout = Layout {
        shape: shape.to_vec(),
        strides: broadcast_strides(x.layout(), shape)?,
        offset: x.layout().offset,
    };
    Ok(x.with_layout(layout))
}

/// Sums x (shape) back to `target`, which broadcasts to x's shape: the adjoint of
/// [`broadcast_to`]. x (..., shape) -> (target).
pub(crate) fn reduce_to(x: &Tensor, target: &[usize]) -> Result<Tensor> {
    let shape = x.shape().to_vec();
    if shape == target {
        return Ok(x.clone());
    }
    let r = shape.len();
    let lead = r - target.len();
    let summed = |d: usize| d < lead || (target[d - lead] == 1 && shape[d] != 1);
    let kept: Vec<usize> = (0..r).filter(|&d| !summed(d)).collect();
    let gone: Vec<usize> = (0..r).filter(|&d| summed(d)).collect();
    let order: Vec<usize> = kept.iter().chain(&gone).copied().collect();
    let l = x.layout();
    let permuted = Layout {
        shape: order.iter().map(|&d| l.shape[d]).collect(),
        strides: order.iter().map(|&d| l.strides[d]).collect(),
        offset: l.offset,
    };
    let rows: usize = kept.iter().map(|&d| shape[d]).product();
    let cols: usize = gone.iter().map(|&d| shape[d]).product();
    // Only leading axes summed (a bias's or a norm weight's gradient over a batch): column
    // sums of x as it lies, with no transposed copy.
    if gone.iter().enumerate().all(|(i, &d)| i == d) && x.context().is_gpu() {
        let flat = x.contiguous()?.reshape(&[cols, rows])?;
        return ops::reduce::sum_columns(&flat)?.reshape(target);
    }
    let dense = x.with_layout(permuted).contiguous()?.reshape(&[rows, cols])?;
    let ctx = x.context();
    match ctx.gpu() {
        Some(gpu) if cols <= SHORT_ROW => {
            let out = Tensor::uninit(ctx, target, "reduce_to")?;
            let kernel = gpu.kernel(&SUM_SHORT_ROWS, &[])?;
            gpu.dispatch(
                &kernel,
                &Params::new().usize(rows).usize(cols),
                &[dense.gpu_buffer("reduce_to")?, out.gpu_buffer("reduce_to")?],
                groups_1d(rows.div_ceil(64) as u32),
            )?;
            Ok(out)
        }
        _ => ops::sum_last(&dense)?.reshape(target),
    }
}
