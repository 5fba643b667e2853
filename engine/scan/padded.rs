//! The matrix scans on the GPU for every k and v up to 16, not only the block sizes the
//! kernels are specialised for ([`BLOCK_SIZES`]): a call between two block sizes runs the
//! kernel of the next one on zero-padded operands and keeps the leading k x k / k x v corner of
//! each result.
//!
//! Why it is exact: a padded row of A is zero, so a padded row of the state stays
//! `0 * h + 0 = 0` from a zero h0, and a padded column of A is zero, so the real rows of
//! `A h` never read a padded row; the value columns are independent. Backward likewise: a
//! padded row of dL/dH is zero and `A^T` never carries a padded component into a real one.
//! The cost is the padded elements' work and one zero-filled copy of each operand.
//!
//! Half operands widen to F32 first (exact); the kernel then runs in F32 and the call's
//! outputs are rounded to its dtype once, as the unpadded half path does.

use super::envelope::{AffineDims, BLOCK_SIZES};
use crate::error::Result;
use crate::shape::DType;
use crate::tensor::{copy_into, Tensor};

/// The dimensions to run instead of `d`: `None` when k and v are block sizes already or when
/// either exceeds the largest one (the caller's envelope decides those).
pub(crate) fn padded_dims(d: &AffineDims) -> Option<AffineDims> {
    let up = |x: usize| BLOCK_SIZES.iter().copied().find(|&s| s >= x);
    let (k, v) = (up(d.k)?, up(d.v)?);
    ((k, v) != (d.k, d.v)).then_some(AffineDims { k, v, ..*d })
}

/// `t` (..., k_i, v_i) zero-padded to (..., k, v): its last two axes grow, F32.
pub(crate) fn pad(t: &Tensor, k: usize, v: usize) -> Result<Tensor> {
    let t = if t.dtype() == DType::F32 {
        t.clone()
    } else {
        t.to_dtype(DType::F32)?
    };
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
