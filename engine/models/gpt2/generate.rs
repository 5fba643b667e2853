//! GPT-2's generation entry points: through compiled plans ([`Generator`](crate::generate::Generator), from
//! [`crate::generate`]) on GPU adapters, or op by op through the loop every model shares
//! ([`generate_eager_async`]) over GPT-2's [`Stepper`]: its KV cache and one step's logits.
//! [`generate_async`] chooses between them.

use super::kv_cache::KvCache;
use super::model::{Gpt2, StepOptions};
use crate::context::Context;
use crate::error::Result;
use crate::generate::{generate_async, generate_eager_async, Sampling, Stepper};
use crate::tensor::Tensor;

impl Gpt2 {
    /// Generates `n` tokens after `prompt` (>= 1 token), calling `on_token` with each id in
    /// order (for streaming). Returns the new ids. Through compiled plans a token is delivered
    /// once the submission holding its decode step has finished on the device and its ids
    /// are read back: in bursts of 8 ([`crate::generate::Streaming`]'s default; a [`Generator`](crate::generate::Generator) with
    /// `Streaming::PerToken` delivers each on its own); op by op, as soon as it is chosen.
    /// The prompt runs as one step, then every token costs one position of the KV cache.
    /// Through compiled plans on every GPU adapter, software ones included (where they
    /// measured 1.5x to 5.6x faster than op by op), op by op on the CPU context, for a wte
    /// split into blocks or a sampler the device does not run ([`generate_async`]); both give
    /// the same ids.
    pub async fn generate_async(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        generate_async("Gpt2::generate", self, prompt, n, sampling, on_token).await
    }

    /// [`Gpt2::generate_async`] op by op: every step is recorded eagerly and its token is
    /// chosen on the host (greedy reads back one id). The path plans are checked against.
    pub async fn generate_eager_async(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        generate_eager_async("Gpt2::generate", self, prompt, n, sampling, on_token).await
    }

    /// [`Gpt2::generate_eager_async`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn generate_eager(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        pollster::block_on(self.generate_eager_async(prompt, n, sampling, on_token))
    }

    /// [`Gpt2::generate_async`], blocking (native only).
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
}

impl Stepper for Gpt2 {
    type Cache = KvCache;

    fn context(&self) -> &Context {
        Gpt2::context(self)
    }

    fn positions(&self) -> usize {
        self.config().n_positions
    }

    fn vocab_size(&self) -> usize {
        self.config().vocab_size
    }

    fn new_cache(&self) -> Result<KvCache> {
        Gpt2::new_cache(self)
    }

    fn next_logits(&self, ids: &[u32], cache: &mut KvCache) -> Result<Tensor> {
        Ok(self.step(ids, cache, StepOptions::default())?.logits)
    }
}
