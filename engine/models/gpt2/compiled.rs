//! Generation through compiled plans, resident on the GPU.
//!
//! A [`Generator`] captures the model twice with [`Plan::capture`]: a prefill plan per prompt
//! length (the eager ops of [`Gpt2::step`] from an empty cache, ids read from a device buffer)
//! and one decode plan (the fused one-token kernels of `decode.rs`, about five dispatches a
//! block). Both end in the device sampler, which writes the chosen id into the decode state
//! that the next step embeds, so no step waits for the host: the host records a chunk of
//! replays, submits it, and reads that chunk's ids back while the GPU runs the next one
//! ([`Streaming`]: chunks of 8 steps by default, or a step a submission so that each token
//! is delivered on its own). Greedy and top-k sampling (k <= 128) run on
//! the device with a counter-based generator and give the same ids as the eager path's
//! [`super::Sampler`]; other settings, the CPU context and models whose wte is split into
//! blocks take the eager path (see [`Gpt2::generate_compiled_async`]).

use std::collections::{HashMap, VecDeque};

use super::decode::{DecodeState, DeviceSampling, DEVICE_TOP_K_MAX};
use super::generate::{check_length, Sampler, Sampling};
use super::kv_cache::KvCache;
use super::model::Gpt2;
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::tensor::Tensor;

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

/// GPT-2 generation through a prefill plan per prompt length and one decode plan.
pub struct Generator {
    model: Gpt2,
    cache: KvCache,
    st: DecodeState,
    ids_in: Tensor, // (P,) prompt ids as exact f32
    decode: Plan,
    decode_logits: Tensor, // (1, V): written by every replay of `decode`
    prefill: HashMap<usize, Plan>,
    prefill_order: VecDeque<usize>,
    streaming: Streaming,
}

impl Generator {
    /// Captures the decode plan of `model` (a clone of its handles: the weights are shared).
    /// Fails with `Error::Unsupported` where the plan cannot be built: the CPU context, a wte
    /// split into blocks, a head dim that does not divide 256, widths not a multiple of 4.
    pub fn new(model: &Gpt2) -> Result<Generator> {
        let ctx = model.context();
        ctx.require_gpu("Generator::new")?;
        let p = model.config().n_positions;
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

    fn hold<'a>(model: &'a Gpt2, cache: &'a KvCache, st: &'a DecodeState, ids_in: &'a Tensor) -> Vec<&'a Tensor> {
        let mut hold = model.tensors();
        let (k, v) = cache.tensors();
        hold.extend([k, v, &st.state, &st.ids, ids_in]);
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
            let p = self.model.config().n_positions;
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

    /// What the device sampler runs for `sampling`, or `Error::Unsupported` (top-k of 0,
    /// meaning all, or above 128: the eager sampler takes those).
    pub(crate) fn device_sampling(sampling: Sampling) -> Result<DeviceSampling> {
        match sampling {
            Sampling::Greedy => Ok(DeviceSampling {
                top_k: 0,
                temperature: 1.0,
                seed: 0,
            }),
            Sampling::TopK { temperature, k, seed } => {
                Sampler::new(sampling)?; // the host sampler's checks (temperature)
                if k == 0 || k > DEVICE_TOP_K_MAX {
                    return Err(Error::Unsupported {
                        op: "Generator",
                        message: format!("top-k {k}: the device sampler takes 1..={DEVICE_TOP_K_MAX}"),
                    });
                }
                Ok(DeviceSampling {
                    top_k: k as u32,
                    temperature,
                    seed,
                })
            }
        }
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
        let cfg = self.model.config().clone();
        let limit = cfg.n_positions;
        check_length(op, prompt, n, limit)?;
        if let Some(&bad) = prompt.iter().find(|&&id| id as usize >= cfg.vocab_size) {
            return Err(Error::value(
                op,
                "prompt",
                format!("token ids below {}", cfg.vocab_size),
                bad,
            ));
        }
        let mut sampler = Self::device_sampling(sampling)?;
        // As the host sampler does: never more candidates than the vocabulary has.
        sampler.top_k = sampler.top_k.min(cfg.vocab_size as u32);
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
            in_flight.push_back(IdsRead::start(gpu, &self.st.ids, read_from, recorded)?);
            read_from = recorded;
            while in_flight.len() > IN_FLIGHT || (recorded == n && !in_flight.is_empty()) {
                if let Some(read) = in_flight.pop_front() {
                    for id in read.finish(gpu).await? {
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

/// The ids of steps `start..end`, on their way to the host.
struct IdsRead {
    staging: wgpu::Buffer,
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    submission: Option<wgpu::SubmissionIndex>,
    done: futures_intrusive::channel::shared::OneshotReceiver<std::result::Result<(), wgpu::BufferAsyncError>>,
}

impl IdsRead {
    /// Copies the ids behind the work recorded so far, submits, and starts mapping them.
    fn start(gpu: &Gpu, ids: &Tensor, start: usize, end: usize) -> Result<IdsRead> {
        let buffer = ids.gpu_buffer("Generator::generate")?;
        let bytes = ((end - start) * 4) as u64;
        let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("generated ids"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        gpu.record(|e| e.copy_buffer_to_buffer(buffer, (start * 4) as u64, &staging, 0, bytes));
        let submission = gpu.submit_index();
        let (tx, done) = futures_intrusive::channel::shared::oneshot_channel();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        Ok(IdsRead {
            staging,
            submission,
            done,
        })
    }

    /// Waits for this read (natively: for its own submission only; in a browser the map
    /// callback fires from the event loop) and returns the ids.
    async fn finish(self, gpu: &Gpu) -> Result<Vec<u32>> {
        #[cfg(not(target_arch = "wasm32"))]
        gpu.device
            .poll(wgpu::PollType::Wait {
                submission_index: self.submission,
                timeout: None,
            })
            .map_err(|e| Error::Map(format!("waiting for the device: {e}")))?;
        match self.done.receive().await {
            Some(Ok(())) => {}
            Some(Err(e)) => return Err(Error::Map(e.to_string())),
            None => return Err(Error::Map("the map callback was dropped (device lost?)".into())),
        }
        gpu.check("Generator::generate")?;
        let view = self
            .staging
            .get_mapped_range(..)
            .map_err(|e| Error::Map(e.to_string()))?;
        let ids = bytemuck::pod_collect_to_vec(&view);
        drop(view);
        self.staging.unmap();
        Ok(ids)
    }
}
