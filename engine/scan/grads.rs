//! The gradients an affine scan returns (`linear_scan_backward`, `matrix_scan_backward`,
//! `matrix_affine_scan_backward`), shared by the seam (`affine`) and both GPU paths
//! (`linear_gpu`, `affine_gpu`).

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
