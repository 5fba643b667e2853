//! # minGRU-style mixers
//!
//! Four recurrent mixers on the engine's scans, forward and backward: [`MixerKind::MinGru`]
//! (log space, `parallel_scan_log`), [`MixerKind::SignedMinGru`] (signed scalar,
//! `linear_scan`), [`MixerKind::RotationMinGru`] (2 x 2 decayed rotations, `matrix_scan`) and
//! [`MixerKind::GivensMinGru`] (k x k decayed products of Givens rotations,
//! `matrix_affine_scan`). The rotation family also has the angle-fused kernel
//! ([`MixerPath::AngleFused`], the default): the transitions are built from their angles
//! inside the scan and never stored, and the backward recomputes from the stored states.
//!
//! Layers: [`mixer_scan`] / [`mixer_scan_backward`] map pre-activations (B, T, 2D) to states
//! (B, T, D) and back; [`MixerLayer`] adds the input projection (Dm -> 2D, with bias) and
//! the output projection (D -> Dm) and returns every parameter's gradient. The f64 oracle is
//! [`reference`](mod@reference).

mod angle_fused;
mod gates;
mod kind;
mod layer;
pub mod reference;
mod scan;

pub use kind::{MixerKind, MixerPath};
pub use layer::{MixerGrads, MixerLayer, MixerTape};
pub use scan::{mixer_scan, mixer_scan_backward, mixer_scan_backward_with, mixer_scan_with, MixerScan};
