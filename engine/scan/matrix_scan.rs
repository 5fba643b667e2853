//! `matrix_scan`: h_t = A_t h_{t-1} + b_t with 2 x 2 transitions and 2-vector states, the
//! affine scan with k = 2, v = 1 (the rotation mixers' recurrence).

use super::affine::{self, AffineOp};
use super::envelope::{self, AffineDims};
use super::grads::{Adjoint, ScanGrads};
use super::route::ScanOptions;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

const SCAN: AffineOp = AffineOp {
    op: "matrix_scan",
    op_backward: "matrix_scan_backward",
    b_name: "b",
    h_name: "h",
    dims,
    h0_shape: |d| vec![d.b, d.n, 2],
    h0_layout: "(B, N, 2)",
    h_layout: "(B, T, N, 2), the shape of h",
};

fn dims(op: &'static str, a: &Tensor, other: &'static str, b: &Tensor) -> Result<AffineDims> {
    envelope::rank(op, "A", a, 5, "(B, T, N, 2, 2)")?;
    envelope::rank(op, other, b, 4, "(B, T, N, 2)")?;
    let s = a.shape();
    if s[3] != 2 || s[4] != 2 {
        return Err(Error::shape(op, "A", "(B, T, N, 2, 2)", s));
    }
    if s[..4] != *b.shape() {
        return Err(Error::mismatch(op, "A", s, other, b.shape()));
    }
    envelope::nonempty_time(op, "A", a, s[1])?;
    Ok(AffineDims {
        b: s[0],
        t: s[1],
        n: s[2],
        k: 2,
        v: 1,
    })
}

/// A (B, T, N, 2, 2), b (B, T, N, 2), h0 (B, N, 2) or zeros -> h (B, T, N, 2).
pub fn matrix_scan(a: &Tensor, b: &Tensor, h0: Option<&Tensor>) -> Result<Tensor> {
    matrix_scan_with(a, b, h0, &ScanOptions::default())
}

/// [`matrix_scan`] with an explicit route and strategy.
pub fn matrix_scan_with(a: &Tensor, b: &Tensor, h0: Option<&Tensor>, opts: &ScanOptions) -> Result<Tensor> {
    affine::forward_op(&SCAN, a, b, h0, opts)
}

/// Gradients of [`matrix_scan`] from its A, h0, its output h (B, T, N, 2) and dL/dh (same
/// shape): dA (B, T, N, 2, 2), db (B, T, N, 2), dh0 (B, N, 2).
pub fn matrix_scan_backward(a: &Tensor, h0: Option<&Tensor>, h: &Tensor, grad_h: &Tensor) -> Result<ScanGrads> {
    matrix_scan_backward_with(a, h0, h, grad_h, &ScanOptions::default())
}

/// [`matrix_scan_backward`] with an explicit route and strategy.
pub fn matrix_scan_backward_with(
    a: &Tensor,
    h0: Option<&Tensor>,
    h: &Tensor,
    grad_h: &Tensor,
    opts: &ScanOptions,
) -> Result<ScanGrads> {
    affine::backward_op(&SCAN, Adjoint { a, h0, h, grad: grad_h }, opts)
}
