//! Index of the row maximum, one workgroup per row (`shaders/ops/argmax.wgsl`).

use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::ops::reduce::dispatch_rows;
use crate::ops::softmax::rows_cols;
use crate::reference;
use crate::tensor::Tensor;

const ARGMAX: KernelDef = KernelDef::new("ops/argmax", shader!("ops/argmax.wgsl"), "argmax");

/// Largest f32 that still holds every integer below it exactly.
const EXACT: usize = 1 << 24;

/// Index of the largest element along the last axis, stored as f32 (exact: the last axis
/// must be shorter than 2^24). x (..., n) -> (...).
///
/// The same rule on every context ([`reference::nn::argmax_index`], torch's): NaN is larger
/// than every number (the first NaN wins), -0.0 equals +0.0, the first index wins a tie, and
/// the index is always inside the row (all -inf rows give 0).
pub fn argmax_last(x: &Tensor) -> Result<Tensor> {
    let op = "argmax_last";
    let (rows, cols) = rows_cols(op, x)?;
    if cols > EXACT {
        return Err(Error::shape(
            op,
            "x",
            "a last axis below 2^24 (indices are stored as f32)",
            x.shape(),
        ));
    }
    let ctx = x.context();
    let Some(gpu) = ctx.gpu() else {
        return Tensor::from_host(ctx, reference::nn::argmax_last(&x.host(op)?.view()));
    };
    let x = x.contiguous()?;
    let out = Tensor::uninit(ctx, &x.shape()[..x.rank() - 1], op)?;
    if rows == 0 {
        return Ok(out);
    }
    dispatch_rows(gpu, op, &ARGMAX, &Params::new().usize(rows).usize(cols), &x, &out, rows)?;
    Ok(out)
}
