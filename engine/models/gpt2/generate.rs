//! Generation: choosing the next token from a row of logits (greedy, or temperature +
//! top-k with a seed) and the decode loop over the model's KV cache.

use super::compiled::Generator;
use super::decode::top_k_draw;
use super::model::{Gpt2, StepOptions};
use crate::error::{Error, Result};
use crate::ops;
use crate::tensor::Tensor;

/// How to pick the next token.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// The largest logit (the lowest id on a tie).
    Greedy,
    /// Sample from the softmax of `logits / temperature` restricted to the `k` largest
    /// (`k = 0` keeps them all), drawing from a generator seeded with `seed`.
    TopK {
        /// Divides the logits; below 1 sharpens, above 1 flattens (> 0).
        temperature: f32,
        /// Candidates kept, largest logits first (0: all).
        k: usize,
        /// Seed of the generator that draws.
        seed: u64,
    },
}

impl Sampling {
    /// The temperature of [`Sampling::recommended`].
    pub const DEFAULT_TEMPERATURE: f32 = 0.8;
    /// The `k` of [`Sampling::recommended`].
    pub const DEFAULT_TOP_K: usize = 40;
    /// The seed the `gpt2` example uses unless given `--seed`. Chosen so that the README
    /// command (`"ROMEO:" --tokens 40` on the shipped model) repeats no line, not even a
    /// speaker's name (seeds 1, 3, 5 and 9 of 0..=11 do not); of seeds 0..=11, only 2 and 10
    /// repeat an 8-token window there.
    pub const DEFAULT_SEED: u64 = 3;

    /// What the `gpt2` example and the page use unless told otherwise: temperature 0.8 and
    /// top-k 40, drawing from a generator seeded with `seed` so runs repeat.
    ///
    /// Why not greedy: small models loop under greedy decoding (the shipped Shakespeare model
    /// writes the same line again and again); 0.8 and 40 are the usual GPT-2 settings, and
    /// keep the text on topic while breaking the loops.
    pub fn recommended(seed: u64) -> Sampling {
        Sampling::TopK {
            temperature: Self::DEFAULT_TEMPERATURE,
            k: Self::DEFAULT_TOP_K,
            seed,
        }
    }
}

/// A sampling strategy plus its draw counter; reproducible for a given seed.
///
/// Draw i of a run seeded `seed` depends only on (seed, i), through the same counter-based
/// generator, candidate order and f32 weights as the device sampler of compiled generation
/// (`decode::device_sample`), so the eager and compiled paths pick the same ids.
#[derive(Clone, Debug)]
pub struct Sampler {
    mode: Sampling,
    step: u32,
}

impl Sampler {
    /// Checks the parameters (temperature > 0 and finite).
    pub fn new(mode: Sampling) -> Result<Sampler> {
        if let Sampling::TopK { temperature, .. } = mode {
            if !(temperature > 0.0 && temperature.is_finite()) {
                return Err(Error::value(
                    "Sampler::new",
                    "temperature",
                    "a positive number",
                    temperature,
                ));
            }
        }
        Ok(Sampler { mode, step: 0 })
    }

    /// The strategy.
    pub fn mode(&self) -> Sampling {
        self.mode
    }

    /// True when only the arg-max is needed (the model can pick on the device).
    pub fn is_greedy(&self) -> bool {
        self.mode == Sampling::Greedy
    }

    /// The next token from `logits` (V,).
    pub fn pick(&mut self, logits: &[f32]) -> Result<u32> {
        if logits.is_empty() {
            return Err(Error::value("Sampler::pick", "logits", "a non-empty row", 0));
        }
        let step = self.step;
        self.step = self.step.wrapping_add(1);
        match self.mode {
            Sampling::Greedy => Ok(argmax(logits)),
            Sampling::TopK { temperature, k, seed } => {
                let k = if k == 0 { logits.len() } else { k.min(logits.len()) };
                Ok(top_k_draw(logits, k, temperature, seed, step))
            }
        }
    }
}

