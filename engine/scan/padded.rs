//! The matrix scans on the GPU for every value width v up to 16, not only the widths the
//! kernels are specialised for ([`BLOCK_SIZES`]): a v between two block sizes runs the kernel
//! of the next one on zero-padded values and keeps the leading v columns of each result.
//!
//! Why it is exact, for every input: the k x v state's columns are independent (`A_t` mixes
//! rows, never columns), so a padded column never reaches a real one, and each real column sums
//! the same products in the same order as the unpadded kernel would. Backward likewise:
//! `A^T` acts on each column of dL/dH alone, so the reverse scan runs padded too
//! ([`backward`]). dA, which sums over the columns, is computed from the real columns of G
//! and H only: a padded column of G is `A^T 0`, NaN where A holds an infinity, and summed in
//! it would turn the unpadded scan's infinity into NaN. The cost is the padded columns' work
//! and one zero-filled copy of each value operand.
//!
//! The block rows k are not padded: a padded row of the state would be `0 * h`, which is NaN
//! once a real row overflows to infinity, and `A` would carry that NaN into every real row
//! (the unpadded scan keeps the infinity). A k between the block sizes stays outside the GPU
//! envelope (`envelope::gpu_block_sizes`).
//!
//! Half operands widen to F32 first (exact); the kernel then runs in F32 and the call's
//! outputs are rounded to its dtype once, as the unpadded half path does.

use super::affine_gpu::{backward_da_gpu, narrowed, scan_gpu, Scan};
use super::envelope::{self, AffineDims, BLOCK_SIZES};
use super::grads::Adjoint;
use super::grads::ScanGrads;
use super::route::ScanOptions;
use crate::context::Gpu;
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

/// The backward of a scan of dimensions `d` run padded to `p` ([`padded_dims`]): the reverse
/// scan over the zero-padded dL/dH `grad`, then dA from the real columns of its G and of the
/// forward's H (`h`, `h0` as the caller has them, unpadded). Gradients in `a`'s dtype.
pub(crate) fn backward(
    gpu: &Gpu,
    op: &'static str,
    d: &AffineDims,
    p: &AffineDims,
    adj: Adjoint<'_>,
    opts: &ScanOptions,
) -> Result<ScanGrads> {
    let Adjoint { a, h0, h, grad } = adj;
    envelope::gpu_block_sizes(op, p)?;
    let (a_f32, grad_p) = (widened(a)?, pad(grad, p.k, p.v)?);
    let s = Scan {
        gpu,
        op,
        d: p,
        a: &a_f32,
        x: &grad_p,
        h0: None,
        reverse: true,
    };
    let (db, dh0) = scan_gpu(s, opts)?;
    let db = unpad(&db, d.k, d.v)?;
    let da = backward_da_gpu(gpu, op, d, &db, h, h0)?;
    let dtype = a.dtype();
    Ok(ScanGrads {
        da: narrowed(da, dtype)?,
        db: narrowed(db, dtype)?,
        dh0: narrowed(unpad(&dh0, d.k, d.v)?, dtype)?,
    })
}
