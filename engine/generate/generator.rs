//! Generation through compiled plans, resident on the GPU, for any model that implements
//! [`Decoder`].
//!
//! A [`Generator`] captures the model twice with [`Plan::capture`]: a prefill plan per prompt
//! length ([`Decoder::prefill_on_device`] from an empty cache, ids read from a device buffer)
//! and one decode plan ([`Decoder::decode_on_device`], one token). Both end in the device
//! sampler ([`super::device::sample`]), which writes the chosen id into the [`DecodeState`]
//! that the next step embeds, so no step waits for the host: the host records a chunk of
//! replays, submits it, and reads that chunk's ids back ([`crate::context`]'s readback) while
//! the GPU runs the next one ([`Streaming`]: chunks of 8 steps by default, or a step a
//! submission so that each token is delivered on its own). Greedy and top-k sampling
//! (k <= 128) run on the device with a counter-based generator and give the same ids as the
//! eager path's [`Sampler`](super::Sampler); other settings and the CPU context take the
//! op-by-op loop ([`generate_async`] chooses).

use std::collections::{HashMap, VecDeque};

use super::device::{DecodeState, DeviceSampling};
use super::eager::{check_prompt, generate_eager_async, Stepper};
use super::sampling::Sampling;
use crate::context::readback::PendingRead;
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::tensor::Tensor;

/// What a model gives a [`Generator`] beyond its [`Stepper`] (context, sizes, a fresh cache):
/// the tensors its plans bind, and the two device steps the plans are captured from. Both steps read the
/// current token and position from the [`DecodeState`] (or, for the prefill, the prompt from
/// `ids`) and end in the device sampler ([`super::device::sample`]), so the next step
/// depends on nothing the host holds.
pub trait Decoder: Stepper + Clone {
    /// Every tensor the plans bind that outlives a step: the model's weights and `cache`'s
    /// buffers ([`Plan::capture`]'s `hold`).
    fn tensors<'a>(&'a self, cache: &'a Self::Cache) -> Vec<&'a Tensor>;

    /// The prompt step from an empty `cache`: `ids` (T,) token ids on the device (exact f32),
    /// then the device sampler picks the first new token into `st` (position T). Returns the
    /// last position's logits (1, V).
    fn prefill_on_device(&self, ids: &Tensor, cache: &Self::Cache, st: &DecodeState) -> Result<Tensor>;

    /// One decode step, all on the device: the token and position of `st` in, its logits
    /// (1, V) out, and the device sampler advances `st`.
    fn decode_on_device(&self, cache: &Self::Cache, st: &DecodeState) -> Result<Tensor>;
}

/// How a [`Generator`] hands its tokens to the caller.
///
/// The device runs ahead of the host either way; what differs is how many decode steps go to
/// the device in one submission and are read back together. A token reaches `on_token` once
/// the submission holding it has finished on the device and its ids are read back, and the
/// host keeps at most two submissions in flight before it waits for the oldest.
///
/// The default is `Chunks(8)`, the setting the H200 decode figures were measured with; on
/// lavapipe `PerToken` measured as fast (24 tokens of the Shakespeare model, in a test), but
/// it has not been timed on a GPU yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Streaming {
    /// A submission per decode step: each token is delivered on its own, about two steps
    /// behind the device (latency first: a terminal, a page).
    PerToken,
    /// `n` decode steps a submission (the first token still goes alone): tokens arrive in
    /// bursts of `n`, up to `2 n` steps behind, for fewer submissions (throughput first).
    Chunks(usize),
}

impl Default for Streaming {
    fn default() -> Self {
        Streaming::Chunks(8)
    }
}

