//! The GPT-2 forward pass on the engine's ops, with a key/value cache.
//!
//! One step takes T new tokens at positions `past..past + T` (the whole prompt first, then
//! one token at a time) and returns logits for them. Per block (nanoGPT's names):
//! ```text
//! h   = layer_norm(x, ln_1)                 (T, C)
//! q   = (h @ c_attn + b)[:, :C]             (T, C) -> (H, T, D); the keys and values of the
//!                                           same product go straight into the cache
//! a   = attention(q, K, V, past)            (H, T, D) -> (T, C), K, V = cache[0..past+T]
//! x   = x + a @ c_proj + b                  (the projection, the residual add and the next
//! h   = layer_norm(x, ln_2)                  layer norm are two dispatches)
//! x   = x + gelu(h @ c_fc + b) @ c_proj + b
//! ```
//! then `ln_f` (fused into the last projection) and logits = x @ wte^T through a transposed view of wte (tied embeddings).
//! When wte is larger than one storage binding allows (GPT-2 124M's 154 MB on a 128 MiB
//! device), it is kept as row blocks: tokens are gathered from their block and the logits
//! of each block are written into their columns.
//! On the CPU context every op runs its ndarray twin, so `--cpu` is the same model.
//!
//! Dtypes: the matrices (wte, wpe, each block's four projections) live in the model's dtype
//! (F32, F16 or BF16; by default the one the checkpoint stored them in), read by the kernels
//! through their dtype slots and widened in registers, so a half model's step reads half the
//! weight bytes. Biases, layer-norm parameters, activations and the cache stay F32 (the
//! vectors are 0.1% of the bytes).

use crate::context::Context;
use crate::error::{Error, Result};
use crate::ops::{self, AttentionPath};
use crate::shape::DType;
use crate::tensor::Tensor;

use super::config::Config;
use super::decode;
use super::kv_cache::KvCache;
use super::weights::{Block, Weights};
use crate::generate::{self, DecodeState, Project, Prologue, Queries};

/// One block's parameters on a context.
#[derive(Clone)]
struct BlockTensors {
    ln_1_weight: Tensor,      // (C,)
    ln_1_bias: Tensor,        // (C,)
    attn_weight: Tensor,      // (C, 3C)
    attn_bias: Tensor,        // (3C,)
    attn_proj_weight: Tensor, // (C, C)
    attn_proj_bias: Tensor,   // (C,)
    ln_2_weight: Tensor,      // (C,)
    ln_2_bias: Tensor,        // (C,)
    fc_weight: Tensor,        // (C, 4C)
    fc_bias: Tensor,          // (4C,)
    mlp_proj_weight: Tensor,  // (4C, C)
    mlp_proj_bias: Tensor,    // (C,)
}

impl BlockTensors {
    fn upload(ctx: &Context, b: &Block, stored: DType, dtype: DType) -> Result<Self> {
        let t = |a: &ndarray::ArrayD<f32>| Tensor::from_array(ctx, a);
        let m = |a: &ndarray::Array2<f32>| upload_matrix(ctx, a.view(), stored, dtype);
        Ok(BlockTensors {
            ln_1_weight: t(&b.ln_1_weight.clone().into_dyn())?,
            ln_1_bias: t(&b.ln_1_bias.clone().into_dyn())?,
            attn_weight: m(&b.attn_weight)?,
            attn_bias: t(&b.attn_bias.clone().into_dyn())?,
            attn_proj_weight: m(&b.attn_proj_weight)?,
            attn_proj_bias: t(&b.attn_proj_bias.clone().into_dyn())?,
            ln_2_weight: t(&b.ln_2_weight.clone().into_dyn())?,
            ln_2_bias: t(&b.ln_2_bias.clone().into_dyn())?,
            fc_weight: m(&b.fc_weight)?,
            fc_bias: t(&b.fc_bias.clone().into_dyn())?,
            mlp_proj_weight: m(&b.mlp_proj_weight)?,
            mlp_proj_bias: t(&b.mlp_proj_bias.clone().into_dyn())?,
        })
    }
}