/// A generation of `n` tokens after `prompt` fits `limit` positions (checked, no overflow).
pub(crate) fn check_length(op: &'static str, prompt: &[u32], n: usize, limit: usize) -> Result<()> {
    if prompt.is_empty() || n > limit || prompt.len() > limit - n {
        return Err(Error::value(
            op,
            "prompt + tokens",
            format!("1..={limit} positions (n_positions)"),
            format!("{} + {n}", prompt.len()),
        ));
    }
    Ok(())
}

/// Index of the largest value under the engine's argmax rule
/// ([`crate::reference::nn::argmax_index`]: NaN wins, the first one on a tie).
pub fn argmax(xs: &[f32]) -> u32 {
    crate::reference::nn::argmax_index(xs.iter().copied()) as u32
}

/// The next token from `logits` (1, V). Greedy picks on the device and reads back one value;
/// sampling reads the row back.
pub async fn choose(logits: &Tensor, sampler: &mut Sampler) -> Result<u32> {
    if sampler.is_greedy() {
        let id = ops::argmax_last(logits)?.to_vec_async().await?;
        return id
            .first()
            .map(|&i| i as u32)
            .ok_or_else(|| Error::value("choose", "logits", "a non-empty row", 0));
    }
    sampler.pick(&logits.to_vec_async().await?)
}

impl Gpt2 {
    /// Generates `n` tokens after `prompt` (>= 1 token), calling `on_token` with each id in
    /// order (for streaming). Returns the new ids. Through compiled plans a token is delivered
    /// once the submission holding its decode step has finished on the device and its ids
    /// are read back: in bursts of 8 ([`super::Streaming`]'s default; a [`Generator`] with
    /// `Streaming::PerToken` delivers each on its own); op by op, as soon as it is chosen.
    /// The prompt runs as one step, then every token costs one position of the KV cache.
    /// Through compiled plans
    /// ([`Gpt2::generate_compiled_async`]) on every GPU adapter, software ones included (where
    /// they measured 1.5x to 5.6x faster than op by op), op by op on the CPU context; both give
    /// the same ids.
    pub async fn generate_async(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        if self.context().is_gpu() {
            return self.generate_compiled_async(prompt, n, sampling, on_token).await;
        }
        self.generate_eager_async(prompt, n, sampling, on_token).await
    }

    /// [`Gpt2::generate_async`] through compiled plans on any GPU adapter, op by op only where
    /// a plan cannot be built (the CPU context, a wte split into blocks, a sampler the device
    /// does not run: see [`Generator`]).
    pub async fn generate_compiled_async(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        if self.context().is_gpu() && Generator::device_sampling(sampling).is_ok() {
            match Generator::new(self) {
                Ok(mut g) => return g.generate_async(prompt, n, sampling, on_token).await,
                Err(Error::Unsupported { op, message }) => {
                    log::info!("{op}: {message}; generating op by op");
                }
                Err(e) => return Err(e),
            }
        }
        self.generate_eager_async(prompt, n, sampling, on_token).await
    }

    /// [`Gpt2::generate_async`] op by op: every step is recorded eagerly and its token is
    /// chosen on the host (greedy reads back one id). The path plans are checked against.
    pub async fn generate_eager_async(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        mut on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        let op = "Gpt2::generate";
        let limit = self.config().n_positions;
        check_length(op, prompt, n, limit)?;
        let mut sampler = Sampler::new(sampling)?;
        let mut cache = self.new_cache()?;
        let mut out = Vec::with_capacity(n);
        let mut input = prompt.to_vec();
        while out.len() < n {
            let step = self.step(&input, &mut cache, StepOptions::default())?;
            let id = choose(&step.logits, &mut sampler).await?;
            on_token(id);
            out.push(id);
            input = vec![id];
        }
        Ok(out)
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