impl Streaming {
    /// Decode steps a submission.
    fn steps(self) -> usize {
        match self {
            Streaming::PerToken => 1,
            Streaming::Chunks(n) => n.max(1),
        }
    }
}
/// Submissions whose ids are still being read back before the host waits for the oldest.
const IN_FLIGHT: usize = 2;
/// Submissions a prefill replay is split into.
const PREFILL_PARTS: usize = 5;
/// Prefill plans kept (one per prompt length); the oldest are dropped past this.
const PREFILL_PLANS: usize = 8;

/// Generation through a prefill plan per prompt length and one decode plan of `M`.
pub struct Generator<M: Decoder> {
    model: M,
    cache: M::Cache,
    st: DecodeState,
    ids_in: Tensor, // (P,) prompt ids as exact f32
    decode: Plan,
    decode_logits: Tensor, // (1, V): written by every replay of `decode`
    prefill: HashMap<usize, Plan>,
    prefill_order: VecDeque<usize>,
    streaming: Streaming,
}

impl<M: Decoder> Generator<M> {
    /// Captures the decode plan of `model` (a clone of its handles: the weights are shared).
    /// Fails with `Error::Unsupported` where the plan cannot be built: the CPU context, or
    /// what the model's decode step does not take (GPT-2: a wte split into blocks, a head dim
    /// that does not divide 256, widths not a multiple of 4).
    pub fn new(model: &M) -> Result<Generator<M>> {
        let ctx = model.context();
        ctx.require_gpu("Generator::new")?;
        let p = model.positions();
        let cache = model.new_cache()?;
        let st = DecodeState::new(ctx, p)?;
        let ids_in = Tensor::uninit(ctx, &[p], "Generator::new")?;
        let (decode, decode_logits) = {
            let hold = Self::hold(model, &cache, &st, &ids_in);
            Plan::capture(ctx, &hold, || model.decode_on_device(&cache, &st))?
        };
        Ok(Generator {
            model: model.clone(),
            cache,
            st,
            ids_in,
            decode,
            decode_logits,
            prefill: HashMap::new(),
            prefill_order: VecDeque::new(),
            streaming: Streaming::default(),
        })
    }

    fn hold<'a>(model: &'a M, cache: &'a M::Cache, st: &'a DecodeState, ids_in: &'a Tensor) -> Vec<&'a Tensor> {
        let mut hold = model.tensors(cache);
        hold.extend([&st.state, &st.ids, &st.counts, ids_in]);
        hold
    }

    /// How later calls of [`Generator::generate_async`] deliver their tokens.
    pub fn set_streaming(&mut self, streaming: Streaming) {
        self.streaming = streaming;
    }

    /// The one-token decode plan.
    pub fn decode_plan(&self) -> &Plan {
        &self.decode
    }

    /// The logits (V,) of the last decode step run.
    pub async fn last_logits_async(&self) -> Result<Vec<f32>> {
        self.decode_logits.to_vec_async().await
    }

