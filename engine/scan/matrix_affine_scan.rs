//! `matrix_affine_scan`: H_t = A_t H_{t-1} + B_t with k x k transitions and k x v states,
//! k in {1, 2, 4, 8, 16} and v up to 16 on the GPU: the kernels are specialised for v in
//! {1, 2, 4, 8, 16}, and a v between two runs zero-padded to the next, which is exact
//! (`scan::padded`); other sizes run the reference under `auto`.

use super::affine::{self, AffineOp};
use super::envelope;
use super::grads::{Adjoint, ScanGrads};
use super::route::ScanOptions;
use crate::error::Result;
use crate::tensor::Tensor;

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

/// A (B, T, N, k, k), B (B, T, N, k, v), h0 (B, N, k, v) or zeros -> H (B, T, N, k, v).
pub fn matrix_affine_scan(a: &Tensor, b: &Tensor, h0: Option<&Tensor>) -> Result<Tensor> {
    matrix_affine_scan_with(a, b, h0, &ScanOptions::default())
}

/// [`matrix_affine_scan`] with an explicit route and strategy.
pub fn matrix_affine_scan_with(a: &Tensor, b: &Tensor, h0: Option<&Tensor>, opts: &ScanOptions) -> Result<Tensor> {
    affine::forward_op(&SCAN, a, b, h0, opts)
}

/// Gradients of [`matrix_affine_scan`] from its A, h0, its output H (B, T, N, k, v) and
/// dL/dH (same shape): dA (B, T, N, k, k), dB (B, T, N, k, v), dh0 (B, N, k, v).
pub fn matrix_affine_scan_backward(a: &Tensor, h0: Option<&Tensor>, h: &Tensor, grad_h: &Tensor) -> Result<ScanGrads> {
    matrix_affine_scan_backward_with(a, h0, h, grad_h, &ScanOptions::default())
}

/// [`matrix_affine_scan_backward`] with an explicit route and strategy.
pub fn matrix_affine_scan_backward_with(
    a: &Tensor,
    h0: Option<&Tensor>,
    h: &Tensor,
    grad_h: &Tensor,
    opts: &ScanOptions,
) -> Result<ScanGrads> {
    affine::backward_op(&SCAN, Adjoint { a, h0, h, grad: grad_h }, opts)
}
