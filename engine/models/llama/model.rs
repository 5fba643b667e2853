//! The Llama-style decoder's forward on the engine's tensor ops, with a key/value cache:
//! token embedding; per layer `x + o(attn(rope(q(rms(x))), rope(k(rms(x))), v(rms(x))))` then
//! `+ down(silu(gate(rms(.))) * up(rms(.)))`; the final RMSNorm and the head.
//!
//! Shapes: T new tokens at positions `past..past + T`, C the width, H query heads and KVH
//! key/value heads of D, P the positions a sequence holds. The layers' weights are stored
//! (in, out) for `Tensor::linear` (Hugging Face stores `nn.Linear` weights (out, in): they are
//! transposed once at load); the head stays (V, C) as stored, each logit one contiguous row.
//! The rotary angles' cos and sin are tables (P, D) made once at load, and the
//! cache is preallocated (2, L, KVH, P, D), so a step only writes positions `past..past + T`
//! and reads views: the same forward runs op by op ([`Llama::forward`]) and, with the token
//! and position read from the device ([`crate::generate::DecodeState`]), inside the compiled
//! plans of [`crate::generate::Generator`] (`Llama: Decoder`). A compiled decode step is five
//! launches a layer, as GPT-2's is: the RMS norm fused into the q k v projection, attention
//! with the rotary embedding and the cache write in front (`generate::attention_decode`), the o projection adding into the
//! residual, the RMS norm fused into the gate-and-up projection, and the down projection with
//! the SwiGLU gate as its prologue, adding into the residual; then the norm and the head in
//! one launch (`generate::head`).

use std::path::Path;

use super::config::Config;
use crate::error::{Error, Result};
use crate::generate::{self, DecodeState, Decoder, Pick, Project, Prologue, Queries, Stepper};
use crate::io::safetensors;
use crate::ops;
use crate::tensor::Tensor;
use crate::Context;

/// Most positions a sequence holds: the decode plan's attention keeps at most this many
/// scores (`generate::attention_decode`), and the cache is sized for them up front.
const MAX_POSITIONS: usize = crate::generate::at_state::ATTENTION_MAX_P;

/// One decoder layer's weights.
#[derive(Clone)]
pub(super) struct Layer {
    input_norm: Tensor, // (C,)
    qkv: Tensor,        // (C, H D + 2 KVH D): q, k and v side by side, one product

    o: Tensor,         // (H D, C)
    post_norm: Tensor, // (C,)
    gate_up: Tensor,   // (C, 2 I): gate then up, one product
    down: Tensor,      // (I, C)
}

impl Layer {
    /// Every weight of the layer.
    pub(super) fn tensors(&self) -> [&Tensor; 6] {
        [
            &self.input_norm,
            &self.qkv,
            &self.o,
            &self.post_norm,
            &self.gate_up,
            &self.down,
        ]
    }
}

/// A Llama-style decoder on a context: RMSNorm, rotary position embeddings, SwiGLU,
/// grouped-query attention and an untied (or tied) head. Cloning shares the weights.
#[derive(Clone)]
pub struct Llama {
    pub(super) config: Config,
    pub(super) embed: Tensor, // (V, C)
    pub(super) layers: Vec<Layer>,
    pub(super) norm: Tensor,     // (C,)
    pub(super) head: Tensor,     // (V, C) as stored; the embedding itself when tied
    pub(super) rope_cos: Tensor, // (P, D)
    pub(super) rope_sin: Tensor, // (P, D)
    pub(super) tied: bool,       // the head is the embedding itself
    zeros: Tensor,               // (max(C, H D + 2 KVH D, 2 I),): the decode projections' bias (Llama has none)
}

