//! `matrix_affine_scan`: H_t = A_t H_{t-1} + B_t with k x k transitions and k x v states,
//! k in {1, 2, 4, 8, 16} and v up to 16 on the GPU: the kernels are specialised for v in
//! {1, 2, 4, 8, 16}, and a v between two runs zero-padded to the next, which is exact
//! (`scan::padded`); other sizes run the reference under `auto`.

use super::affine::{public_scan, AffineOp};
use super::envelope;

const SCAN: AffineOp = AffineOp {
    op: "matrix_affine_scan",
    op_backward: "matrix_affine_scan_backward",
    b_name: "B",
    h_name: "H",
    dims: envelope::affine,
    h0_shape: |d| d.h0_shape().to_vec(),
    h0_layout: "(B, N, k, v)",
    h_layout: "(B, T, N, k, v), the shape of H",
};

public_scan! {
    SCAN;
    /// A (B, T, N, k, k), B (B, T, N, k, v), h0 (B, N, k, v) or zeros -> H (B, T, N, k, v).
    matrix_affine_scan, matrix_affine_scan_with;
    /// Gradients of [`matrix_affine_scan`] from its A, h0, its output H (B, T, N, k, v) and
    /// dL/dH (same shape): dA (B, T, N, k, k), dB (B, T, N, k, v), dh0 (B, N, k, v).
    matrix_affine_scan_backward, matrix_affine_scan_backward_with;
}
