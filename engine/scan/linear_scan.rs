//! `linear_scan`: h_t = a_t h_{t-1} + b_t per channel, the affine scan with k = v = 1 and the
//! channels as lanes (`linear_gpu`: one channel per invocation, four adjacent ones when D % 4 == 0
//! and B x D is large enough that a quarter of the walks still fill a GPU).

use super::affine::{self, AffineOp};
use super::envelope::{self, AffineDims};
use super::grads::{Adjoint, ScanGrads};
use super::route::ScanOptions;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

const SCAN: AffineOp = AffineOp {
    op: "linear_scan",
    op_backward: "linear_scan_backward",
    b_name: "b",
    h_name: "h",
    dims,
    h0_shape: |d| vec![d.b, d.n],
    h0_layout: "(B, D)",
    h_layout: "(B, T, D), the shape of h",
};

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

/// [`linear_scan`] with an explicit route and strategy.
pub fn linear_scan_with(a: &Tensor, b: &Tensor, h0: Option<&Tensor>, opts: &ScanOptions) -> Result<Tensor> {
    affine::forward_op(&SCAN, a, b, h0, opts)
}

/// Gradients of [`linear_scan`] from its a, h0, its output h (B, T, D) and dL/dh (B, T, D):
/// da, db (B, T, D), dh0 (B, D).
pub fn linear_scan_backward(a: &Tensor, h0: Option<&Tensor>, h: &Tensor, grad_h: &Tensor) -> Result<ScanGrads> {
    linear_scan_backward_with(a, h0, h, grad_h, &ScanOptions::default())
}

/// [`linear_scan_backward`] with an explicit route and strategy.
pub fn linear_scan_backward_with(
    a: &Tensor,
    h0: Option<&Tensor>,
    h: &Tensor,
    grad_h: &Tensor,
    opts: &ScanOptions,
) -> Result<ScanGrads> {
    affine::backward_op(&SCAN, Adjoint { a, h0, h, grad: grad_h }, opts)
}

/// An item for [`crate::Context::tune`]: [`linear_scan`] forward on a, b (B, T, D) `shape`
/// in `dtype` with no h0, as a caller of that shape would run it (the channels per
/// invocation are what it tunes).
pub fn tune_linear_scan(shape: &[usize], dtype: crate::DType) -> crate::context::TuneItem {
    let shape = shape.to_vec();
    crate::context::TuneItem::new(
        crate::tune::Family::ChannelScan,
        format!("linear_scan {shape:?} {dtype}"),
        move |ctx| {
            let t = Tensor::zeros(ctx, &shape)?;
            let t = if dtype == crate::DType::F32 {
                t
            } else {
                t.to_dtype(dtype)?
            };
            linear_scan(&t, &t, None).map(drop)
        },
    )
}
