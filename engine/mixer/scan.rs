//! A mixer's recurrence on its pre-activations: pre (B, T, 2D) -> h (B, T, D), and back to
//! d pre. Through the scan seam (`ENGINE_SCAN`): the CPU context (or `cpu`) runs the f64
//! reference ([`super::reference`]).

use super::gates;
use super::kind::{MixerKind, MixerPath};
use super::reference;
use crate::error::{Error, Result};
use crate::scan::route::{self, host, ScanOptions};
use crate::scan::{self as scans, envelope};
use crate::tensor::Tensor;

/// The forward's result: the states and what its backward reads.
#[derive(Clone, Debug)]
pub struct MixerScan {
    /// States (B, T, D).
    pub h: Tensor,
    kind: MixerKind,
    saved: Saved,
}

/// What each path keeps for its backward beyond pre and h.
#[derive(Clone, Debug)]
enum Saved {
    /// The reference recomputes everything from pre.
    Reference,
    /// The angle-fused kernel recomputes from pre and h.
    AngleFused,
    /// MinGRU: the log-space scan's inputs.
    Log { lc: Tensor, lv: Tensor },
    /// SignedMinGRU: linear_scan's coefficients a (B, T, D).
    Linear(Tensor),
    /// The rotation family: the materialised transitions A (B, T, N, k, k).
    Matrix(Tensor),
}

impl MixerScan {
    /// The mixer these transitions belong to.
    pub fn kind(&self) -> MixerKind {
        self.kind
    }

    /// Whether this forward ran the angle-fused kernel.
    pub fn fused(&self) -> bool {
        matches!(self.saved, Saved::AngleFused)
    }
}

/// (B, T, D, N) of pre, checked.
fn dims(kind: MixerKind, op: &'static str, pre: &Tensor) -> Result<(usize, usize, usize, usize)> {
    envelope::rank(op, "pre", pre, 3, "(B, T, 2D)")?;
    let s = pre.shape();
    if !s[2].is_multiple_of(2) {
        return Err(Error::shape(op, "pre", "(B, T, 2D): an even last axis", s));
    }
    envelope::nonempty_time(op, "pre", pre, s[1])?;
    let n = kind.blocks(s[2] / 2)?;
    Ok((s[0], s[1], s[2] / 2, n))
}

/// Runs `kind`'s recurrence on `pre` (B, T, 2D) -> h (B, T, D), from h_{-1} = 0.
pub fn mixer_scan(kind: MixerKind, path: MixerPath, pre: &Tensor) -> Result<MixerScan> {
    mixer_scan_with(kind, path, pre, &ScanOptions::default())
}

/// [`mixer_scan`] with explicit scan options: the seam (`cpu` runs the reference) and the
/// strategy of the angle-fused kernel and of the scan ops.
pub fn mixer_scan_with(kind: MixerKind, path: MixerPath, pre: &Tensor, opts: &ScanOptions) -> Result<MixerScan> {
    let op = kind.name_static();
    let (b, t, d, n) = dims(kind, op, pre)?;
    let fused = path.fused(kind)?;
    let ctx = pre.context();
    let k = kind.block();
    route::run(
        op,
        ctx,
        opts,
        |gpu| {
            let pre = pre.contiguous()?;
            let (h, saved) = match kind {
                _ if fused => (
                    super::angle_fused::forward(gpu, op, &pre, k, opts.strategy)?,
                    Saved::AngleFused,
                ),
                MixerKind::MinGru => {
                    let (lc, lv) = gates::log_gates(gpu, op, &pre)?;
                    (scans::parallel_scan_log_with(&lc, &lv, opts)?, Saved::Log { lc, lv })
                }
                MixerKind::SignedMinGru => {
                    let (a, inj) = gates::signed_gates(gpu, op, &pre)?;
                    (scans::linear_scan_with(&a, &inj, None, opts)?, Saved::Linear(a))
                }
                MixerKind::RotationMinGru => {
                    let (a, inj) = gates::givens_gates(gpu, op, &pre, 2)?;
                    let h = scans::matrix_scan_with(&a, &inj.reshape(&[b, t, n, 2])?, None, opts)?;
                    (h.reshape(&[b, t, d])?, Saved::Matrix(a))
                }
                MixerKind::GivensMinGru { .. } => {
                    let (a, inj) = gates::givens_gates(gpu, op, &pre, k)?;
                    let h = scans::matrix_affine_scan_with(&a, &inj, None, opts)?;
                    (h.reshape(&[b, t, d])?, Saved::Matrix(a))
                }
            };
            Ok(MixerScan { h, kind, saved })
        },
        || {
            let h = reference::scan_f32(kind, &host(pre, op)?)?;
            Ok(MixerScan {
                h: Tensor::from_host(ctx, h)?,
                kind,
                saved: Saved::Reference,
            })
        },
    )
}

