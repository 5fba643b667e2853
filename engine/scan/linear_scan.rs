//! `linear_scan`: h_t = a_t h_{t-1} + b_t per channel, the affine scan with k = v = 1 and the
//! channels as lanes (one invocation per channel; a workgroup owns 64 consecutive channels).

use super::affine::{self, ScanGrads};
use super::dispatch::ScanOptions;
use super::envelope::{self, AffineDims};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

const OP: &str = "linear_scan";
const OP_BACKWARD: &str = "linear_scan_backward";

fn dims(op: &'static str, a: &Tensor, other: &'static str, b: &Tensor) -> Result<AffineDims> {
    envelope::rank(op, "a", a, 3, "(B, T, D)")?;
    envelope::rank(op, other, b, 3, "(B, T, D)")?;
    if a.shape() != b.shape() {
        return Err(Error::mismatch(op, "a", a.shape(), other, b.shape()));
    }
    let s = a.shape();
    envelope::nonempty_time(op, "a", a, s[1])?;
    Ok(AffineDims {
        b: s[0],
        t: s[1],
        n: s[2],
        k: 1,
        v: 1,
    })
}

/// a, b (B, T, D), h0 (B, D) or zeros -> h (B, T, D).
pub fn linear_scan(a: &Tensor, b: &Tensor, h0: Option<&Tensor>) -> Result<Tensor> {
    linear_scan_with(a, b, h0, &ScanOptions::default())
}

/// [`linear_scan`] with an explicit dispatch and strategy.
pub fn linear_scan_with(a: &Tensor, b: &Tensor, h0: Option<&Tensor>, opts: &ScanOptions) -> Result<Tensor> {
    let d = dims(OP, a, "b", b)?;
    b.expect_context(a.context(), OP, "b")?;
    if let Some(h0) = h0 {
        envelope::exact(OP, "h0", h0, &[d.b, d.n], "(B, D)")?;
        h0.expect_context(a.context(), OP, "h0")?;
    }
    let h0 = h0.map(|t| t.reshape(&d.h0_shape())).transpose()?;
    let h = affine::forward(
        OP,
        d,
        &a.reshape(&d.a_shape())?,
        &b.reshape(&d.h_shape())?,
        h0.as_ref(),
        opts,
    )?;
    h.reshape(a.shape())
}

/// Gradients of [`linear_scan`] from its a, h0, its output h (B, T, D) and dL/dh (B, T, D):
/// da, db (B, T, D), dh0 (B, D).
pub fn linear_scan_backward(a: &Tensor, h0: Option<&Tensor>, h: &Tensor, grad_h: &Tensor) -> Result<ScanGrads> {
    linear_scan_backward_with(a, h0, h, grad_h, &ScanOptions::default())
}

/// [`linear_scan_backward`] with an explicit dispatch and strategy.
pub fn linear_scan_backward_with(
    a: &Tensor,
    h0: Option<&Tensor>,
    h: &Tensor,
    grad_h: &Tensor,
    opts: &ScanOptions,
) -> Result<ScanGrads> {
    let d = dims(OP_BACKWARD, a, "h", h)?;
    envelope::backward_args(
        OP_BACKWARD,
        a,
        "h",
        h,
        grad_h,
        "(B, T, D), the shape of h",
        h0,
        &[d.b, d.n],
        "(B, D)",
    )?;
    let h0 = h0.map(|t| t.reshape(&d.h0_shape())).transpose()?;
    let g = affine::backward(
        OP_BACKWARD,
        d,
        &a.reshape(&d.a_shape())?,
        h0.as_ref(),
        &h.reshape(&d.h_shape())?,
        &grad_h.reshape(&d.h_shape())?,
        opts,
    )?;
    Ok(ScanGrads {
        da: g.da.reshape(a.shape())?,
        db: g.db.reshape(a.shape())?,
        dh0: g.dh0.reshape(&[d.b, d.n])?,
    })
}
