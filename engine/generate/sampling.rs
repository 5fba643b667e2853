//! Choosing the next token from a row of logits on the host: greedy, or temperature + top-k
//! with a seed ([`Sampling`], [`Sampler`]), and the counter-based draw the device sampler
//! ([`super::device::sample`]) repeats bit for bit, so eager and compiled generation pick the
//! same ids.

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
/// ([`super::device::sample`]), so the eager and compiled paths pick the same ids.
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

/// Top-k sampling as the device sampler (`shaders/generate/sample.wgsl`) does it, draw `step` of a run seeded
/// `seed`: the k largest logits (larger first, lower id first on ties), f32 weights
/// `exp((l - max) / temperature)` summed in that order, and a uniform from the counter-based
/// generator (seed, step) walked against them. k <= 1 is greedy.
pub(crate) fn top_k_draw(logits: &[f32], k: usize, temperature: f32, seed: u64, step: u32) -> u32 {
    let k = k.min(logits.len());
    if k <= 1 {
        return argmax(logits);
    }
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&a, &b| key_of(logits[b]).cmp(&key_of(logits[a])).then(a.cmp(&b)));
    let top = &order[..k];
    let max = logits[top[0]];
    let weight = |i: usize| ((logits[i] - max) / temperature).exp();
    let total: f32 = top.iter().map(|&i| weight(i)).sum();
    let r = hash(seed as u32 ^ hash((seed >> 32) as u32 ^ hash(step)));
    let mut u = (r >> 8) as f32 * (1.0 / 16_777_216.0) * total;
    for &i in top {
        let w = weight(i);
        if u < w {
            return i as u32;
        }
        u -= w;
    }
    top[k - 1] as u32
}

/// The order-preserving f32 -> u32 key of `sample.wgsl`: every NaN gets the largest key and
/// -0.0 the key of +0.0 (the engine's argmax rule, `reference::nn::argmax_index`).
fn key_of(v: f32) -> u32 {
    if v.is_nan() {
        return u32::MAX;
    }
    let b = if v == 0.0 { 0 } else { v.to_bits() };
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// lowbias32, the counter-based generator of `sample.wgsl`.
fn hash(v: u32) -> u32 {
    let mut x = v;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}
