//! Parity cases of the minGRU mixers' recurrences ([`crate::mixer`]): every mixer, both GPU
//! paths of the rotation family and both strategies of the angle-fused kernel, forward (h)
//! and backward (d pre), against the f64 reference's step-by-step recurrence and backprop
//! through time. Pre-activations are uniform in [-2, 2], angles in [-7, 7]; in the rotation
//! cases with T > 7 (and some shorter ones) every decay pre-activation lies in [3, 6] (lambda
//! near 1), so states carry across chunks.

use super::scan::test_chunk;
use super::Row;
use crate::check::{gates, Rng};
use crate::context::Context;
use crate::error::Result;
use crate::mixer::reference;
use crate::mixer::{mixer_scan_backward_with, mixer_scan_with, MixerKind, MixerPath};
use crate::scan::{Route, ScanOptions, Strategy};
use crate::tensor::Tensor;

/// One mixer case: pre (B, T, 2D) -> h (B, T, D), or d pre from a seeded dL/dh.
#[derive(Clone, Debug, PartialEq)]
pub struct MixerCase {
    /// Which mixer.
    pub kind: MixerKind,
    /// Materialised or angle-fused scan.
    pub path: MixerPath,
    /// Check the gradient instead of the output.
    pub backward: bool,
    /// Batch B.
    pub b: usize,
    /// Time steps T.
    pub t: usize,
    /// State width D.
    pub d: usize,
    /// How the scan kernel walks T.
    pub strategy: Strategy,
    /// Decay pre-activations in [3, 6] (rotation family).
    pub slow_decay: bool,
    /// Seed of the inputs.
    pub seed: u64,
}

impl MixerCase {
    /// The op as the parity table prints it, e.g. `GivensMinGRU(k=8) angle-fused`.
    pub fn name(&self) -> String {
        let path = match (self.path, self.kind.is_rotation()) {
            (MixerPath::Materialized, _) | (MixerPath::Auto, false) => "materialised",
            _ => "angle-fused",
        };
        format!("{} {path}", self.kind)
    }

    /// The dimensions as the parity table prints them, e.g. `B=2 T=65 D=8`.
    pub fn shape(&self) -> String {
        let decay = if self.slow_decay { " slow decay" } else { "" };
        format!("B={} T={} D={}{decay}", self.b, self.t, self.d)
    }
}

/// The mixer cases: `full` adds long T and every Givens block size.
pub fn mixer_cases(full: bool) -> Vec<MixerCase> {
    let mut out = vec![];
    let mut seed = 5000;
    let mut kinds = vec![
        (MixerKind::MinGru, MixerPath::Auto),
        (MixerKind::SignedMinGru, MixerPath::Auto),
        (MixerKind::RotationMinGru, MixerPath::AngleFused),
        (MixerKind::RotationMinGru, MixerPath::Materialized),
        (MixerKind::GivensMinGru { k: 4 }, MixerPath::AngleFused),
        (MixerKind::GivensMinGru { k: 4 }, MixerPath::Materialized),
        (MixerKind::GivensMinGru { k: 16 }, MixerPath::AngleFused),
    ];
    if full {
        kinds.extend([
            (MixerKind::GivensMinGru { k: 2 }, MixerPath::AngleFused),
            (MixerKind::GivensMinGru { k: 8 }, MixerPath::AngleFused),
            (MixerKind::GivensMinGru { k: 8 }, MixerPath::Materialized),
            (MixerKind::GivensMinGru { k: 16 }, MixerPath::Materialized),
        ]);
    }
    let ts: &[usize] = if full { &[1, 7, 65, 257, 1000] } else { &[7, 65] };
    for (i, (kind, path)) in kinds.into_iter().enumerate() {
        for (j, &t) in ts.iter().enumerate() {
            // The angle-fused kernel's two strategies; the scan ops choose their own.
            let strategies = if path == MixerPath::AngleFused {
                vec![
                    Strategy::Lanes,
                    Strategy::Chunked {
                        chunk: Some(test_chunk(t)),
                    },
                ]
            } else {
                vec![Strategy::Auto]
            };
            for strategy in strategies {
                for backward in [false, true] {
                    seed += 1;
                    out.push(MixerCase {
                        kind,
                        path,
                        backward,
                        b: 1 + (i + j) % 3,
                        t,
                        d: 2 * kind.block().max(8),
                        strategy,
                        // Every longer walk decays slowly: a wrong chunk carry must show.
                        slow_decay: kind.is_rotation() && (t > 7 || i % 2 == 0),
                        seed,
                    });
                }
            }
        }
    }
    out
}

/// Runs one mixer case on `ctx` (the GPU kernels, demanded; the reference on the CPU context).
pub async fn run_case(ctx: &Context, c: &MixerCase) -> Row {
    let gate = if c.backward {
        gates::MIXER_BACKWARD
    } else {
        gates::MIXER
    };
    let row = Row::pending(
        c.name(),
        super::direction(c.backward),
        c.shape(),
        c.strategy.to_string(),
        gate,
    );
    row.judged(output(ctx, c).await)
}

/// The case's output (h, or d pre) and the reference's.
async fn output(ctx: &Context, c: &MixerCase) -> Result<(Vec<f32>, Vec<f32>)> {
    let route = if ctx.is_gpu() { Route::Gpu } else { Route::Cpu };
    let opts = ScanOptions {
        route: Some(route),
        strategy: c.strategy,
    };
    let (b, t, d) = (c.b, c.t, c.d);
    let mut rng = Rng::new(c.seed);
    let mut pre = rng.vec_range(b * t * 2 * d, -2.0, 2.0);
    if c.kind.is_rotation() {
        let n = d / c.kind.block();
        for row in pre.chunks_mut(2 * d) {
            if c.slow_decay {
                for v in &mut row[d..d + n] {
                    *v = 4.5 + 0.75 * *v;
                }
            }
            // Angles in [-7, 7]: every quadrant of sin_cos's range reduction, twice.
            for v in &mut row[d + n..] {
                *v *= 3.5;
            }
        }
    }
    let dh = rng.vec_range(b * t * d, -1.0, 1.0);
    let sizes = |e: ndarray::ShapeError| crate::error::Error::value("parity::mixer", "case", "sizes that agree", e);
    let pre_host =
        ndarray::Array3::from_shape_vec((b, t, 2 * d), pre.iter().map(|&v| v as f64).collect()).map_err(sizes)?;
    let pre_t = Tensor::from_slice(ctx, &[b, t, 2 * d], &pre)?;
    let fwd = mixer_scan_with(c.kind, c.path, &pre_t, &opts)?;
    if !c.backward {
        let want = reference::scan(c.kind, &pre_host.view())?;
        return Ok((fwd.h.to_vec_async().await?, want.iter().map(|&v| v as f32).collect()));
    }
    let dh_host = ndarray::Array3::from_shape_vec((b, t, d), dh.iter().map(|&v| v as f64).collect()).map_err(sizes)?;
    let dpre = mixer_scan_backward_with(&pre_t, &fwd, &Tensor::from_slice(ctx, &[b, t, d], &dh)?, &opts)?;
    let want = reference::scan_backward(c.kind, &pre_host.view(), &dh_host.view())?;
    Ok((dpre.to_vec_async().await?, want.iter().map(|&v| v as f32).collect()))
}