    /// [`Generator::last_logits_async`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn last_logits(&self) -> Result<Vec<f32>> {
        pollster::block_on(self.last_logits_async())
    }

    /// The prefill plan of a `t`-token prompt, captured on first use.
    pub fn prefill_plan(&mut self, t: usize) -> Result<&Plan> {
        if !self.prefill.contains_key(&t) {
            let p = self.model.positions();
            if t == 0 || t > p {
                return Err(Error::value(
                    "Generator::prefill_plan",
                    "prompt",
                    format!("1..={p} tokens"),
                    t,
                ));
            }
            let ids = self.ids_in.narrow(0, 0, t)?;
            let hold = Self::hold(&self.model, &self.cache, &self.st, &self.ids_in);
            let (model, cache, st) = (&self.model, &self.cache, &self.st);
            let (plan, _) = Plan::capture(model.context(), &hold, || model.prefill_on_device(&ids, cache, st))?;
            if self.prefill_order.len() >= PREFILL_PLANS {
                if let Some(old) = self.prefill_order.pop_front() {
                    self.prefill.remove(&old);
                }
            }
            self.prefill.insert(t, plan);
            self.prefill_order.push_back(t);
        }
        self.prefill.get(&t).ok_or_else(|| Error::Gpu {
            context: "Generator::prefill_plan".into(),
            message: "the plan just built is missing".into(),
        })
    }

    /// Generates `n` tokens after `prompt` (>= 1 token), calling `on_token` with each id in
    /// order as its submission is read back ([`Streaming`]). Returns the new ids.
    pub async fn generate_async(
        &mut self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        mut on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        let op = "Generator::generate";
        check_prompt(op, &self.model, prompt, n)?;
        let vocab_size = self.model.vocab_size();
        let mut sampler = DeviceSampling::new(sampling)?;
        // As the host sampler does: never more candidates than the vocabulary has.
        sampler.top_k = sampler.top_k.min(vocab_size as u32);
        if n == 0 {
            return Ok(vec![]);
        }
        let ctx = self.model.context().clone();
        let gpu = ctx.require_gpu(op)?;
        let ids: Vec<f32> = prompt.iter().map(|&i| i as f32).collect();
        gpu.write(self.ids_in.gpu_buffer(op)?, 0, bytemuck::cast_slice(&ids));
        self.st.reset(0, 0, sampler)?;
        // In parts: the device starts on the first layers while the host records the rest.
        self.prefill_plan(prompt.len())?.replay_in_parts(&ctx, PREFILL_PARTS)?;
        let mut out = Vec::with_capacity(n);
        let mut in_flight = VecDeque::new();
        let (mut recorded, mut read_from) = (1, 0);
        loop {
            let chunk_end = if read_from == 0 {
                1
            } else {
                (read_from + self.streaming.steps()).min(n)
            };
            while recorded < chunk_end {
                self.decode.replay(&ctx)?;
                recorded += 1;
            }
            let ids = self.st.ids.gpu_buffer(op)?;
            let (start, bytes) = ((read_from * 4) as u64, ((recorded - read_from) * 4) as u64);
            in_flight.push_back(PendingRead::start(gpu, ids, start, bytes)?);
            read_from = recorded;
            while in_flight.len() > IN_FLIGHT || (recorded == n && !in_flight.is_empty()) {
                if let Some(read) = in_flight.pop_front() {
                    let ids: Vec<u32> = bytemuck::pod_collect_to_vec(&read.finish(gpu).await?);
                    for id in ids {
                        on_token(id);
                        out.push(id);
                    }
                }
            }
            if recorded == n {
                return Ok(out);
            }
        }
    }

    /// [`Generator::generate_async`], blocking (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn generate(
        &mut self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        pollster::block_on(self.generate_async(prompt, n, sampling, on_token))
    }
}

/// Generates `n` tokens after `prompt` (>= 1 token) through compiled plans ([`Generator`])
/// where they can be built, op by op ([`generate_eager_async`]) otherwise: the CPU context,
/// a sampler the device does not run (top-k of 0 or above 128), or a model whose decode step a
/// plan cannot capture (`Generator::new` fails with `Error::Unsupported`, logged). Both
/// paths give the same ids. `op` names the caller in the errors of bad input.
pub async fn generate_async<M: Decoder>(
    op: &'static str,
    model: &M,
    prompt: &[u32],
    n: usize,
    sampling: Sampling,
    on_token: impl FnMut(u32),
) -> Result<Vec<u32>> {
    // Bad input is named after the caller on either path, before a plan is captured.
    check_prompt(op, model, prompt, n)?;
    if model.context().is_gpu() && DeviceSampling::new(sampling).is_ok() {
        match Generator::new(model) {
            Ok(mut g) => return g.generate_async(prompt, n, sampling, on_token).await,
            Err(Error::Unsupported { op, message }) => {
                log::info!("{op}: {message}; generating op by op");
            }
            Err(e) => return Err(e),
        }
    }
    generate_eager_async(op, model, prompt, n, sampling, on_token).await
}
