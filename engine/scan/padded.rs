//! The matrix scans on the GPU for every value width v up to 16, not only the widths the
//! kernels are specialised for ([`BLOCK_SIZES`]): a v between two block sizes runs the kernel
//! of the next one on zero-padded values and keeps the leading v columns of each result.
//!
//! Why it is exact, for every input: the k x v state's columns are independent (`A_t` mixes
//! rows, never columns), so a padded column never reaches a real one, and each real column sums
//! the same products in the same order as the unpadded kernel would. Backward likewise (`A^T`
//! acts on each column of dL/dH alone; dA sums over the columns, and a padded column adds
//! `+0`). The cost is the padded columns' work and one zero-filled copy of each value operand.
//!
//! The block rows k are not padded: a padded row of the state would be `0 * h`, which is NaN
//! once a real row overflows to infinity, and `A` would carry that NaN into every real row
//! (the unpadded scan keeps the infinity). A k between the block sizes stays outside the GPU
//! envelope (`envelope::gpu_block_sizes`).
//!
//! Half operands widen to F32 first (exact); the kernel then runs in F32 and the call's
//! outputs are rounded to its dtype once, as the unpadded half path does.

use super::envelope::{AffineDims, BLOCK_SIZES};
use crate::error::Result;
use crate::shape::DType;
use crate::tensor::{copy_into, Tensor};

/// The dimensions to run instead of `d`: `None` when v is a block size already, when k is
/// not one, or when v exceeds the largest (the caller's envelope decides those).
pub(crate) fn padded_dims(d: &AffineDims) -> Option<AffineDims> {
    let v = BLOCK_SIZES.iter().copied().find(|&s| s >= d.v)?;
    (BLOCK_SIZES.contains(&d.k) && v != d.v).then_some(AffineDims { v, ..*d })
}

/// `t` (..., k_i, v_i) zero-padded to (..., k, v): its last two axes grow, F32.
pub(crate) fn pad(t: &Tensor, k: usize, v: usize) -> Result<Tensor> {
    let t = widened(t)?;
    let r = t.rank();
    let (ki, vi) = (t.shape()[r - 2], t.shape()[r - 1]);
    let mut shape = t.shape().to_vec();
    shape[r - 2] = k;
    shape[r - 1] = v;
    let out = Tensor::zeros(t.context(), &shape)?;
    copy_into(&out.narrow(r - 2, 0, ki)?.narrow(r - 1, 0, vi)?, &t)?;
    Ok(out)
}

/// The leading (k, v) corner of `t`'s last two axes, dense.
pub(crate) fn unpad(t: &Tensor, k: usize, v: usize) -> Result<Tensor> {
    let r = t.rank();
    t.narrow(r - 2, 0, k)?.narrow(r - 1, 0, v)?.contiguous()
}

/// `t` as F32: itself, or its exact widening.
pub(crate) fn widened(t: &Tensor) -> Result<Tensor> {
    if t.dtype() == DType::F32 {
        Ok(t.clone())
    } else {
        t.to_dtype(DType::F32)
    }
}
