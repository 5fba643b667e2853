//! The Llama-style decoder's forward on the engine's tensor ops, with a key/value cache:
//! token embedding; per layer `x + o(attn(rope(q(rms(x))), rope(k(rms(x))), v(rms(x))))` then
//! `+ down(silu(gate(rms(.))) * up(rms(.)))`; the final RMSNorm and the head.
//!
//! Shapes: T new tokens at positions `past..past + T`, C the width, H query heads and KVH
//! key/value heads of D. Weights are stored (in, out) for `Tensor::linear` (Hugging Face
//! stores `nn.Linear` weights (out, in): they are transposed once at load).

use std::path::Path;

use super::config::Config;
use crate::error::{Error, Result};
use crate::generate::{generate_eager_async, Sampling, Stepper};
use crate::io::safetensors;
use crate::ops;
use crate::tensor::Tensor;
use crate::Context;

/// One decoder layer's weights.
struct Layer {
    input_norm: Tensor, // (C,)
    q: Tensor,          // (C, H D)
    k: Tensor,          // (C, KVH D)
    v: Tensor,          // (C, KVH D)
    o: Tensor,          // (H D, C)
    post_norm: Tensor,  // (C,)
    gate: Tensor,       // (C, I)
    up: Tensor,         // (C, I)
    down: Tensor,       // (I, C)
}

/// A Llama-style decoder on a context: RMSNorm, rotary position embeddings, SwiGLU,
/// grouped-query attention and an untied (or tied) head.
pub struct Llama {
    config: Config,
    embed: Tensor, // (V, C)
    layers: Vec<Layer>,
    norm: Tensor, // (C,)
    head: Tensor, // (C, V)
}

/// The keys and values of the positions seen so far, per layer: (KVH, T, D) each.
pub struct Cache {
    kv: Vec<Option<(Tensor, Tensor)>>,
    len: usize,
}

impl Cache {
    /// Positions held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True before the first token.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Llama {
    /// `dir/config.json` and `dir/model.safetensors` (Hugging Face's `LlamaForCausalLM`
    /// files), on `ctx`.
    pub fn load(ctx: &Context, dir: &Path) -> Result<Llama> {
        let config = Config::load(dir)?;
        let path = dir.join("model.safetensors");
        let bytes = crate::io::read_bounded(&path, u64::MAX - 1)?;
        Llama::from_safetensors(ctx, config, &bytes, &path.display().to_string())
    }

