//! The key/value cache: keys and values of every past position, per layer and head.
//!
//! Two preallocated tensors (n_layer, H, n_positions, D). A step of T new tokens writes its
//! rows at positions `len..len + T` with `copy_into`, and attention reads the narrowed view
//! `0..len + T`: nothing is reallocated as the sequence grows, and since lengths reach the
//! kernels through uniforms no pipeline is rebuilt either.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::ops;
use crate::tensor::Tensor;

use super::config::Config;

/// Cached keys and values of one sequence.
#[derive(Clone, Debug)]
pub struct KvCache {
    k: Tensor, // (L, H, P, D)
    v: Tensor, // (L, H, P, D)
    len: usize,
}

impl KvCache {
    /// An empty cache for `config`'s shape on `ctx`.
    pub fn new(ctx: &Context, config: &Config) -> Result<KvCache> {
        let shape = [config.n_layer, config.n_head, config.n_positions, config.head_dim()];
        Ok(KvCache {
            // Never zero-filled: attention only reads positions already written, and a
            // 124M cache is 75 MB that would otherwise cross the bus on every new sequence.
            k: Tensor::uninit(ctx, &shape, "KvCache::new")?,
            v: Tensor::uninit(ctx, &shape, "KvCache::new")?,
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

    /// Writes layer `layer`'s new keys and values k, v (H, T, D) at positions `len..len + T`
    /// and returns the views of positions `0..len + T`, each (H, len + T, D).
    pub(crate) fn append(&self, layer: usize, k: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> {
        let t = k.shape()[1];
        if t > self.remaining() {
            return Err(Error::value(
                "KvCache::append",
                "tokens",
                format!("at most {} more positions (n_positions)", self.remaining()),
                t,
            ));
        }
        let end = self.len + t;
        let kl = self.layer(&self.k, layer)?;
        let vl = self.layer(&self.v, layer)?;
        ops::copy_into(&kl.narrow(1, self.len, end)?, k)?;
        ops::copy_into(&vl.narrow(1, self.len, end)?, v)?;
        Ok((kl.narrow(1, 0, end)?, vl.narrow(1, 0, end)?))
    }

    /// Marks `t` more positions as cached, once every layer has appended them.
    pub(crate) fn advance(&mut self, t: usize) {
        self.len += t;
    }

    /// The key and value tensors, each (L, H, P, D).
    pub(crate) fn tensors(&self) -> (&Tensor, &Tensor) {
        (&self.k, &self.v)
    }

    /// Layer `layer` of a cache tensor as (H, P, D), a view into the same buffer.
    fn layer(&self, cache: &Tensor, layer: usize) -> Result<Tensor> {
        let s = cache.shape();
        cache.narrow(0, layer, layer + 1)?.reshape(&s[1..])
    }
}
