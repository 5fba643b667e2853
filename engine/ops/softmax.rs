//! Softmax over the last axis, one workgroup per row (`shaders/ops/softmax.wgsl`), or one
//! subgroup per row where the adapter's subgroups have one fixed size
//! (`shaders/ops/softmax_subgroup.wgsl`), with an optional causal mask; and its backward from
//! the output (`softmax_backward`).

use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::ops::reduce::dispatch_rows;
use crate::reference;
use crate::tensor::Tensor;

const SOFTMAX: KernelDef = KernelDef::new("ops/softmax", shader!("ops/softmax.wgsl"), "softmax");
// No `enable subgroups;`: naga 30 rejects the directive and exposes the subgroup builtins
// wherever the device has the feature.
const SOFTMAX_SUBGROUP: KernelDef = KernelDef::new(
    "ops/softmax_subgroup",
    shader!("ops/softmax_subgroup.wgsl"),
    "softmax_subgroup",
);

const SOFTMAX_BACKWARD: KernelDef = KernelDef::new(
    "ops/softmax_backward",
    shader!("ops/softmax_backward.wgsl"),
    "softmax_backward",
);

/// The subgroup kernels' lanes a row: the adapter's subgroup size where it is one fixed power
/// of two from 4 to 256 (None: the workgroup-per-row kernel).
fn subgroup_lanes(info: &crate::context::DeviceInfo) -> Option<u32> {
    let (lo, hi) = info.subgroup_size;
    (info.subgroups && lo == hi && lo.is_power_of_two() && (4..=256).contains(&lo)).then_some(lo)
}

/// (rows, cols) of `x` seen as rows along its last axis; fails on rank 0 or empty rows.
pub(crate) fn rows_cols(op: &'static str, x: &Tensor) -> Result<(usize, usize)> {
    match x.shape().split_last() {
        Some((&cols, lead)) if cols > 0 => Ok((lead.iter().product(), cols)),
        _ => Err(Error::shape(op, "x", "rank >= 1 with a non-empty last axis", x.shape())),
    }
}

/// Softmax over the last axis (max-subtracted). With `causal = Some(past)`, row i of the
/// last-but-one axis sees columns `0..=past + i`; masked entries come out exactly 0.
/// x (..., n) -> (..., n), any view (non-dense views are copied first).
pub fn softmax_last(x: &Tensor, causal: Option<usize>) -> Result<Tensor> {
    let op = "softmax_last";
    let (rows, cols) = rows_cols(op, x)?;
    let ctx = x.context();
    let Some(gpu) = ctx.gpu() else {
        return Tensor::from_host(ctx, reference::nn::softmax_last(&x.host(op)?.view(), causal));
    };
    let x = x.contiguous()?;
    let per_matrix = if x.rank() >= 2 { x.shape()[x.rank() - 2] } else { 1 };
    let out = Tensor::uninit(ctx, x.shape(), op)?;
    if rows == 0 {
        return Ok(out);
    }
    // Row i sees columns 0..=past + i: any past >= cols shows every column, so clamping to
    // cols keeps the mask exact and `past + i` from wrapping in the kernel's u32.
    let past = causal.unwrap_or(0).min(cols);
    let params = Params::new()
        .usize(rows)
        .usize(cols)
        .usize(per_matrix.max(1))
        .u32(causal.is_some() as u32)
        .usize(past);
    match subgroup_lanes(&gpu.info) {
        Some(lanes) => {
            let kernel = gpu.kernel(&SOFTMAX_SUBGROUP, &[("LANES", f64::from(lanes))])?;
            gpu.dispatch(
                &kernel,
                &params,
                &[x.gpu_buffer(op)?, out.gpu_buffer(op)?],
                groups_1d(rows.div_ceil(256 / lanes as usize) as u32),
            )?;
        }
        None => dispatch_rows(gpu, op, &SOFTMAX, &params, &x, &out, rows)?,
    }
    Ok(out)
}

/// The gradient of the softmax's input from its output `y` and the gradient `g` of `y`:
/// `dx = y (g - sum_last(g y))` per row (masked entries, where y is 0, get 0). y, g (..., n)
/// -> (..., n). One launch where the adapter's subgroups have one fixed size
/// (`shaders/ops/softmax_backward.wgsl`), else the same formula in four tensor ops (and on
/// the CPU context); the row sum's order differs between the two, so their last bits may.
pub fn softmax_backward(y: &Tensor, g: &Tensor) -> Result<Tensor> {
    let op = "softmax_backward";
    g.expect_context(y.context(), op, "g")?;
    if g.shape() != y.shape() {
        return Err(Error::shape(
            op,
            "g",
            &format!("{:?} (y's shape)", y.shape()),
            g.shape(),
        ));
    }
    let (rows, cols) = rows_cols(op, y)?;
    let kernel_lanes = y
        .context()
        .gpu()
        .and_then(|gpu| Some((gpu, subgroup_lanes(&gpu.info)?)));
    let Some((gpu, lanes)) = kernel_lanes else {
        let mut row = y.shape().to_vec();
        if let Some(last) = row.last_mut() {
            *last = 1;
        }
        let s = crate::ops::sum_last(&crate::ops::mul(g, y)?)?.reshape(&row)?; // (..., 1)
        return crate::ops::mul(y, &crate::ops::sub(g, &s)?);
    };
    let (y, g) = (y.contiguous()?, g.contiguous()?);
    let dx = Tensor::uninit(y.context(), y.shape(), op)?;
    if rows == 0 {
        return Ok(dx);
    }
    let kernel = gpu.kernel(&SOFTMAX_BACKWARD, &[("LANES", f64::from(lanes))])?;
    gpu.dispatch(
        &kernel,
        &Params::new().usize(rows).usize(cols),
        &[y.gpu_buffer(op)?, g.gpu_buffer(op)?, dx.gpu_buffer(op)?],
        groups_1d(rows.div_ceil(256 / lanes as usize) as u32),
    )?;
    Ok(dx)
}
