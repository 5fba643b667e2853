//! The kernels only GPT-2's one-token decode step uses (`shaders/models/gpt2/`): the token and
//! position embedding, and the head (ln_f and the tied output embedding). Its projections are
//! the decode projection every model uses (`generate::project`).
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
use crate::generate::project::{check_row, Norm};
use crate::generate::DecodeState;
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::shape::embedding_shapes;
use crate::tensor::Tensor;

const EMBED_TOKEN: KernelDef = KernelDef::new(
    "models/gpt2/embed_token",
    shader!("models/gpt2/embed_token.wgsl"),
    "embed_token",
);

const LM_HEAD: KernelDef = KernelDef::new("models/gpt2/lm_head", shader!("models/gpt2/lm_head.wgsl"), "lm_head");

/// Widest C the head kernel holds (`MAX_C` in `lm_head.wgsl`: GPT-2 XL's 1600).
const LM_HEAD_MAX_C: usize = 1600;

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

/// The final layer norm and the tied output embedding: x (1, C), ln_f (C,) twice, wte
/// (V, C) dense -> logits (1, V).
pub(crate) fn lm_head(x: &Tensor, norm: Norm, wte: &Tensor) -> Result<Tensor> {
    let op = "gpt2::lm_head";
    let ctx = x.context();
    let gpu = ctx.require_gpu(op)?;
    let (v, c) = (wte.shape()[0], wte.shape()[1]);
    if !wte.is_contiguous() || c % 4 != 0 || c > LM_HEAD_MAX_C {
        return Err(Error::Unsupported {
            op,
            message: format!(
                "wte {:?}: the head kernel needs a dense (V, C) with C % 4 == 0 and C <= {LM_HEAD_MAX_C}",
                wte.shape()
            ),
        });
    }
    for (arg, t) in [("x", x), ("ln_f weight", norm.0), ("ln_f bias", norm.1)] {
        check_row(op, arg, t, c)?;
        if t.layout().offset != 0 {
            return Err(Error::shape(op, arg, "a row at offset 0", t.shape()));
        }
    }
    let logits = Tensor::uninit(ctx, &[1, v], op)?;
    let params = Params::new().usize(v).f32(norm.2);
    let buffers = [
        x.gpu_buffer(op)?,
        norm.0.gpu_buffer(op)?,
        norm.1.gpu_buffer(op)?,
        wte.typed_buffer(op)?,
        logits.gpu_buffer(op)?,
    ];
    // CPU adapters: whole rows per invocation and few workgroups (see the kernel).
    let (whole_rows, rows) = if gpu.info.is_software() { (1, 2048) } else { (0, 64) };
    let consts = [
        ("WHOLE_ROWS", f64::from(whole_rows)),
        ("ROWS", f64::from(rows)),
        ("C", c as f64),
    ];
    gpu.dispatch(
        &gpu.typed_kernel(&LM_HEAD, &[("wte", wte.dtype())], &consts)?,
        &params,
        &buffers,
        groups_1d(v.div_ceil(rows as usize) as u32),
    )?;
    Ok(logits)
}

#[cfg(test)]
mod tests {
    use super::lm_head;
    use crate::check::Rng;
    use crate::generate::project::tests::reference;
    use crate::{Context, Tensor};

    /// The head's layer norm on a row whose squares overflow f32 unless it is scaled first
    /// (values near 1e37) gives the logits of the f64 reference, as on a plain row.
    #[test]
    fn the_head_normalises_rows_near_f32_max() {
        let ctx = Context::new().expect("a context");
        if ctx.require_gpu("test").is_err() {
            return;
        }
        let (c, v) = (64, 300);
        let mut rng = Rng::new(11);
        let wte = rng.vec_range(v * c, -1.0, 1.0);
        let g = rng.vec_range(c, 0.5, 1.5);
        let b = rng.vec_range(c, -0.5, 0.5);
        let base = rng.vec_range(c, -2.0, 3.0);
        let [gt, bt] = [&g, &b].map(|t| Tensor::from_slice(&ctx, &[c], t).unwrap());
        let wt = Tensor::from_slice(&ctx, &[v, c], &wte).unwrap();
        for magnitude in [1.0f32, 3e37] {
            let x: Vec<f32> = base.iter().map(|x| x * magnitude).collect();
            let xt = Tensor::from_slice(&ctx, &[1, c], &x).unwrap();
            let got = lm_head(&xt, (&gt, &bt, 1e-5), &wt).unwrap().to_vec().unwrap();
            // The head's logits are xn @ wte^T: the projection reference with w = wte^T.
            let w: Vec<f32> = (0..c * v).map(|i| wte[(i % v) * c + i / v]).collect();
            let want = reference(&x, &g, &b, &w, &vec![0.0; v], true);
            for j in 0..v {
                let ok = (f64::from(got[j]) - want[j]).abs() <= 1e-4 * (1.0 + want[j].abs());
                assert!(ok, "x ~ {magnitude}: logit {j} = {} against {}", got[j], want[j]);
            }
        }
    }
}
