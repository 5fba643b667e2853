//! Causal scaled dot-product attention per head, composed from the kernels above:
//! scores = (q k^T) / sqrt(D) (batched matmul over the strided k view, scale fused),
//! causal softmax, then scores @ v. k and v may be narrowed views of a larger KV cache.

use crate::error::{Error, Result};
use crate::ops::matmul::{matmul, matmul_scaled};
use crate::ops::softmax::softmax_last;
use crate::reference;
use crate::tensor::Tensor;

/// `softmax(q k^T / sqrt(D), causal) v` per head: query i sees keys `0..=past + i`.
/// q (H, Tq, D), k (H, Tk, D), v (H, Tk, D) with `past + Tq <= Tk` -> (H, Tq, D).
/// Strided views (a narrowed KV cache, heads split out of a QKV projection) are read in place.
pub fn attention(q: &Tensor, k: &Tensor, v: &Tensor, past: usize) -> Result<Tensor> {
    let op = "attention";
    let ctx = q.context();
    k.expect_context(ctx, op, "k")?;
    v.expect_context(ctx, op, "v")?;
    if q.rank() != 3 {
        return Err(Error::shape(op, "q", "(H, Tq, D)", q.shape()));
    }
    let (h, tq, d) = (q.shape()[0], q.shape()[1], q.shape()[2]);
    if k.rank() != 3 || k.shape()[0] != h || k.shape()[2] != d {
        return Err(Error::mismatch(op, "q (H, Tq, D)", q.shape(), "k (H, Tk, D)", k.shape()));
    }
    if v.shape() != k.shape() {
        return Err(Error::mismatch(op, "k (H, Tk, D)", k.shape(), "v (H, Tk, D)", v.shape()));
    }
    let tk = k.shape()[1];
    if past + tq > tk {
        return Err(Error::value(op, "past", format!("past + Tq ({tq}) <= Tk ({tk})"), past));
    }
    if d == 0 {
        return Err(Error::shape(op, "q", "D >= 1", q.shape()));
    }
    if !ctx.is_gpu() {
        let (q, k, v) = (q.host(op)?, k.host(op)?, v.host(op)?);
        return Tensor::from_host(ctx, reference::nn::attention(&q.view(), &k.view(), &v.view(), past)?);
    }
    let scale = 1.0 / (d as f32).sqrt();
    let scores = matmul_scaled(q, &k.transpose(1, 2)?, scale)?; // (H, Tq, Tk)
    let probs = softmax_last(&scores, Some(past))?; // (H, Tq, Tk)
    matmul(&probs, v) // (H, Tq, D)
}
