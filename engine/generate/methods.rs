//! The generation methods every model with a compiled decode step has, written once:
//! [`Generate`], implemented for every [`Decoder`], so a new model gets `generate`,
//! `generate_async`, `generate_eager` and `generate_eager_async` by implementing
//! [`Stepper`] and [`Decoder`] and nothing more.

use crate::error::Result;
use crate::generate::{generate_async, generate_eager_async, Decoder, Sampling};
#[cfg(doc)]
use crate::generate::{Generator, Stepper, Streaming};

/// Text generation for every model that implements [`Decoder`] (GPT-2, the Llama-style
/// decoder): bring it into scope with `use wgsl_compute::generate::Generate;`. Errors of bad
/// input name the model's entry ([`Stepper::OP`], e.g. `Gpt2::generate`).
// Why `async fn` in a public trait (the lint asks for `Send` bounds callers could name):
// these futures wait on wgpu's, which are not `Send` in a browser, and every caller awaits
// them where it made them or blocks on them (`generate`, `generate_eager`).
#[allow(async_fn_in_trait)]
pub trait Generate: Decoder {
    /// Generates `n` tokens after `prompt` (>= 1 token), calling `on_token` with each id in
    /// order (for streaming). Returns the new ids. Through compiled plans ([`Generator`]) on
    /// every GPU adapter, software ones included (where they measured 1.5x to 5.6x faster
    /// than op by op); op by op on the CPU context, for a sampler the device does not run or
    /// a model whose decode step a plan cannot capture ([`generate_async`]); both give the
    /// same ids. Through compiled plans a token is delivered once the submission holding its
    /// decode step has finished on the device and its ids are read back: in bursts of 8
    /// ([`Streaming`]'s default; a [`Generator`] with `Streaming::PerToken` delivers each on
    /// its own); op by op, as soon as it is chosen. The prompt runs as one step, then every
    /// token costs one position of the cache.
    async fn generate_async(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        generate_async(Self::OP, self, prompt, n, sampling, on_token).await
    }

    /// [`Generate::generate_async`] op by op through the loop every model shares
    /// ([`generate_eager_async`]): the prompt as one step, then one cached step a token, each
    /// chosen on the host (greedy reads back one id) and handed to `on_token` at once. The
    /// path plans are checked against.
    async fn generate_eager_async(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        generate_eager_async(Self::OP, self, prompt, n, sampling, on_token).await
    }

    /// [`Generate::generate_async`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    fn generate(&self, prompt: &[u32], n: usize, sampling: Sampling, on_token: impl FnMut(u32)) -> Result<Vec<u32>> {
        pollster::block_on(self.generate_async(prompt, n, sampling, on_token))
    }

    /// [`Generate::generate_eager_async`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    fn generate_eager(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        pollster::block_on(self.generate_eager_async(prompt, n, sampling, on_token))
    }
}

impl<M: Decoder> Generate for M {}
