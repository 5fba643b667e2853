//! The shared tolerance gates: the gate of each op family that the parity suite and the
//! tests both hold results to (scans, mixers, element scans, tensor ops, GPT-2's logits, half
//! products), and the unit roundoffs of the half dtypes with the gate they give a half scan.
//! Each is `|got - want| <= atol + rtol * |want|` against the f64 reference. A test that
//! holds one case to a bound of its own (a tighter one, an exactness check, a looser one for a
//! long walk) writes that `Gate::new` where it asserts, as do the web suite and the examples;
//! a bound that two places share belongs here.

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
/// One optimiser step (SGD, Adam, AdamW) on the device against the CPU context's f32 update:
/// a few roundings of O(1) values per step, over a few steps.
pub const OPTIMIZER: Gate = Gate::new(1e-6, 1e-5);
/// A tape's gradient against f64 central differences of its f32 forward (step 1e-2): the
/// step's truncation (h^2 f''' / 6) and the f32 rounding of the loss divided by 2h.
pub const GRADIENT_FD: Gate = Gate::new(2e-3, 2e-3);
/// A device's tape against the CPU tape for the tensor ops' rules: f32 accumulation on both
/// sides of a few composed ops.
pub const GRADIENT_TAPE: Gate = Gate::new(1e-4, 1e-4);
/// GPT-2 embeddings, residuals and logits against the reference forward.
pub const LOGITS: Gate = Gate::new(1e-4, 1e-4);
/// Products with F16 or BF16 operands against the f64 reference on the same (exactly widened)
/// values: the inputs are exact, so only f32 accumulation remains, as for f32 products of
/// O(1) values over K <= 1000.
pub const HALF_MATMUL: Gate = Gate::new(1e-4, 1e-4);

/// Unit roundoff of F16 (10 stored mantissa bits): a value rounded to nearest even is within
/// 2^-11 of itself, relatively (normal range; O(1) scan values are far from the subnormals).
pub const F16_ROUNDING: f64 = 1.0 / 2048.0;
/// Unit roundoff of BF16 (7 stored mantissa bits): 2^-8.
pub const BF16_ROUNDING: f64 = 1.0 / 256.0;

/// The gate of a scan whose inputs and outputs are halves with unit roundoff `u`
/// ([`F16_ROUNDING`], [`BF16_ROUNDING`]), from `f32`, its gate in f32 (e.g. [`SCAN_AFFINE`]).
///
/// Why: the reference runs in f64 on the widened half inputs (exactly the values the kernel
/// reads, the backward's h and dL/dh included), so the f32 walk differs from it by what `f32`
/// already bounds, e = atol + rtol |want|; the output is then rounded once on store, which
/// moves it by at most u |y| <= u (|want| + e). In all: e (1 + u) + u |want|, i.e.
/// atol (1 + u) + (rtol (1 + u) + u) |want|. The state is never rounded to a half inside the
/// walk, so the rounding does not grow with T.
pub const fn half_scan(f32: Gate, u: f64) -> Gate {
    Gate::new(f32.atol * (1.0 + u), f32.rtol * (1.0 + u) + u)
}