/// d pre (B, T, 2D) from the forward's `pre`, its result and dL/dh (B, T, D).
pub fn mixer_scan_backward(pre: &Tensor, fwd: &MixerScan, grad_h: &Tensor) -> Result<Tensor> {
    mixer_scan_backward_with(pre, fwd, grad_h, &ScanOptions::default())
}

/// [`mixer_scan_backward`] with explicit scan options (the seam follows the forward: a
/// reference forward gets the reference backward).
pub fn mixer_scan_backward_with(pre: &Tensor, fwd: &MixerScan, grad_h: &Tensor, opts: &ScanOptions) -> Result<Tensor> {
    let kind = fwd.kind;
    let op = kind.name_static();
    let (b, t, d, n) = dims(kind, op, pre)?;
    envelope::exact(op, "grad_h", grad_h, &[b, t, d], "(B, T, D), the shape of h")?;
    envelope::exact(op, "fwd.h", &fwd.h, &[b, t, d], "(B, T, D), the forward of this pre")?;
    grad_h.expect_context(pre.context(), op, "grad_h")?;
    fwd.h.expect_context(pre.context(), op, "fwd.h")?;
    let k = kind.block();
    let (pre, dh) = (pre.contiguous()?, grad_h.contiguous()?);
    let h = &fwd.h;
    match (&fwd.saved, pre.context().gpu()) {
        (Saved::AngleFused, Some(gpu)) => {
            super::angle_fused::backward(gpu, op, &pre, k, &h.contiguous()?, &dh, opts.strategy)
        }
        (Saved::Log { lc, lv }, Some(gpu)) => {
            let g = scans::parallel_scan_log_backward_with(lc, lv, h, &dh, opts)?;
            gates::log_gates_backward(gpu, op, &pre, &g.d_log_coeffs, &g.d_log_values)
        }
        (Saved::Linear(a), Some(gpu)) => {
            let g = scans::linear_scan_backward_with(a, None, h, &dh, opts)?;
            gates::signed_gates_backward(gpu, op, &pre, &g.da, &g.db)
        }
        (Saved::Matrix(a), Some(gpu)) if kind == MixerKind::RotationMinGru => {
            let shape = [b, t, n, 2];
            let g = scans::matrix_scan_backward_with(a, None, &h.reshape(&shape)?, &dh.reshape(&shape)?, opts)?;
            gates::givens_gates_backward(gpu, op, &pre, 2, &g.da, &g.db)
        }
        (Saved::Matrix(a), Some(gpu)) => {
            let shape = [b, t, n, k, 1];
            let g = scans::matrix_affine_scan_backward_with(a, None, &h.reshape(&shape)?, &dh.reshape(&shape)?, opts)?;
            gates::givens_gates_backward(gpu, op, &pre, k, &g.da, &g.db)
        }
        // The reference forward (CPU context or ENGINE_SCAN=cpu): the reference backward.
        _ => {
            let dpre = reference::scan_backward_f32(kind, &host(&pre, op)?, &host(&dh, op)?)?;
            Tensor::from_host(pre.context(), dpre)
        }
    }
}