/// The keys and values of one sequence's positions: one preallocated buffer, keys then
/// values, each (L, KVH, P, D); positions `0..len` are written.
pub struct Cache {
    k: Tensor, // (L, KVH, P, D)
    v: Tensor, // (L, KVH, P, D), after the keys in the same buffer
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
                    qkv: ops::cat(
                        &[
                            &get(&n("self_attn.q_proj.weight"), &[hd, c], true)?,
                            &get(&n("self_attn.k_proj.weight"), &[kvd, c], true)?,
                            &get(&n("self_attn.v_proj.weight"), &[kvd, c], true)?,
                        ],
                        1,
                    )?,
                    o: get(&n("self_attn.o_proj.weight"), &[c, hd], true)?,
                    post_norm: get(&n("post_attention_layernorm.weight"), &[c], false)?,
                    gate_up: ops::cat(
                        &[
                            &get(&n("mlp.gate_proj.weight"), &[inter, c], true)?,
                            &get(&n("mlp.up_proj.weight"), &[inter, c], true)?,
                        ],
                        1,
                    )?,
                    down: get(&n("mlp.down_proj.weight"), &[c, inter], true)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let embed = get("model.embed_tokens.weight", &[cfg.vocab_size, c], false)?;
        let (rope_cos, rope_sin) = rope_tables(ctx, cfg)?;
        // As wide as the widest decode projection (fused q, k, v and fused gate, up): a
        // projection wider than this falls back to the tensor ops (`project`).
        let zeros = Tensor::zeros(ctx, &[c.max(hd + 2 * kvd).max(2 * inter)])?;
        // (V, C) as stored: each logit one contiguous row (`generate::head`); a tied head is
        // the embedding itself.
        let tied = cfg.tie_word_embeddings && !tensors.contains_key("lm_head.weight");
        let head = if tied {
            embed.clone()
        } else {
            get("lm_head.weight", &[cfg.vocab_size, c], false)?
        };
        Ok(Llama {
            head,
            tied,
            norm: get("model.norm.weight", &[c], false)?,
            embed,
            layers,
            rope_cos,
            rope_sin,
            zeros,
            config,
        })
    }

    /// The sizes.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Bytes of the weights one decode step reads: every layer's matrices and norms, the final
    /// norm and the head (of the token embedding, only the token's row).
    pub fn weight_bytes(&self) -> usize {
        let bytes = |t: &Tensor| t.len() * t.dtype().size();
        let layers: usize = self.layers.iter().flat_map(Layer::tensors).map(bytes).sum();
        layers + bytes(&self.norm) + bytes(&self.head)
    }

    /// Most positions a sequence holds: `max_position_embeddings`, at most 2048.
    pub fn positions(&self) -> usize {
        self.config.max_position_embeddings.min(MAX_POSITIONS)
    }

    /// An empty cache for one sequence of up to [`Llama::positions`] tokens (never
    /// zero-filled: attention reads only the positions already written).
    pub fn new_cache(&self) -> Result<Cache> {
        let cfg = &self.config;
        let shape = [
            cfg.num_hidden_layers,
            cfg.num_key_value_heads,
            self.positions(),
            cfg.head_dim,
        ];
        let kv = Tensor::uninit(
            self.embed.context(),
            &[2, shape[0], shape[1], shape[2], shape[3]],
            "Llama::new_cache",
        )?;
        Ok(Cache {
            k: kv.narrow(0, 0, 1)?.reshape(&shape)?,
            v: kv.narrow(0, 1, 2)?.reshape(&shape)?,
            len: 0,
        })
    }

    /// Fails unless `ids` are at least one token, each below the vocabulary, and fit after
    /// `past` positions; the errors name `op`.
    pub(super) fn check_ids(&self, op: &'static str, ids: &[u32], past: usize) -> Result<()> {
        let vocab = self.config.vocab_size;
        if ids.is_empty() {
            return Err(Error::value(op, "ids", "at least one token id", "none"));
        }
        if let Some(bad) = ids.iter().find(|&&id| id as usize >= vocab) {
            return Err(Error::value(op, "ids", format!("ids below vocab_size = {vocab}"), bad));
        }
        if past + ids.len() > self.positions() {
            let limit = format!(
                "at most {} positions (max_position_embeddings, capped at {MAX_POSITIONS})",
                self.positions()
            );
            return Err(Error::value(op, "ids", limit, past + ids.len()));
        }
        Ok(())
    }

    /// The logits (T, V) of `ids`, the T tokens after the `cache.len()` already seen, whose
    /// keys and values join the cache.
    pub fn forward(&self, ids: &[u32], cache: &mut Cache) -> Result<Tensor> {
        let (past, t) = (cache.len, ids.len());
        self.check_ids("Llama::forward", ids, past)?;
        let ctx = self.embed.context();
        let zero = Tensor::zeros(ctx, &[t, self.config.hidden_size])?; // no position table: rows of embed only
        let x = ops::embedding(&self.embed, &zero, ids, 0)?; // (T, C)
        let x = self.layers_forward(x, cache, At::Host { past, t })?;
        cache.len += t;
        self.logits(&x) // (T, V)
    }

    /// Every layer over x (T, C) of the tokens at positions `past..past + T`, their keys and
    /// values written into `cache`; `at` says where the positions come from.
    fn layers_forward(&self, mut x: Tensor, cache: &Cache, at: At) -> Result<Tensor> {
        let cfg = &self.config;
        let (d, h, kvh) = (cfg.head_dim, cfg.num_attention_heads, cfg.num_key_value_heads);
        let t = x.shape()[0];
        let eps = cfg.rms_norm_eps;
        // rms_norm(x, g) @ w: in a compiled step one decode projection with the norm fused in
        // (each of its workgroups takes the row's moments), the tensor ops otherwise.
        let normed = |x: &Tensor, g: &Tensor, w: &Tensor| match at {
            At::Device(st) => self.project(x, Prologue::Rms(g, eps), w, Project::New { gelu: false }, st),
            At::Host { .. } => ops::rms_norm(x, g, eps)?.linear(w, None),
        };
        // x + y @ w: in a compiled step added into x in place by the projection.
        let residual = |x: Tensor, y: &Tensor, w: &Tensor| match at {
            At::Device(st) => self.project(y, Prologue::None, w, Project::Residual(&x), st).map(|_| x),
            At::Host { .. } => ops::add(&x, &y.linear(w, None)?),
        };
        for (i, layer) in self.layers.iter().enumerate() {
            // q, k and v from one product, then views of its columns (in a compiled step rows
            // of one buffer at offsets, which rope and the cache write read in place).
            let qkv = normed(&x, &layer.input_norm, &layer.qkv)?; // (T, H D + 2 KVH D)
            let (hd, kvd) = (h * d, kvh * d);
            let part = |a: usize, b: usize, heads: usize| qkv.narrow(1, a, b)?.reshape(&[t, heads, d]);
            let y = match at {
                At::Host { past, t } => {
                    // cos and sin (T, D) of the positions.
                    let (cos, sin) = (
                        self.rope_cos.narrow(0, past, past + t)?,
                        self.rope_sin.narrow(0, past, past + t)?,
                    );
                    let q = ops::rope(&part(0, hd, h)?, &cos, &sin)?; // (T, H, D)
                    let k = ops::rope(&part(hd, hd + kvd, kvh)?, &cos, &sin)?; // (T, KVH, D)
                    let v = part(hd + kvd, hd + 2 * kvd, kvh)?; // (T, KVH, D)

                    // This step's keys and values into positions past..past + T of the layer.
                    let slot = |c: &Tensor| c.narrow(0, i, i + 1)?.narrow(2, past, past + t); // (1, KVH, T, D)
                    let heads_first = |x: &Tensor| x.transpose(0, 1)?.reshape(&[1, kvh, t, d]);
                    crate::tensor::copy_into(&slot(&cache.k)?, &heads_first(&k)?)?;
                    crate::tensor::copy_into(&slot(&cache.v)?, &heads_first(&v)?)?;
                    let seen = |c: &Tensor| {
                        c.narrow(0, i, i + 1)?
                            .narrow(2, 0, past + t)?
                            .reshape(&[kvh, past + t, d])
                    };
                    let (kq, vq) = (
                        repeat_heads(&seen(&cache.k)?, h / kvh)?,
                        repeat_heads(&seen(&cache.v)?, h / kvh)?,
                    ); // (H, past + T, D)
                    let y = ops::attention(&q.transpose(0, 1)?, &kq, &vq, past)?; // (H, T, D)
                    y.transpose(0, 1)?.contiguous()?.reshape(&[t, h * d])? // (T, H D)
                }
                At::Device(st) => {
                    // Rotary embedding, cache write and attention in one launch.
                    let queries = Queries::Rotate {
                        qkv: &qkv,
                        cos: &self.rope_cos,
                        sin: &self.rope_sin,
                    };
                    generate::attention_decode(queries, &cache.k, &cache.v, i, st)?
                    // (1, H D)
                }
            };
            x = residual(x, &y, &layer.o)?;
            let gate_up = normed(&x, &layer.post_norm, &layer.gate_up)?; // (T, 2 I)
            x = match at {
                // The gate folded into the down projection's input.
                At::Device(st) => {
                    self.project(&gate_up, Prologue::SwiGlu, &layer.down, Project::Residual(&x), st)?;
                    x
                }
                At::Host { .. } => residual(x, &swiglu(&gate_up)?, &layer.down)?,
            };
        }
        Ok(x)
    }

    /// One row's projection in a compiled decode step, `generate::ln_matvec` with `norm` fused
    /// in front and a zero bias: a new row (1, N) for `Project::New`, or added into the
    /// residual row in place (`Project::Residual`; returns that row). Where N or w do not suit
    /// the kernel (N not a multiple of 4), the tensor ops.
    fn project(&self, x: &Tensor, norm: Prologue, w: &Tensor, to: Project, st: &DecodeState) -> Result<Tensor> {
        let n = w.shape()[1];
        if !n.is_multiple_of(4) {
            let xn = match norm {
                Prologue::Rms(g, eps) => ops::rms_norm(x, g, eps)?,
                Prologue::SwiGlu => swiglu(x)?,
                _ => x.clone(),
            };
            let y = xn.linear(w, None)?;
            return match to {
                Project::Residual(r) => {
                    crate::tensor::copy_into(r, &ops::add(r, &y)?)?;
                    Ok(r.clone())
                }
                _ => Ok(y),
            };
        }
        let residual = match to {
            Project::Residual(r) => Some(r.clone()),
            _ => None,
        };
        let y = generate::ln_matvec(&x.contiguous()?, norm, w, &self.zeros.narrow(0, 0, n)?, to, st, None)?;
        match (y, residual) {
            (Some(y), _) => y.reshape(&[1, n]),
            (None, Some(r)) => Ok(r),
            (None, None) => Err(Error::value("Llama::project", "to", "a row written", "none")),
        }
    }

    /// The final RMSNorm and the head: x (T, C) -> logits (T, V).
    fn logits(&self, x: &Tensor) -> Result<Tensor> {
        ops::rms_norm(x, &self.norm, self.config.rms_norm_eps)?.matmul(&self.head.transpose(0, 1)?)
    }
}

