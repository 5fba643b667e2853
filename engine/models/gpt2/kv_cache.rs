//! The key/value cache: keys and values of every past position, per layer and head.
//!
//! One preallocated tensor (2, n_layer, H, n_positions, D): keys, then values, so a kernel
//! reaches both through one binding. The QKV projection of a step of T new tokens writes its
//! keys and values straight into positions `len..len + T` (`KvCache::project_qkv`; the
//! decode kernels do the same for one token), and attention reads the narrowed view
//! `0..len + T`: nothing is reallocated as the sequence grows, and since lengths reach the
//! kernels through uniforms no pipeline is rebuilt either.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::ops;
use crate::tensor::Tensor;

use super::config::Config;

const QKV_CACHE: KernelDef = KernelDef::new(
    "models/gpt2/qkv_cache",
    shader!("models/gpt2/qkv_cache.wgsl"),
    "qkv_cache",
);

/// Cached keys and values of one sequence.
#[derive(Clone, Debug)]
pub struct KvCache {
    k: Tensor, // (L, H, P, D) view of the shared buffer
    v: Tensor, // (L, H, P, D) view of the shared buffer, after the keys
    len: usize,
}

impl KvCache {
    /// An empty cache for `config`'s shape on `ctx`. Errors on a config `Config::validate`
    /// rejects (n_embd not a multiple of n_head, a zero or oversized dimension).
    pub fn new(ctx: &Context, config: &Config) -> Result<KvCache> {
        // The config's fields are public: n_embd must split into n_head heads, and the sizes
        // must be ones a model could have, before a buffer is sized from them.
        config
            .validate()
            .map_err(|m| Error::value("KvCache::new", "config", "a valid GPT-2 config", m))?;
        let shape = [config.n_layer, config.n_head, config.n_positions, config.head_dim()];
        // Never zero-filled: attention only reads positions already written, and a
        // 124M cache is 75 MB that would otherwise cross the bus on every new sequence.
        let kv = Tensor::uninit(ctx, &[2, shape[0], shape[1], shape[2], shape[3]], "KvCache::new")?;
        Ok(KvCache {
            k: kv.narrow(0, 0, 1)?.reshape(&shape)?,
            v: kv.narrow(0, 1, 2)?.reshape(&shape)?,
            len: 0,
        })
    }

    /// Positions already cached (the `past` of the next step).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Room left before `n_positions`.
    pub fn remaining(&self) -> usize {
        self.k.shape()[2] - self.len
    }

    /// Forgets every position (the buffers are reused).
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Layer `layer`'s QKV projection of h (T, C): `h @ w + bias` (w (C, 3C), bias (3C,)),
    /// with the keys and values written at positions `len..len + T`. Returns the queries
    /// (H, T, D) and the key and value views of positions `0..len + T`, each (H, len + T, D).
    /// On a GPU the projection's epilogue does the writes (`qkv_cache.wgsl`); elsewhere the
    /// projection is split into heads and copied in.
    pub(crate) fn project_qkv(&self, layer: usize, h: &Tensor, w: &Tensor, bias: &Tensor) -> Result<[Tensor; 3]> {
        let op = "KvCache::project_qkv";
        let (nh, p, d) = (self.k.shape()[1], self.k.shape()[2], self.k.shape()[3]);
        let c = nh * d;
        if h.rank() != 2 || h.shape()[1] != c || w.shape() != [c, 3 * c] || bias.shape() != [3 * c] {
            return Err(Error::mismatch(op, "h (T, C)", h.shape(), "w (C, 3C)", w.shape()));
        }
        let t = h.shape()[0];
        if t > self.remaining() {
            return Err(Error::value(
                op,
                "tokens",
                format!("at most {} more positions (n_positions)", self.remaining()),
                t,
            ));
        }
        let end = self.len + t;
        let kl = self.layer(&self.k, layer)?;
        let vl = self.layer(&self.v, layer)?;
        let ctx = h.context();
        let q = match ctx.gpu() {
            Some(gpu) if bias.layout().is_dense() => {
                let parts = ops::matmul::linear_parts(op, h, w)?; // (S, T, 3C)
                let q = Tensor::uninit(ctx, &[t, c], op)?; // (T, C)
                let params = Params::new()
                    .usize(t)
                    .usize(c)
                    .usize(parts.shape()[0])
                    .usize(d)
                    .usize(p)
                    .usize(self.len)
                    .usize(kl.layout().offset)
                    .usize(vl.layout().offset)
                    .usize(bias.layout().offset);
                let buffers = [
                    parts.gpu_buffer(op)?,
                    bias.gpu_buffer(op)?,
                    q.gpu_buffer(op)?,
                    self.k.gpu_buffer(op)?,
                ];
                let kernel = gpu.kernel(&QKV_CACHE, &[])?;
                gpu.dispatch_items(&kernel, &params, &buffers, t * 3 * c)?;
                q.reshape(&[t, nh, d])?.transpose(0, 1)? // (H, T, D) view
            }
            _ => {
                // (T, 3C) -> (T, 3H, D) -> (3H, T, D): q, k, v are head ranges, all views.
                let qkv = ops::linear(h, w, Some(bias))?;
                let heads = qkv.reshape(&[t, 3 * nh, d])?.transpose(0, 1)?;
                ops::copy_into(&kl.narrow(1, self.len, end)?, &heads.narrow(0, nh, 2 * nh)?)?;
                ops::copy_into(&vl.narrow(1, self.len, end)?, &heads.narrow(0, 2 * nh, 3 * nh)?)?;
                heads.narrow(0, 0, nh)?
            }
        };
        Ok([q, kl.narrow(1, 0, end)?, vl.narrow(1, 0, end)?])
    }

    /// Marks `t` more positions as cached, once every layer has appended them.
    pub(crate) fn advance(&mut self, t: usize) {
        self.len += t;
    }

    /// The key and value tensors, each (L, H, P, D), views of one buffer.
    pub(crate) fn tensors(&self) -> (&Tensor, &Tensor) {
        (&self.k, &self.v)
    }

    /// Layer `layer` of a cache tensor as (H, P, D), a view into the same buffer.
    fn layer(&self, cache: &Tensor, layer: usize) -> Result<Tensor> {
        let s = cache.shape();
        cache.narrow(0, layer, layer + 1)?.reshape(&s[1..])
    }
}
