//! GPT-2 as a [`Decoder`]: what [`crate::generate::Generator`] captures its plans from. The
//! prefill is the eager ops of [`Gpt2::step`] from an empty cache with the ids read from a
//! device buffer; the decode step is the fused one-token kernels of `decode.rs` (about five
//! dispatches a block). Models whose wte is split into blocks cannot be captured (`new` of
//! the generator fails with `Error::Unsupported` and [`crate::generate::Generate::generate_async`] runs op by
//! op).

use super::kv_cache::KvCache;
use super::model::Gpt2;
use crate::error::Result;
use crate::generate::{DecodeState, Decoder};
use crate::tensor::Tensor;

/// GPT-2 generation through a prefill plan per prompt length and one decode plan.
pub type Generator = crate::generate::Generator<Gpt2>;

impl Decoder for Gpt2 {
    fn tensors<'a>(&'a self, cache: &'a KvCache) -> Vec<&'a Tensor> {
        let mut hold = self.weight_tensors();
        let (k, v) = cache.tensors();
        hold.extend([k, v]);
        hold
    }

    fn prefill_on_device(&self, ids: &Tensor, cache: &KvCache, st: &DecodeState) -> Result<Tensor> {
        Gpt2::prefill_on_device(self, ids, cache, st)
    }

    fn decode_on_device(&self, cache: &KvCache, st: &DecodeState) -> Result<Tensor> {
        Gpt2::decode_on_device(self, cache, st)
    }
}
