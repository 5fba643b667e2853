//! Token + position embedding, gathered and summed in one launch (`shaders/nn/embedding.wgsl`).
//! The tables may be F32, F16 or BF16 (each its own); the output is F32.

use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::reference;
use crate::shape::embedding_shapes;
use crate::tensor::Tensor;

const EMBEDDING: KernelDef = KernelDef::new("nn/embedding", shader!("nn/embedding.wgsl"), "embedding");

/// `wte[ids[t]] + wpe[pos_offset + t]` for every t. wte (V, C), wpe (P, C) -> (T, C) with
/// T = ids.len(). Every id must be below V (and below 2^24) and `pos_offset + T <= P`.
pub fn embedding(wte: &Tensor, wpe: &Tensor, ids: &[u32], pos_offset: usize) -> Result<Tensor> {
    let op = "embedding";
    let ctx = wte.context();
    wpe.expect_context(ctx, op, "wpe")?;
    let (v, c, _) = embedding_shapes(op, wte.shape(), wpe.shape())?;
    let t = ids.len();
    // (T, C): checked before either path allocates it.
    crate::shape::numel(op, "output (T, C)", &[t, c])?;
    if pos_offset.checked_add(t).is_none_or(|end| end > wpe.shape()[0]) {
        return Err(Error::value(
            op,
            "pos_offset",
            format!("pos_offset + {t} tokens <= {} positions of wpe", wpe.shape()[0]),
            pos_offset,
        ));
    }
    if let Some(bad) = ids.iter().find(|&&id| id as usize >= v || id >= 1 << 24) {
        return Err(Error::value(
            op,
            "ids",
            format!("token ids below the vocabulary size {v}"),
            bad,
        ));
    }
    if !ctx.is_gpu() {
        let (e, p) = (wte.host_widened(op)?, wpe.host_widened(op)?);
        return Tensor::from_host(ctx, reference::nn::embedding(&e.view(), &p.view(), ids, pos_offset)?);
    }
    // Ids travel as f32, exact below 2^24 (checked above); tensors are f32-only.
    let id_values: Vec<f32> = ids.iter().map(|&i| i as f32).collect();
    embedding_of(wte, wpe, &Tensor::from_slice(ctx, &[t], &id_values)?, pos_offset)
}

/// [`embedding`] with the ids already on the device as exact f32 values (T,), unchecked
/// against V: a compiled plan writes them before each replay (the caller checks them).
pub(crate) fn embedding_of(wte: &Tensor, wpe: &Tensor, ids: &Tensor, pos_offset: usize) -> Result<Tensor> {
    let op = "embedding";
    let ctx = wte.context();
    let gpu = ctx.require_gpu(op)?;
    let (t, c) = (ids.len(), wte.shape()[1]);
    let out = Tensor::uninit(ctx, &[t, c], op)?;
    if out.is_empty() {
        return Ok(out);
    }
    let (wte, wpe, ids) = (wte.contiguous()?, wpe.contiguous()?, ids.contiguous()?);
    let kernel = gpu.typed_kernel(&EMBEDDING, &[("wte", wte.dtype()), ("wpe", wpe.dtype())], &[])?;
    let buffers = [
        ids.gpu_buffer(op)?,
        wte.typed_buffer(op)?,
        wpe.typed_buffer(op)?,
        out.gpu_buffer(op)?,
    ];
    let params = Params::new()
        .usize(t * c)
        .usize(c)
        .checked(op, "pos_offset", pos_offset)?;
    gpu.dispatch_items(&kernel, &params, &buffers, t * c)?;
    Ok(out)
}
