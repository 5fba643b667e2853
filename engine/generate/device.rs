//! The device side of compiled generation: the [`DecodeState`] a decode plan's kernels read
//! (the token, its position, the sampler's counter) and the device sampler that picks the next
//! token into it (`shaders/generate/`), so one captured plan serves every step and no step
//! waits for the host.
//!
//! A model's decode kernels take the state's buffer as their first binding (the `State` struct
//! of `shaders/generate/state.wgsl`, named in their `// prelude:` lines) and end the step with
//! [`sample`], which writes the chosen id into the state and the ids ring and advances the
//! position.

use super::sampling::{Sampler, Sampling};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::tensor::Tensor;

/// Words of the decode state (`shaders/generate/state.wgsl`).
pub(crate) const STATE_WORDS: usize = 8;
/// Arrival counters of the chunked decode attention (`count` in `attention_decode.wgsl`),
/// H a layer: enough for 4096 heads over all layers (GPT-2 1.5B has 48 x 25).
pub(crate) const ATTENTION_COUNTERS: usize = 4096;
/// Largest top-k the device sampler takes (`KMAX` in `shaders/generate/sample.wgsl`).
pub const DEVICE_TOP_K_MAX: usize = 128;

const SAMPLE: KernelDef = KernelDef::new("generate/sample", shader!("generate/sample.wgsl"), "sample");

/// Logits per workgroup of the sampler's first stage (`BLOCK` in `sample.wgsl`): on GPUs, and
/// on CPU adapters, where fewer workgroups pay off.
const SAMPLE_BLOCK: usize = 2048;
const SAMPLE_BLOCK_SOFTWARE: usize = 16384;

/// The device side of one generated sequence: the decode state and the ring of chosen ids.
#[derive(Clone, Debug)]
pub struct DecodeState {
    pub(crate) state: Tensor,  // (STATE_WORDS,) u32 words (`State` in state.wgsl)
    pub(crate) ids: Tensor,    // (capacity,) u32 ids, ids[i] = the token chosen at step i
    pub(crate) counts: Tensor, // (ATTENTION_COUNTERS,) u32, zero between dispatches: `attention_decode`'s arrivals
}

/// The sampler's settings as the device reads them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DeviceSampling {
    pub top_k: u32, // 0 or 1: greedy
    pub temperature: f32,
    pub seed: u64,
}

impl DeviceSampling {
    /// What the device sampler runs for `sampling`, or `Error::Unsupported` (top-k of 0,
    /// meaning all, or above 128: the eager sampler takes those).
    pub(crate) fn new(sampling: Sampling) -> Result<DeviceSampling> {
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
}

impl DecodeState {
    /// A state (uninitialised until [`DecodeState::reset`]) and a ring of `capacity` ids.
    pub(crate) fn new(ctx: &Context, capacity: usize) -> Result<Self> {
        Ok(DecodeState {
            state: Tensor::uninit(ctx, &[STATE_WORDS], "DecodeState::new")?,
            ids: Tensor::uninit(ctx, &[capacity.max(1)], "DecodeState::new")?,
            counts: Tensor::zeros(ctx, &[ATTENTION_COUNTERS])?,
        })
    }

    /// The state words (8,) u32 (`State` in `shaders/generate/state.wgsl`): what a decode
    /// kernel binds to read the current token and position.
    pub fn state(&self) -> &Tensor {
        &self.state
    }

    /// The ring of chosen ids (capacity,) u32: `ids[i]` is the token chosen at step i.
    pub fn ids(&self) -> &Tensor {
        &self.ids
    }

