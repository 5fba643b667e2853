//! `matrix_affine_scan`: H_t = A_t H_{t-1} + B_t with k x k transitions and k x v states,
//! k, v in {1, 2, 4, 8, 16} on the GPU (other sizes run the reference under `auto`).

use super::affine::{self, ScanGrads};
use super::dispatch::ScanOptions;
use super::envelope;
use crate::error::Result;
use crate::tensor::Tensor;

const OP: &str = "matrix_affine_scan";
const OP_BACKWARD: &str = "matrix_affine_scan_backward";

/// A (B, T, N, k, k), B (B, T, N, k, v), h0 (B, N, k, v) or zeros -> H (B, T, N, k, v).
pub fn matrix_affine_scan(a: &Tensor, b: &Tensor, h0: Option<&Tensor>) -> Result<Tensor> {
    matrix_affine_scan_with(a, b, h0, &ScanOptions::default())
}

/// [`matrix_affine_scan`] with an explicit dispatch and strategy.
pub fn matrix_affine_scan_with(a: &Tensor, b: &Tensor, h0: Option<&Tensor>, opts: &ScanOptions) -> Result<Tensor> {
    let d = envelope::affine(OP, a, "B", b)?;
    b.expect_context(a.context(), OP, "B")?;
    if let Some(h0) = h0 {
        envelope::exact(OP, "h0", h0, &d.h0_shape(), "(B, N, k, v)")?;
        h0.expect_context(a.context(), OP, "h0")?;
    }
    affine::forward(OP, d, a, b, h0, opts)
}

/// Gradients of [`matrix_affine_scan`] from its A, h0, its output H (B, T, N, k, v) and
/// dL/dH (same shape): dA (B, T, N, k, k), dB (B, T, N, k, v), dh0 (B, N, k, v).
pub fn matrix_affine_scan_backward(a: &Tensor, h0: Option<&Tensor>, h: &Tensor, grad_h: &Tensor) -> Result<ScanGrads> {
    matrix_affine_scan_backward_with(a, h0, h, grad_h, &ScanOptions::default())
}

/// [`matrix_affine_scan_backward`] with an explicit dispatch and strategy.
pub fn matrix_affine_scan_backward_with(
    a: &Tensor,
    h0: Option<&Tensor>,
    h: &Tensor,
    grad_h: &Tensor,
    opts: &ScanOptions,
) -> Result<ScanGrads> {
    let d = envelope::affine(OP_BACKWARD, a, "H", h)?;
    envelope::backward_args(
        OP_BACKWARD,
        a,
        "H",
        h,
        grad_h,
        "(B, T, N, k, v), the shape of H",
        h0,
        &d.h0_shape(),
        "(B, N, k, v)",
    )?;
    affine::backward(OP_BACKWARD, d, a, h0, h, grad_h, opts)
}
