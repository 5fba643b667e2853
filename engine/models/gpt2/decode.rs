//! The kernel only GPT-2's one-token decode step uses (`shaders/models/gpt2/`): the token and
//! position embedding. Its projections and its head (ln_f and the tied output embedding) are
//! the kernels every model uses (`generate::project`, `generate::head`).
//!
//! Everything a step needs that changes from one token to the next (the token id, its
//! position, the sampler's counter) lives in a [`DecodeState`] on the device
//! ([`crate::generate::device`]), so the same dispatches serve every step: `embed_token`
//! reads the token and position from it, the QKV projection writes this position's key and
//! value into the cache, attention covers positions `0..=pos`, and the device sampler
//! ([`crate::generate::device::sample`]) picks the next token, appends it to the ids ring and
//! advances the state. Per block the step is five dispatches: layer norm fused into the QKV projection
//! (with the cache write), attention, the output projection with the residual add, layer norm
//! fused into the MLP's first projection (bias + GELU), the second projection with the
//! residual add. The ops run eagerly like any other op, or inside [`crate::plan::Plan::capture`].

use crate::error::{Error, Result};
use crate::generate::DecodeState;
use crate::kernel::{shader, KernelDef, Params};
use crate::shape::embedding_shapes;
use crate::tensor::Tensor;

const EMBED_TOKEN: KernelDef = KernelDef::new(
    "models/gpt2/embed_token",
    shader!("models/gpt2/embed_token.wgsl"),
    "embed_token",
);

/// x (1, C) = wte[state.token] + wpe[state.pos]. wte (V, C), wpe (P, C), both dense.
pub(crate) fn embed_token(wte: &Tensor, wpe: &Tensor, st: &DecodeState) -> Result<Tensor> {
    let op = "gpt2::embed_token";
    let ctx = wte.context();
    let gpu = ctx.require_gpu(op)?;
    let (v, c, _) = embedding_shapes(op, wte.shape(), wpe.shape())?;
    if !wte.is_contiguous() || !wpe.is_contiguous() {
        return Err(Error::Unsupported {
            op,
            message: "strided views of wte or wpe (the decode kernel reads them dense)".into(),
        });
    }
    let x = Tensor::uninit(ctx, &[1, c], op)?;
    let params = Params::new().usize(c).usize(v).usize(wpe.shape()[0]);
    let buffers = [
        st.state.gpu_buffer(op)?,
        wte.typed_buffer(op)?,
        wpe.typed_buffer(op)?,
        x.gpu_buffer(op)?,
    ];
    let kernel = gpu.typed_kernel(&EMBED_TOKEN, &[("wte", wte.dtype()), ("wpe", wpe.dtype())], &[])?;
    gpu.dispatch_items(&kernel, &params, &buffers, c)?;
    Ok(x)
}
