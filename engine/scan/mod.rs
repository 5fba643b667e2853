//! # Associative scans
//!
//! The four scans behind minGRU-style mixers, forward and backward, as WGSL kernels. All are
//! the affine recurrence h_t = A_t h_{t-1} + B_t; `parallel_scan_log` carries it in log space.
//!
//! | op | inputs | output |
//! | --- | --- | --- |
//! | [`linear_scan`] | a, b (B, T, D), h0 (B, D) | h (B, T, D) |
//! | [`parallel_scan_log`] | log_coeffs (B, T, D), log_values (B, T+1, D) | h (B, T, D) |
//! | [`matrix_scan`] | A (B, T, N, 2, 2), b (B, T, N, 2), h0 (B, N, 2) | h (B, T, N, 2) |
//! | [`matrix_affine_scan`] | A (B, T, N, k, k), B (B, T, N, k, v), h0 (B, N, k, v) | H (B, T, N, k, v) |
//!
//! Each has a `_with` form taking [`ScanOptions`] (the [`Route`]: kernel or reference, and the
//! [`Strategy`]) and a `_backward` form that reads only the forward's inputs and output plus
//! the output gradient. The GPU kernels accumulate in f32; the reference
//! ([`crate::reference::scan`]) in f64.
//!
//! Layout: [`envelope`] (shape checks), [`route`] (kernel or reference), `affine` (the seam
//! of the three affine scans), `affine_gpu` (their k x v GPU kernels), `linear_gpu` (the
//! k = v = 1 case: channel-wise kernels, one channel per invocation or four with vec4 loads),
//! `channel` (the channel scans' widths, tuning and plans), `grads` ([`ScanGrads`]), one file
//! per op. Every kernel walks T through the recurrence layer below
//! ([`crate::recurrence`]: the walk plans, the one launch, the look-back protocol, the shared
//! WGSL prelude and chunk/carry skeleton), as the mixers' fused scans and element scans do.
//!
//! ```
//! use wgsl_compute::{scan, Context, Tensor};
//! let ctx = Context::cpu(); // the same call runs the WGSL kernel on a GPU context
//! // h_t = a_t h_{t-1} + b_t over T = 3 steps, B = D = 1, from h0 = 1.
//! let a = Tensor::from_slice(&ctx, &[1, 3, 1], &[0.5, 0.5, 0.5])?;
//! let b = Tensor::from_slice(&ctx, &[1, 3, 1], &[1.0, 1.0, 1.0])?;
//! let h0 = Tensor::from_slice(&ctx, &[1, 1], &[1.0])?;
//! let h = scan::linear_scan(&a, &b, Some(&h0))?;
//! assert_eq!(h.to_vec()?, vec![1.5, 1.75, 1.875]);
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

mod affine;
mod affine_gpu;
pub(crate) mod channel;
pub mod envelope;
mod grads;
mod linear_gpu;
mod linear_scan;
mod log_gpu;
mod matrix_affine_scan;
mod matrix_scan;
mod padded;
mod parallel_scan_log;
pub mod route;

pub use crate::recurrence::Strategy;
pub use grads::ScanGrads;
pub use linear_scan::{
    linear_scan, linear_scan_backward, linear_scan_backward_with, linear_scan_with, tune_linear_scan,
};
pub use matrix_affine_scan::{
    matrix_affine_scan, matrix_affine_scan_backward, matrix_affine_scan_backward_with, matrix_affine_scan_with,
};
pub use matrix_scan::{matrix_scan, matrix_scan_backward, matrix_scan_backward_with, matrix_scan_with};
pub use parallel_scan_log::{
    parallel_scan_log, parallel_scan_log_backward, parallel_scan_log_backward_with, parallel_scan_log_with,
    LogScanGrads,
};
pub use route::{Route, ScanOptions};