impl Stepper for Llama {
    type Cache = Cache;
    const OP: &'static str = "Llama::generate";

    fn context(&self) -> &Context {
        self.embed.context()
    }

    fn positions(&self) -> usize {
        Llama::positions(self)
    }

    fn vocab_size(&self) -> usize {
        self.config.vocab_size
    }

    fn new_cache(&self) -> Result<Cache> {
        Llama::new_cache(self)
    }

    fn next_logits(&self, ids: &[u32], cache: &mut Cache) -> Result<Tensor> {
        let logits = self.forward(ids, cache)?; // (T, V)
        let t = logits.shape()[0];
        logits.narrow(0, t - 1, t) // (1, V)
    }
}

impl Decoder for Llama {
    fn tensors<'a>(&'a self, cache: &'a Cache) -> Vec<&'a Tensor> {
        let mut hold = vec![
            &self.embed,
            &self.norm,
            &self.head,
            &self.rope_cos,
            &self.rope_sin,
            &self.zeros,
            &cache.k,
            &cache.v,
        ];
        hold.extend(self.layers.iter().flat_map(Layer::tensors));
        hold
    }

    fn prefill_on_device(&self, ids: &Tensor, cache: &Cache, st: &DecodeState) -> Result<Tensor> {
        let t = ids.len();
        if cache.len != 0 || t == 0 || t > self.positions() {
            return Err(Error::value(
                "Llama::prefill_on_device",
                "ids",
                format!("1..={} tokens into an empty cache", self.positions()),
                t,
            ));
        }
        let zero = Tensor::zeros(self.embed.context(), &[t, self.config.hidden_size])?;
        let x = ops::embedding::embedding_of(&self.embed, &zero, ids, 0)?; // (T, C)
        let x = self.layers_forward(x, cache, At::Host { past: 0, t })?;
        let logits = self.logits(&x.narrow(0, t - 1, t)?)?; // (1, V)
        generate::sample(&logits, st, Some(t))?;
        Ok(logits)
    }