/// A matrix uploaded in the dtype it was `stored` in (its values are exact values of it, so
/// narrowing on the host loses nothing), then converted on the device when the model runs
/// in another `dtype`.
fn upload_matrix(ctx: &Context, a: ndarray::ArrayView2<f32>, stored: DType, dtype: DType) -> Result<Tensor> {
    let data: Vec<f32> = a.iter().copied().collect();
    let t = Tensor::from_slice_as(ctx, a.shape(), &data, stored)?;
    t.to_dtype(dtype)
}

/// What one step returns.
#[derive(Clone, Debug)]
pub struct Step {
    /// Logits (T, V) for every new position, or (1, V) for the last one only.
    pub logits: Tensor,
    /// Token + position embeddings of the new positions (T, C), when captured.
    pub embeddings: Option<Tensor>,
    /// The residual stream after each block (n_layer of (T, C)), when captured.
    pub residuals: Vec<Tensor>,
}

/// Which logits and intermediates a step keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepOptions {
    /// Logits for every new position instead of the last one only.
    pub all_logits: bool,
    /// Keep the embeddings and each block's residual (for verification).
    pub capture: bool,
}

/// GPT-2 with its weights on a context. Cloning shares the weights.
#[derive(Clone)]
pub struct Gpt2 {
    ctx: Context,
    config: Config,
    dtype: DType,     // of the matrices
    wte: Vec<Tensor>, // row blocks of (V, C): (V_i, C), in order
    wpe: Tensor,      // (P, C)
    blocks: Vec<BlockTensors>,
    ln_f_weight: Tensor, // (C,)
    ln_f_bias: Tensor,   // (C,)
}

impl Gpt2 {
    /// Uploads `weights` to `ctx` (a GPU, or the CPU reference context), the matrices in
    /// the dtype the checkpoint stored them in ([`Weights::dtype`]). wte is split into row
    /// blocks only when it exceeds the device's storage binding limit.
    pub fn new(ctx: &Context, weights: &Weights) -> Result<Gpt2> {
        Self::with_dtype(ctx, weights, weights.dtype)
    }

    /// Bytes a decode step reads from the weights: every block's tensors, ln_f and wte (the
    /// head reads all of it), without wpe (one row a step).
    pub fn weight_bytes(&self) -> usize {
        let wpe = self.wpe.len() * self.wpe.dtype().size();
        self.weight_tensors()
            .iter()
            .map(|t| t.len() * t.dtype().size())
            .sum::<usize>()
            - wpe
    }

    /// [`Gpt2::new`] with the matrices in `dtype`: uploaded as stored, then converted on the
    /// device (to F16 or BF16 rounded to nearest even; to F32 exact).
    pub fn with_dtype(ctx: &Context, weights: &Weights, dtype: DType) -> Result<Gpt2> {
        let row_bytes = (weights.config.n_embd as u64).saturating_mul(dtype.size() as u64);
        let rows = (ctx.info().max_storage_binding / row_bytes.max(1)).max(1);
        Self::build(ctx, weights, usize::try_from(rows).unwrap_or(usize::MAX), dtype)
    }

    /// [`Gpt2::new`] with wte split into row blocks of at most `rows` (>= 1) tokens (tests
    /// force several blocks on small models with this).
    pub fn with_vocab_block(ctx: &Context, weights: &Weights, rows: usize) -> Result<Gpt2> {
        if rows == 0 {
            return Err(Error::value(
                "Gpt2::with_vocab_block",
                "rows",
                "at least 1 token per block",
                rows,
            ));
        }
        Self::build(ctx, weights, rows, weights.dtype)
    }