    /// Writes a fresh state: position `pos`, no step taken, `token`, and the sampler.
    pub(crate) fn reset(&self, pos: u32, token: u32, s: DeviceSampling) -> Result<()> {
        let gpu = self.state.context().require_gpu("DecodeState::reset")?;
        let mode = u32::from(s.top_k > 1);
        let words = [
            pos,
            0,
            token,
            mode,
            s.top_k,
            s.temperature.to_bits(),
            s.seed as u32,
            (s.seed >> 32) as u32,
        ];
        gpu.write(
            self.state.gpu_buffer("DecodeState::reset")?,
            0,
            bytemuck::cast_slice(&words),
        );
        // The attention counters are zero after every dispatch; written again in case one
        // was cut short (a lost device, an aborted submission).
        gpu.write(
            self.counts.gpu_buffer("DecodeState::reset")?,
            (self.counts.layout().offset * 4) as u64,
            bytemuck::cast_slice(&[0u32; ATTENTION_COUNTERS]),
        );
        Ok(())
    }
}

/// Picks the next token from `logits` (1, V) into the state and the ids ring; the position
/// then becomes `new_pos` (after a prefill) or advances by one.
pub fn sample(logits: &Tensor, st: &DecodeState, new_pos: Option<usize>) -> Result<()> {
    let op = "generate::sample";
    let gpu = logits.context().require_gpu(op)?;
    let v = logits.len();
    if !logits.layout().is_dense() || v == 0 {
        return Err(Error::shape(op, "logits", "a dense row (1, V)", logits.shape()));
    }
    // Stage 1: each block's best candidates; stage 2: the pick among all of them.
    let software = gpu.info.is_software();
    let block = if software { SAMPLE_BLOCK_SOFTWARE } else { SAMPLE_BLOCK };
    let blocks = v.div_ceil(block);
    let cands = Tensor::uninit(logits.context(), &[blocks * DEVICE_TOP_K_MAX * 2], op)?; // (blocks * KMAX) (key, id)
    let buffers = [
        logits.gpu_buffer(op)?,
        st.state.gpu_buffer(op)?,
        st.ids.gpu_buffer(op)?,
        cands.gpu_buffer(op)?,
    ];
    for (pick, items, groups) in [(false, v, blocks), (true, blocks * DEVICE_TOP_K_MAX, 1)] {
        let params = Params::new()
            .usize(items)
            .usize(logits.layout().offset)
            .usize(st.ids.len())
            .u32(u32::from(new_pos.is_some()))
            .usize(new_pos.unwrap_or(0));
        let consts = [
            ("PICK", f64::from(u8::from(pick))),
            ("BLOCK", block as f64),
            ("SERIAL_SCAN", f64::from(u8::from(software))),
        ];
        let kernel = gpu.kernel(&SAMPLE, &consts)?;
        gpu.dispatch(&kernel, &params, &buffers, [groups as u32, 1, 1])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{sample, DecodeState, DeviceSampling};
    use crate::check::Rng;
    use crate::{Context, Tensor};

    /// The device sampler's greedy path (k = 1: a tree over the invocations' bests) picks what
    /// the engine's argmax rule picks: the largest logit, the first on ties, within a block and
    /// across blocks, and the first NaN if any; top-k with k = 1 agrees.
    #[test]
    fn the_device_sampler_picks_the_argmax_rule_greedily() {
        let ctx = Context::new().expect("a context");
        if ctx.require_gpu("test").is_err() {
            return;
        }
        let v = 50_257;
        let mut rng = Rng::new(7);
        let base = rng.vec_range(v, -4.0, 4.0);
        let mut rows = vec![];
        // A tie of the maximum in two blocks far apart, and next to each other in one block.
        for (a, b) in [(40_001, 3), (100, 101), (v - 1, v - 2)] {
            let mut r = base.clone();
            r[a] = 9.0;
            r[b] = 9.0;
            rows.push(r);
        }
        let mut nan = base.clone();
        nan[30_000] = f32::NAN;
        nan[20] = f32::NAN;
        nan[5] = f32::INFINITY;
        rows.push(nan);
        rows.push(vec![-f32::INFINITY; v]);
        let st = DecodeState::new(&ctx, 4).unwrap();
        for row in &rows {
            let want = crate::reference::nn::argmax_index(row.iter().copied()) as u32;
            for top_k in [0, 1] {
                st.reset(
                    0,
                    0,
                    DeviceSampling {
                        top_k,
                        temperature: 1.0,
                        seed: 3,
                    },
                )
                .unwrap();
                let logits = Tensor::from_slice(&ctx, &[1, v], row).unwrap();
                sample(&logits, &st, None).unwrap();
                // The ids are u32 words; to_vec copies the bits.
                let got = st.ids.to_vec().unwrap()[0].to_bits();
                assert_eq!(got, want, "top_k {top_k}");
            }
        }
    }
}
