//! Causal scaled dot-product attention per head, two ways:
//! - composed (the default): scores = (q k^T) / sqrt(D) as a batched matmul over the strided
//!   k view with the scale fused, a causal softmax, then scores @ v (three launches);
//! - fused (`shaders/ops/attention_fused.wgsl`): one launch, one workgroup per (head, query),
//!   online softmax over blocks of keys, scores never stored; D <= 256. Its output is the
//!   (H, Tq, D) view of a dense (Tq, H, D) tensor, so heads go side by side without a copy.
//!
//! k and v may be narrowed views of a larger KV cache; q any (H, Tq, D) view.

use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::ops::matmul::{matmul, matmul_scaled};
use crate::ops::softmax::softmax_last;
use crate::reference;
use crate::shape::attention_shapes;
use crate::tensor::Tensor;

const ATTENTION_FUSED: KernelDef = KernelDef::new(
    "ops/attention_fused",
    shader!("ops/attention_fused.wgsl"),
    "attention_fused",
);

/// Largest head size the fused kernel holds (one invocation per feature).
pub const FUSED_MAX_D: usize = 256;

/// How [`attention_with`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttentionPath {
    /// Batched matmul, causal softmax, batched matmul.
    Composed,
    /// One kernel with an online softmax (D <= 256).
    Fused,
    /// `Fused` when the head fits it (D <= 256), else `Composed`.
    Auto,
}

/// `softmax(q k^T / sqrt(D), causal) v` per head: query i sees keys `0..=past + i`.
/// q (H, Tq, D), k (H, Tk, D), v (H, Tk, D) with `past + Tq <= Tk` -> (H, Tq, D).
/// Strided views (a narrowed KV cache, heads split out of a QKV projection) are read in place.
pub fn attention(q: &Tensor, k: &Tensor, v: &Tensor, past: usize) -> Result<Tensor> {
    attention_with(q, k, v, past, AttentionPath::Composed)
}

/// [`attention`] on a chosen path. Same shapes; `Fused` fails with `Error::Fallback` when
/// D > 256.
pub fn attention_with(q: &Tensor, k: &Tensor, v: &Tensor, past: usize, path: AttentionPath) -> Result<Tensor> {
    let op = "attention";
    let ctx = q.context();
    k.expect_context(ctx, op, "k")?;
    v.expect_context(ctx, op, "v")?;
    for (arg, t) in [("q", q), ("k", k), ("v", v)] {
        t.expect_dtype(op, arg, &[crate::DType::F32])?;
    }
    let (_, _, _, d) = attention_shapes(op, q.shape(), k.shape(), v.shape(), past)?;
    if d == 0 {
        return Err(Error::shape(op, "q", "D >= 1", q.shape()));
    }
    if !ctx.is_gpu() {
        let (q, k, v) = (q.host(op)?, k.host(op)?, v.host(op)?);
        return Tensor::from_host(ctx, reference::nn::attention(&q.view(), &k.view(), &v.view(), past)?);
    }
    let scale = 1.0 / (d as f32).sqrt();
    if path == AttentionPath::Fused || (path == AttentionPath::Auto && d <= FUSED_MAX_D) {
        return fused(q, k, v, past, scale);
    }
    let scores = matmul_scaled(q, &k.transpose(1, 2)?, scale)?; // (H, Tq, Tk)
    let probs = softmax_last(&scores, Some(past))?; // (H, Tq, Tk)
    matmul(&probs, v) // (H, Tq, D)
}

fn fused(q: &Tensor, k: &Tensor, v: &Tensor, past: usize, scale: f32) -> Result<Tensor> {
    let op = "attention";
    let (h, tq, d) = (q.shape()[0], q.shape()[1], q.shape()[2]);
    if d > FUSED_MAX_D {
        return Err(Error::Fallback {
            op,
            reason: format!("the fused kernel holds D <= {FUSED_MAX_D}; q is {:?}", q.shape()),
        });
    }
    let gpu = q.context().require_gpu(op)?;
    // Written (Tq, H, D) and returned as its (H, Tq, D) view: a model putting the heads side
    // by side, (Tq, H * D), then reshapes without a copy.
    let out = Tensor::uninit(q.context(), &[tq, h, d], op)?;
    if out.is_empty() {
        return out.transpose(0, 1);
    }
    let mut params = Params::new()
        .usize(h)
        .usize(tq)
        .checked(op, "past", past)?
        .f32(scale)
        .usize(q.layout().offset)
        .usize(k.layout().offset)
        .usize(v.layout().offset);
    for t in [q, k, v] {
        let s = &t.layout().strides;
        params = params.vec4([s[0], s[1], s[2], 0]);
    }
    let kernel = gpu.kernel(&ATTENTION_FUSED, &[("D", d as f64)])?;
    let buffers = [
        q.gpu_buffer(op)?,
        k.gpu_buffer(op)?,
        v.gpu_buffer(op)?,
        out.gpu_buffer(op)?,
    ];
    gpu.dispatch(&kernel, &params, &buffers, groups_1d((h * tq) as u32))?;
    out.transpose(0, 1)
}
