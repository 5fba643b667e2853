//! The tolerance gates, one table: every test and every parity row that holds a result to
//! one of these facts reads it from here. Each is `|got - want| <= atol + rtol * |want|`
//! against the f64 reference.

use super::Gate;

/// Outputs of the affine scans (`linear_scan`, `matrix_scan`, `matrix_affine_scan`): the
/// seed's flat fp32 conformance gate.
pub const SCAN_AFFINE: Gate = Gate::new(1e-5, 0.0);
/// Output of `parallel_scan_log` (the logcumsumexp round trip is looser).
pub const SCAN_LOG: Gate = Gate::new(1e-4, 1e-4);
/// Gradients of the affine scans.
pub const SCAN_AFFINE_BACKWARD: Gate = Gate::new(1e-3, 0.0);
/// Gradients of `parallel_scan_log`.
pub const SCAN_LOG_BACKWARD: Gate = Gate::new(1e-3, 1e-3);

/// States of the minGRU mixers (the log-space MinGRU sets it; the others sit far inside).
pub const MIXER: Gate = Gate::new(2e-5, 1e-4);
/// Gradients of the mixers' pre-activations. The seed allows (1e-3, 1e-3) for the
/// angle-fused path; every parity row and test case measures at most 1.2e-5 on lavapipe and
/// llvmpipe GL, so the gate is held ten times tighter than the seed's.
pub const MIXER_BACKWARD: Gate = Gate::new(1e-4, 1e-4);

/// Outputs of element scans.
pub const ELEMENT_SCAN: Gate = Gate::new(1e-5, 1e-5);
/// Gradients of element scans.
pub const ELEMENT_SCAN_BACKWARD: Gate = Gate::new(1e-4, 1e-4);

/// Tensor ops compared with golden outputs (layer norm, softmax, GELU, attention, ...).
pub const TENSOR: Gate = Gate::new(1e-5, 1e-5);
/// GPT-2 embeddings, residuals and logits against the reference forward.
pub const LOGITS: Gate = Gate::new(1e-4, 1e-4);
/// Products with F16 or BF16 operands against the f64 reference on the same (exactly widened)
/// values: the inputs are exact, so only f32 accumulation remains, as for f32 products of
/// O(1) values over K <= 1000.
pub const HALF_MATMUL: Gate = Gate::new(1e-4, 1e-4);
