//! What an affine scan's backward takes ([`Adjoint`]) and returns ([`ScanGrads`]:
//! `linear_scan_backward`, `matrix_scan_backward`, `matrix_affine_scan_backward`), shared by
//! the seam (`affine`) and both GPU paths (`linear_gpu`, `affine_gpu`).

use crate::tensor::Tensor;

/// Gradients of an affine scan, in the shapes of the op's own arguments.
#[derive(Clone, Debug)]
pub struct ScanGrads {
    /// dL/dA, the shape of the transitions `a` / `A`.
    pub da: Tensor,
    /// dL/dB, the shape of the injections `b` / `B` (equal to the adjoint state G).
    pub db: Tensor,
    /// dL/dh0, the shape of the initial state (also when h0 was left as zeros).
    pub dh0: Tensor,
}

/// A backward's operands on the 5-d core: the forward's A (B, T, N, k, k), its h0
/// (B, N, k, v) or zeros, its output H (B, T, N, k, v), and dL/dH `grad` (the shape of H).
/// The public ops hand the seam (`affine::backward_op`) the same four in their own shapes,
/// which it checks and reshapes onto the core.
#[derive(Clone, Copy)]
pub(crate) struct Adjoint<'t> {
    pub a: &'t Tensor,
    pub h0: Option<&'t Tensor>,
    pub h: &'t Tensor,
    pub grad: &'t Tensor,
}