    /// The model from a safetensors file's bytes (F32, F16 or BF16, widened to f32) under
    /// Hugging Face's names (`model.embed_tokens.weight`, `model.layers.{i}.self_attn.q_proj
    /// .weight`, ..., `model.norm.weight`, `lm_head.weight`); `what` names the file in errors.
    pub fn from_safetensors(ctx: &Context, config: Config, bytes: &[u8], what: &str) -> Result<Llama> {
        config
            .validate()
            .map_err(|m| Error::value("Llama", "config", "a valid Llama config", m))?;
        let tensors = safetensors::parse(bytes, what)?;
        let get = |name: &str, shape: &[usize], transpose: bool| -> Result<Tensor> {
            let t = tensors.get(name).ok_or_else(|| Error::Io {
                what: what.to_string(),
                message: format!("tensor `{name}` of shape {shape:?} is missing"),
            })?;
            if t.shape != shape {
                return Err(Error::Io {
                    what: what.to_string(),
                    message: format!("tensor `{name}` has shape {:?}, expected {shape:?}", t.shape),
                });
            }
            let tensor = Tensor::from_slice(ctx, shape, &t.to_f32(name)?)?;
            match transpose {
                // (out, in) -> (in, out), copied dense once.
                true => tensor.transpose(0, 1)?.contiguous(),
                false => Ok(tensor),
            }
        };
        let cfg = &config;
        let (c, d, inter) = (cfg.hidden_size, cfg.head_dim, cfg.intermediate_size);
        let (hd, kvd) = (cfg.num_attention_heads * d, cfg.num_key_value_heads * d);
        let layers = (0..cfg.num_hidden_layers)
            .map(|i| {
                let n = |s: &str| format!("model.layers.{i}.{s}");
                Ok(Layer {
                    input_norm: get(&n("input_layernorm.weight"), &[c], false)?,
                    q: get(&n("self_attn.q_proj.weight"), &[hd, c], true)?,
                    k: get(&n("self_attn.k_proj.weight"), &[kvd, c], true)?,
                    v: get(&n("self_attn.v_proj.weight"), &[kvd, c], true)?,
                    o: get(&n("self_attn.o_proj.weight"), &[c, hd], true)?,
                    post_norm: get(&n("post_attention_layernorm.weight"), &[c], false)?,
                    gate: get(&n("mlp.gate_proj.weight"), &[inter, c], true)?,
                    up: get(&n("mlp.up_proj.weight"), &[inter, c], true)?,
                    down: get(&n("mlp.down_proj.weight"), &[c, inter], true)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let embed = get("model.embed_tokens.weight", &[cfg.vocab_size, c], false)?;
        let head_name = if cfg.tie_word_embeddings && !tensors.contains_key("lm_head.weight") {
            "model.embed_tokens.weight"
        } else {
            "lm_head.weight"
        };
        Ok(Llama {
            head: get(head_name, &[cfg.vocab_size, c], true)?,
            norm: get("model.norm.weight", &[c], false)?,
            embed,
            layers,
            config,
        })
    }

    /// The sizes.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// An empty cache.
    pub fn new_cache(&self) -> Cache {
        Cache {
            kv: (0..self.layers.len()).map(|_| None).collect(),
            len: 0,
        }
    }

    /// The logits (T, V) of `ids`, the T tokens after the `cache.len()` already seen, whose
    /// keys and values join the cache.
    pub fn forward(&self, ids: &[u32], cache: &mut Cache) -> Result<Tensor> {
        let op = "Llama::forward";
        let cfg = &self.config;
        if ids.is_empty() {
            return Err(Error::value(op, "ids", "at least one token id", "none"));
        }
        if let Some(bad) = ids.iter().find(|&&id| id as usize >= cfg.vocab_size) {
            return Err(Error::value(
                op,
                "ids",
                format!("ids below vocab_size = {}", cfg.vocab_size),
                bad,
            ));
        }
        let (past, t) = (cache.len, ids.len());
        if past + t > cfg.max_position_embeddings {
            return Err(Error::value(
                op,
                "ids",
                format!(
                    "at most max_position_embeddings = {} positions",
                    cfg.max_position_embeddings
                ),
                past + t,
            ));
        }
        let ctx = self.embed.context();
        let (c, d) = (cfg.hidden_size, cfg.head_dim);
        let (h, kvh) = (cfg.num_attention_heads, cfg.num_key_value_heads);
        let zero = Tensor::zeros(ctx, &[t, c])?; // no position table: rows of embed only
        let mut x = ops::embedding(&self.embed, &zero, ids, 0)?; // (T, C)
        let (cos, sin) = self.rope_tables(ctx, past, t)?; // (T, 1, D) each
        for (layer, kv) in self.layers.iter().zip(cache.kv.iter_mut()) {
            let a = rms_norm(&x, &layer.input_norm, cfg.rms_norm_eps)?; // (T, C)
            let q = rope(&a.linear(&layer.q, None)?.reshape(&[t, h, d])?, &cos, &sin)?; // (T, H, D)
            let k = rope(&a.linear(&layer.k, None)?.reshape(&[t, kvh, d])?, &cos, &sin)?; // (T, KVH, D)
            let v = a.linear(&layer.v, None)?.reshape(&[t, kvh, d])?; // (T, KVH, D)
            let (k, v) = (k.transpose(0, 1)?.contiguous()?, v.transpose(0, 1)?.contiguous()?); // (KVH, T, D)
            let (k, v) = match kv.take() {
                Some((pk, pv)) => (ops::cat(&[&pk, &k], 1)?, ops::cat(&[&pv, &v], 1)?), // (KVH, past + T, D)
                None => (k, v),
            };
            let (kq, vq) = (repeat_heads(&k, h / kvh)?, repeat_heads(&v, h / kvh)?); // (H, past + T, D)
            let y = ops::attention(&q.transpose(0, 1)?, &kq, &vq, past)?; // (H, T, D)
            *kv = Some((k, v));
            let y = y.transpose(0, 1)?.contiguous()?.reshape(&[t, h * d])?; // (T, H D)
            x = ops::add(&x, &y.linear(&layer.o, None)?)?;
            let m = rms_norm(&x, &layer.post_norm, cfg.rms_norm_eps)?; // (T, C)
            let g = m.linear(&layer.gate, None)?; // (T, I)
            let swiglu = ops::mul(&ops::mul(&g, &ops::sigmoid(&g)?)?, &m.linear(&layer.up, None)?)?;
            x = ops::add(&x, &swiglu.linear(&layer.down, None)?)?;
        }
        cache.len += t;
        rms_norm(&x, &self.norm, cfg.rms_norm_eps)?.linear(&self.head, None) // (T, V)
    }

    /// Generates `n` tokens after `prompt` (>= 1 token), op by op through the loop every model
    /// shares ([`generate_eager_async`]): the prompt as one step, then one cached step a token,
    /// each chosen by `sampling` on the host and handed to `on_token` at once (streaming).
    /// Returns the new ids.
    pub async fn generate_async(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        generate_eager_async("Llama::generate", self, prompt, n, sampling, on_token).await
    }

    /// [`Llama::generate_async`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn generate(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        pollster::block_on(self.generate_async(prompt, n, sampling, on_token))
    }

    /// cos and sin of the rotary angles of positions `past..past + t`: (T, 1, D) each, the
    /// D / 2 frequencies `theta^(-2i / D)` repeated for both halves (Hugging Face's layout).
    fn rope_tables(&self, ctx: &Context, past: usize, t: usize) -> Result<(Tensor, Tensor)> {
        let d = self.config.head_dim;
        let (mut cos, mut sin) = (Vec::with_capacity(t * d), Vec::with_capacity(t * d));
        for p in past..past + t {
            for j in 0..d {
                let i = (j % (d / 2)) as f64;
                let angle = p as f64 * self.config.rope_theta.powf(-2.0 * i / d as f64);
                cos.push(angle.cos() as f32);
                sin.push(angle.sin() as f32);
            }
        }
        Ok((
            Tensor::from_slice(ctx, &[t, 1, d], &cos)?,
            Tensor::from_slice(ctx, &[t, 1, d], &sin)?,
        ))
    }
}

impl Stepper for Llama {
    type Cache = Cache;

    fn context(&self) -> &Context {
        self.embed.context()
    }

    fn positions(&self) -> usize {
        self.config.max_position_embeddings
    }

    fn vocab_size(&self) -> usize {
        self.config.vocab_size
    }

    fn new_cache(&self) -> Result<Cache> {
        Ok(Llama::new_cache(self))
    }

    fn next_logits(&self, ids: &[u32], cache: &mut Cache) -> Result<Tensor> {
        let logits = self.forward(ids, cache)?; // (T, V)
        let t = logits.shape()[0];
        logits.narrow(0, t - 1, t) // (1, V)
    }
}

/// `x / sqrt(mean(x^2) + eps) * w` over the last axis. x (T, C), w (C,) -> (T, C).
fn rms_norm(x: &Tensor, w: &Tensor, eps: f32) -> Result<Tensor> {
    let t = x.shape()[0];
    let ms = ops::mul(x, x)?.mean_last()?.reshape(&[t, 1])?; // (T, 1)
    let rms = ops::sqrt(&ops::binary_scalar(crate::Binary::Add, &ms, eps)?)?; // (T, 1)
    ops::mul(&ops::div(x, &rms)?, w)
}

/// Rotary embedding: `x cos + rotate_half(x) sin`, rotate_half(x) = (-x2, x1) for the halves
/// x1, x2 of the last axis. x (T, heads, D), cos and sin (T, 1, D) -> (T, heads, D).
fn rope(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    let d = x.shape()[2];
    let (x1, x2) = (x.narrow(2, 0, d / 2)?, x.narrow(2, d / 2, d)?);
    let rotated = ops::cat(&[&ops::neg(&x2)?, &x1], 2)?;
    ops::add(&ops::mul(x, cos)?, &ops::mul(&rotated, sin)?)
}

/// Each of KVH heads repeated `group` times in place: (KVH, T, D) -> (KVH group, T, D), query
/// head j reading key/value head j / group.
fn repeat_heads(x: &Tensor, group: usize) -> Result<Tensor> {
    if group == 1 {
        return Ok(x.clone());
    }
    let heads: Vec<Tensor> = (0..x.shape()[0])
        .flat_map(|j| (0..group).map(move |_| j))
        .map(|j| x.narrow(0, j, j + 1))
        .collect::<Result<_>>()?;
    ops::cat(&heads.iter().collect::<Vec<_>>(), 0)
}
