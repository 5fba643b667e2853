//! `matrix_scan`: h_t = A_t h_{t-1} + b_t with 2 x 2 transitions and 2-vector states, the
//! affine scan with k = 2, v = 1 (the rotation mixers' recurrence).

use super::affine::{public_scan, AffineOp};
use super::envelope::{self, AffineDims};
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

public_scan! {
    SCAN;
    /// A (B, T, N, 2, 2), b (B, T, N, 2), h0 (B, N, 2) or zeros -> h (B, T, N, 2).
    matrix_scan, matrix_scan_with;
    /// Gradients of [`matrix_scan`] from its A, h0, its output h (B, T, N, 2) and dL/dh (same
    /// shape): dA (B, T, N, 2, 2), db (B, T, N, 2), dh0 (B, N, 2).
    matrix_scan_backward, matrix_scan_backward_with;
}