    fn build(ctx: &Context, weights: &Weights, rows: usize, dtype: DType) -> Result<Gpt2> {
        weights.validate()?;
        let up = |a: ndarray::ArrayD<f32>| Tensor::from_array(ctx, &a);
        let stored = weights.dtype;
        let v = weights.config.vocab_size;
        let rows = rows.clamp(1, v.max(1));
        let wte = (0..v)
            .step_by(rows)
            .map(|start| {
                let block = weights.wte.slice(ndarray::s![start..(start + rows).min(v), ..]);
                upload_matrix(ctx, block, stored, dtype)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Gpt2 {
            ctx: ctx.clone(),
            config: weights.config.clone(),
            dtype,
            wte,
            wpe: upload_matrix(ctx, weights.wpe.view(), stored, dtype)?,
            blocks: weights
                .blocks
                .iter()
                .map(|b| BlockTensors::upload(ctx, b, stored, dtype))
                .collect::<Result<_>>()?,
            ln_f_weight: up(weights.ln_f_weight.clone().into_dyn())?,
            ln_f_bias: up(weights.ln_f_bias.clone().into_dyn())?,
        })
    }

    /// The dtype of the matrices on the device.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The hyperparameters.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The context the weights live on.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// An empty cache for this model.
    pub fn new_cache(&self) -> Result<KvCache> {
        KvCache::new(&self.ctx, &self.config)
    }

    /// Runs `ids` (T >= 1 new tokens) at positions `cache.len()..`, appends their keys and
    /// values to `cache`, and returns the logits (and, when asked, the intermediates).
    pub fn step(&self, ids: &[u32], cache: &mut KvCache, opts: StepOptions) -> Result<Step> {
        let op = "Gpt2::step";
        let cfg = &self.config;
        let t = ids.len();
        if t == 0 {
            return Err(Error::value(op, "ids", "at least one token", 0));
        }
        if t > cache.remaining() {
            return Err(Error::value(
                op,
                "ids",
                format!("at most {} tokens (n_positions {})", cache.remaining(), cfg.n_positions),
                t,
            ));
        }
        let past = cache.len();
        let x = self.embed(ids, past)?; // (T, C)
        let embeddings = opts.capture.then(|| x.clone());
        let mut residuals = Vec::new();
        let (_, h) = self.blocks(x, cache, opts.capture.then_some(&mut residuals))?; // h = ln_f(x)
        cache.advance(t);
        let rows = if opts.all_logits { h } else { h.narrow(0, t - 1, t)? };
        Ok(Step {
            logits: self.logits(&rows)?,
            embeddings,
            residuals,
        })
    }

    /// Every block over x (T, C) at positions `cache.len()..`, writing the keys and values
    /// into `cache` (without advancing it); pushes each block's residual when asked. Returns
    /// the residual stream and its final layer norm (ln_f), both (T, C). Each layer norm is
    /// fused with the projection before it (`linear_residual_layer_norm`), so the block after
    /// a projection starts from its normalised input.
    fn blocks(
        &self,
        mut x: Tensor,
        cache: &KvCache,
        mut residuals: Option<&mut Vec<Tensor>>,
    ) -> Result<(Tensor, Tensor)> {
        let cfg = &self.config;
        let eps = cfg.layer_norm_epsilon;
        let (t, c) = (x.shape()[0], cfg.n_embd);
        let past = cache.len();
        // The norm that follows block i: the next block's ln_1, or ln_f after the last.
        let next_norm = |i: usize| match self.blocks.get(i) {
            Some(b) => (&b.ln_1_weight, &b.ln_1_bias),
            None => (&self.ln_f_weight, &self.ln_f_bias),
        };
        let (g, beta) = next_norm(0);
        let mut h = ops::layer_norm(&x, g, beta, eps)?; // (T, C)
        for (layer, b) in self.blocks.iter().enumerate() {
            // q (H, T, D); keys and values (H, past + T, D), this step's written into the cache.
            let [q, keys, values] = cache.project_qkv(layer, &h, &b.attn_weight, &b.attn_bias)?;
            let a = ops::attention_with(&q, &keys, &values, past, AttentionPath::Auto)?; // (H, T, D)
            let a = a.transpose(0, 1)?.reshape(&[t, c])?; // (T, C): heads side by side
                                                          // x = x + a @ W + b;  h = ln_2(x)
            (x, h) = ops::linear_residual_layer_norm(
                &a,
                &b.attn_proj_weight,
                &b.attn_proj_bias,
                &x,
                &b.ln_2_weight,
                &b.ln_2_bias,
                eps,
            )?;
            let f = ops::linear_gelu(&h, &b.fc_weight, Some(&b.fc_bias))?; // (T, 4C)
                                                                           // x = x + f @ W + b;  h = the next norm of x
            let (g, beta) = next_norm(layer + 1);
            (x, h) = ops::linear_residual_layer_norm(&f, &b.mlp_proj_weight, &b.mlp_proj_bias, &x, g, beta, eps)?;
            if let Some(r) = residuals.as_deref_mut() {
                r.push(x.clone());
            }
        }
        Ok((x, h))
    }

    /// The prompt step of a compiled generation: `ids` (T,) token ids on the device (exact
    /// f32) from an empty `cache`, then the device sampler picks the first new token into `st`
    /// (position T). Returns the last position's logits (1, V).
    pub(crate) fn prefill_on_device(&self, ids: &Tensor, cache: &KvCache, st: &DecodeState) -> Result<Tensor> {
        let [wte] = self.wte.as_slice() else {
            return Err(self.blocked_wte("Gpt2::prefill_on_device"));
        };
        let t = ids.len();
        if !cache.is_empty() || t == 0 || t > cache.remaining() {
            return Err(Error::value(
                "Gpt2::prefill_on_device",
                "ids",
                format!("1..={} tokens into an empty cache", cache.remaining()),
                t,
            ));
        }
        let x = ops::embedding::embedding_of(wte, &self.wpe, ids, 0)?; // (T, C)
        let (_, h) = self.blocks(x, cache, None)?; // h = ln_f(x)
        let logits = self.logits(&h.narrow(0, t - 1, t)?)?; // (1, V)
        generate::sample(&logits, st, Some(t))?;
        Ok(logits)
    }

    /// One decode step of a compiled generation, all on the device: embeds `st`'s token at its
    /// position, runs every block with the fused decode kernels (five dispatches a block),
    /// then ln_f, the logits (1, V) and the device sampler, which advances `st`.
    pub(crate) fn decode_on_device(&self, cache: &KvCache, st: &DecodeState) -> Result<Tensor> {
        let [wte] = self.wte.as_slice() else {
            return Err(self.blocked_wte("Gpt2::decode_on_device"));
        };
        let eps = self.config.layer_norm_epsilon;
        let (k_cache, v_cache) = cache.tensors();
        let x = decode::embed_token(wte, &self.wpe, st)?; // (1, C)
        for (layer, b) in self.blocks.iter().enumerate() {
            // q = ln_1(x) @ c_attn + b (C,); k and v go straight into the cache at the position
            let qkv = Project::Qkv {
                k_cache,
                v_cache,
                layer,
            };
            let q = generate::ln_matvec(
                &x,
                Prologue::Layer((&b.ln_1_weight, &b.ln_1_bias, eps)),
                &b.attn_weight,
                &b.attn_bias,
                qkv,
                st,
                None,
            )?;
            let q = q.ok_or_else(|| self.blocked_wte("Gpt2::decode_on_device"))?; // (C,)
            let a = generate::attention_decode(Queries::Ready(&q), k_cache, v_cache, layer, st)?; // (1, C)

            // x += a @ W + b, in place
            let x_res = Project::Residual(&x);
            generate::ln_matvec(
                &a,
                Prologue::None,
                &b.attn_proj_weight,
                &b.attn_proj_bias,
                x_res,
                st,
                None,
            )?;
            // f = gelu(ln_2(x) @ c_fc + b)
            let gelu = Project::New { gelu: true };
            let f = generate::ln_matvec(
                &x,
                Prologue::Layer((&b.ln_2_weight, &b.ln_2_bias, eps)),
                &b.fc_weight,
                &b.fc_bias,
                gelu,
                st,
                None,
            )?;
            let f = f.ok_or_else(|| self.blocked_wte("Gpt2::decode_on_device"))?; // (4C,)

            // x += f @ W + b, in place
            generate::ln_matvec(
                &f,
                Prologue::None,
                &b.mlp_proj_weight,
                &b.mlp_proj_bias,
                Project::Residual(&x),
                st,
                None,
            )?;
        }
        let norm = Prologue::Layer((&self.ln_f_weight, &self.ln_f_bias, eps));
        let logits = generate::head(&x, norm, wte)?; // (1, V)
        generate::sample(&logits, st, None)?;
        Ok(logits)
    }

    fn blocked_wte(&self, op: &'static str) -> Error {
        Error::Unsupported {
            op,
            message: format!(
                "wte is split into {} row blocks (larger than one storage binding); compiled decoding needs it whole",
                self.wte.len()
            ),
        }
    }

    /// Every weight tensor, for plans that must hold what they bind.
    pub(crate) fn weight_tensors(&self) -> Vec<&Tensor> {
        let mut out: Vec<&Tensor> = self.wte.iter().collect();
        out.extend([&self.wpe, &self.ln_f_weight, &self.ln_f_bias]);
        for b in &self.blocks {
            out.extend([
                &b.ln_1_weight,
                &b.ln_1_bias,
                &b.attn_weight,
                &b.attn_bias,
                &b.attn_proj_weight,
                &b.attn_proj_bias,
                &b.ln_2_weight,
                &b.ln_2_bias,
                &b.fc_weight,
                &b.fc_bias,
                &b.mlp_proj_weight,
                &b.mlp_proj_bias,
            ]);
        }
        out
    }

    /// Token + position embeddings (T, C) of `ids` at positions `past..`.
    fn embed(&self, ids: &[u32], past: usize) -> Result<Tensor> {
        if let [wte] = self.wte.as_slice() {
            return ops::embedding(wte, &self.wpe, ids, past);
        }
        // Blocked wte: each token from its block into its row of x.
        let v = self.config.vocab_size;
        if let Some(bad) = ids.iter().find(|&&id| id as usize >= v) {
            return Err(Error::value(
                "embedding",
                "ids",
                format!("token ids below the vocabulary size {v}"),
                bad,
            ));
        }
        let block = self.wte.first().map_or(1, |w| w.shape()[0].max(1));
        let x = Tensor::zeros(&self.ctx, &[ids.len(), self.config.n_embd])?;
        for (t, &id) in ids.iter().enumerate() {
            let (b, local) = (id as usize / block, id % block as u32);
            let wte = self
                .wte
                .get(b)
                .ok_or_else(|| Error::value("embedding", "ids", format!("below {}", self.config.vocab_size), id))?;
            ops::copy_into(
                &x.narrow(0, t, t + 1)?,
                &ops::embedding(wte, &self.wpe, &[local], past + t)?,
            )?;
        }
        Ok(x)
    }

    /// Tied output embedding: h (R, C) @ wte^T (C, V) -> (R, V), the transpose a strided view.
    fn logits(&self, h: &Tensor) -> Result<Tensor> {
        if let [wte] = self.wte.as_slice() {
            return ops::matmul(h, &wte.transpose(0, 1)?);
        }
        let logits = Tensor::zeros(&self.ctx, &[h.shape()[0], self.config.vocab_size])?;
        let mut start = 0;
        for wte in &self.wte {
            let end = start + wte.shape()[0];
            ops::copy_into(&logits.narrow(1, start, end)?, &ops::matmul(h, &wte.transpose(0, 1)?)?)?;
            start = end;
        }
        Ok(logits)
    }

    /// Logits (T, V) of every position of `ids` from an empty cache: a full recomputation.
    pub fn forward(&self, ids: &[u32]) -> Result<Tensor> {
        let mut cache = self.new_cache()?;
        let opts = StepOptions {
            all_logits: true,
            capture: false,
        };
        Ok(self.step(ids, &mut cache, opts)?.logits)
    }
}