    fn decode_on_device(&self, cache: &Cache, st: &DecodeState) -> Result<Tensor> {
        let x = generate::row_at_state(&self.embed, Pick::Token, st)?; // (1, C)
        let x = self.layers_forward(x, cache, At::Device(st))?;
        // The head kernel where its workgroup holds the row (C <= HEAD_MAX_C), the ops otherwise.
        let c = self.config.hidden_size;
        let logits = if c.is_multiple_of(4) && c <= generate::HEAD_MAX_C {
            let norm = Prologue::Rms(&self.norm, self.config.rms_norm_eps);
            generate::head(&x, norm, &self.head)?
        } else {
            self.logits(&x)?
        }; // (1, V)
        generate::sample(&logits, st, None)?;
        Ok(logits)
    }
}

/// Where a step's positions come from.
#[derive(Clone, Copy)]
enum At<'a> {
    /// Known on the host: T tokens at `past..past + T`.
    Host { past: usize, t: usize },
    /// One token at the decode state's position (a compiled plan's step).
    Device(&'a DecodeState),
}

/// SwiGLU of a (T, 2 I) row block of gate then up: (T, I).
fn swiglu(gate_up: &Tensor) -> Result<Tensor> {
    let inter = gate_up.shape()[1] / 2;
    ops::swiglu(&gate_up.narrow(1, 0, inter)?, &gate_up.narrow(1, inter, 2 * inter)?)
}

/// cos and sin of the rotary angles of every position: (P, D) each, the D / 2 frequencies
/// `theta^(-2i / D)` repeated for both halves (Hugging Face's layout), angles in f64.
fn rope_tables(ctx: &Context, cfg: &Config) -> Result<(Tensor, Tensor)> {
    let (d, p) = (cfg.head_dim, cfg.max_position_embeddings.min(MAX_POSITIONS));
    let (mut cos, mut sin) = (Vec::with_capacity(p * d), Vec::with_capacity(p * d));
    for pos in 0..p {
        for j in 0..d {
            let i = (j % (d / 2)) as f64;
            let angle = pos as f64 * cfg.rope_theta.powf(-2.0 * i / d as f64);
            cos.push(angle.cos() as f32);
            sin.push(angle.sin() as f32);
        }
    }
    Ok((
        Tensor::from_slice(ctx, &[p, d], &cos)?,
        Tensor::from_slice(ctx, &[p, d], &sin)?,
    ))
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
