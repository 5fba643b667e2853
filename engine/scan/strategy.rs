//! How a scan walks T on the GPU: one lane per (batch, block, column) walking all of T, or
//! chunked in T (chunk-local scans, a scan of the chunk carries, a fix-up pass).
//!
//! Lane-sequential reads each input once and keeps the prefix in registers: the right choice
//! when the lanes alone fill the device. Chunked reads the inputs twice but multiplies the
//! parallelism by the number of chunks: the right choice for few lanes and long T. Look-back
//! (kernels that have it: the f32 channel scans) is one pass over chunks of
//! `LOOKBACK_STEPS` (32), each chunk's carry passed on by decoupled look-back: the parallelism of
//! chunks with one read of each input, where the adapter lets a workgroup spin on another
//! (`lookback_offered`).
//!
//! On software adapters a walk also has a loop budget (`Cost`, `max_segment`): lane walks
//! are split into segments and chunked carry walks capped. `super::launch` turns the plan
//! into dispatches for every recurrence kernel.

use crate::context::DeviceInfo;

/// The strategy a caller asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Chosen from the lane count, T and the device (`strategy::plan`).
    #[default]
    Auto,
    /// One invocation per (batch, block, column) walks all of T.
    Lanes,
    /// Chunks of `chunk` steps (`None`: a length chosen from T).
    Chunked {
        /// Steps per chunk.
        chunk: Option<usize>,
    },
    /// One pass, chunks of `LOOKBACK_STEPS` (32) steps whose carries pass by decoupled
    /// look-back. Kernels without a look-back pass, and adapters that do not offer it
    /// (`lookback_offered`), run the plan `Auto` would.
    LookBack,
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Strategy::Auto => write!(f, "auto"),
            Strategy::Lanes => write!(f, "lanes"),
            Strategy::Chunked { chunk: None } => write!(f, "chunked"),
            Strategy::Chunked { chunk: Some(c) } => write!(f, "chunked/{c}"),
            Strategy::LookBack => write!(f, "lookback"),
        }
    }
}

/// What a kernel launch does: walk whole lanes (in dispatches of at most `segment` steps),
/// chunks of `len` steps (`count` of them), or `count` chunks of `LOOKBACK_STEPS` (32) in one
/// look-back pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    Lanes { segment: usize },
    Chunked { len: usize, count: usize },
    LookBack { count: usize },
}

/// Steps per chunk of a look-back pass: `L` in `shaders/scan/lookback.wgsl`, read from there
/// at compile time.
pub(crate) const LOOKBACK_STEPS: usize = super::launch::const_u32(
    include_str!("../../shaders/scan/lookback.wgsl").as_bytes(),
    b"const L: u32 = ",
);

/// Whether `device` runs look-back passes: hardware adapters on Vulkan and DX12 (desktop GPUs,
/// whose running workgroups keep making progress while another spins on their results, as
/// CUDA's and HIP's look-back scans rely on), and the software adapters (a thread per running
/// workgroup; tested). Not OpenGL, whose drivers promise nothing about it, not Metal (Apple's
/// GPUs do not document it), nor WebGPU, which explicitly does not promise it.
pub(crate) fn lookback_offered(device: &DeviceInfo) -> bool {
    match device.kind {
        crate::context::DeviceKind::Gpu => matches!(device.backend.as_str(), "Vulkan" | "Dx12"),
        crate::context::DeviceKind::Software => device.backend != "BrowserWebGpu",
        crate::context::DeviceKind::CpuReference => false,
    }
}

/// The `side` words of a look-back over `lanes` walks of `count` chunks: the ticket, then each
/// chunk's P, S and inclusive carry per lane (`shaders/scan/lookback.wgsl`).
pub(crate) fn lookback_words(lanes: usize, count: usize) -> usize {
    1 + 3 * count * lanes
}

/// The look-back plan for `lanes` walks of `t` steps when `strategy` asks for one, `device`
/// offers it and its flag words ([`lookback_words`]) fit one
/// storage binding; `None` otherwise (the caller plans with [`plan`]). `Auto` does not pick it
/// yet: the pass has not been timed on a GPU (its first H200 run is `benches/h200.sh`'s
/// `--strategy lookback` suites), and the lane and chunked plans are measured there.
pub(crate) fn lookback(strategy: Strategy, lanes: usize, t: usize, device: &DeviceInfo) -> Option<Plan> {
    let count = t.div_ceil(LOOKBACK_STEPS);
    let bytes = lookback_words(lanes, count).saturating_mul(4) as u64;
    let fits = bytes <= device.max_storage_binding;
    (strategy == Strategy::LookBack && t > 0 && fits && lookback_offered(device)).then_some(Plan::LookBack { count })
}

/// Loop trips one invocation may make on a software adapter: under gallivm's 65535 with room.
pub(crate) const LOOP_BUDGET: usize = 60_000;

/// The loop trips a walk costs one invocation: per step, and per chunk of the chunked carry
/// walk. Only software adapters count them (see [`max_segment`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cost {
    pub step: usize,
    pub carry: usize,
}

impl Cost {
    /// A k x k block scan: about 4k + 4 loop trips per step, and no more per chunk of the
    /// carry walk.
    pub const fn block(k: usize) -> Cost {
        Cost {
            step: 4 * k + 4,
            carry: 4 * k + 4,
        }
    }
}

/// The most steps costing `step` loop trips each that one invocation may walk in one
/// dispatch on `device`.
///
/// Why: Mesa's software rasterisers (lavapipe, llvmpipe GL) end every loop of an invocation
/// once the loops of that invocation have run 65535 iterations in all (gallivm's loop
/// limiter against hangs), silently. A k = 16 lane walk makes about 18 loop trips per step,
/// so it stopped after step 3640 of 4099. On those adapters the walks are split into
/// segments that stay well under the limit; on hardware there is no such limit.
pub(crate) fn max_segment(device: &DeviceInfo, step: usize) -> usize {
    if device.is_software() {
        (LOOP_BUDGET / step.max(1)).max(1)
    } else {
        usize::MAX
    }
}

/// The chunk length for T steps when the caller does not give one: about sqrt(T), so the
/// chunk-local walks and the carry walk are of similar length, rounded to a power of two.
pub fn auto_chunk(t: usize) -> usize {
    ((t as f64).sqrt().ceil() as usize).next_power_of_two().clamp(16, 256)
}

/// Picks the plan for `invocations` independent lane walks of `t` steps costing `cost` on
/// `device`.
///
/// Lane-sequential when the lanes alone fill the device (or T is too short to split);
/// otherwise chunked. "Fill" is a few thousand invocations on a GPU, a few hundred on a
/// software adapter, whose cores are few. A chunked plan reads the inputs twice (5 transfers
/// per element instead of 3 forward), so it pays only when the lane walks are too few to keep
/// the memory system busy. (The channel scans keep 8 to 16 steps' loads in flight per walk,
/// software pipelined: 8192 one-channel walks hold 0.5-1 MB, a quarter of what HBM needs, but
/// the threshold is shared with the matrix scans, whose walks load far more per step.) On a
/// software adapter the chunked carry walk stays inside the loop limit too: at most
/// `LOOP_BUDGET / cost.carry` chunks (longer chunks, or lane walks when a chunk would pass a
/// segment).
pub(crate) fn plan(strategy: Strategy, invocations: usize, t: usize, cost: Cost, device: &DeviceInfo) -> Plan {
    let p = plan_steps(strategy, invocations, t, cost.step, device);
    let max_chunks = (LOOP_BUDGET / cost.carry.max(1)).max(1);
    match p {
        Plan::Chunked { count, .. } if device.is_software() && count > max_chunks => {
            let len = t.div_ceil(max_chunks);
            let segment = max_segment(device, cost.step);
            if len <= segment {
                Plan::Chunked {
                    len,
                    count: t.div_ceil(len),
                }
            } else {
                Plan::Lanes { segment }
            }
        }
        p => p,
    }
}

/// [`plan`] for steps costing `step` loop trips, with no more chunks than a segment's steps.
fn plan_steps(strategy: Strategy, invocations: usize, t: usize, step: usize, device: &DeviceInfo) -> Plan {
    let segment = max_segment(device, step);
    let chunked = |chunk: Option<usize>| {
        // Within the loop budget both ways: no chunk longer than a segment, and no more
        // chunks than a segment's steps for the carry walk.
        let len = chunk
            .unwrap_or_else(|| auto_chunk(t))
            .clamp(1, t.max(1))
            .min(segment)
            .max(t.div_ceil(segment));
        Plan::Chunked {
            len,
            count: t.div_ceil(len),
        }
    };
    match strategy {
        Strategy::Lanes => Plan::Lanes { segment },
        Strategy::Chunked { chunk } => chunked(chunk),
        Strategy::Auto | Strategy::LookBack => {
            let fill = if device.is_software() { 256 } else { 8192 };
            if invocations >= fill || t < 4 * auto_chunk(t) {
                Plan::Lanes { segment }
            } else {
                chunked(None)
            }
        }
    }
}

/// The `[begin, end)` segments of T of at most `len` steps, in scan order.
pub(crate) fn segments(t: usize, len: usize, reverse: bool) -> Vec<(usize, usize)> {
    let len = len.max(1);
    let mut out: Vec<(usize, usize)> = (0..t.div_ceil(len))
        .map(|i| (i * len, ((i + 1) * len).min(t)))
        .collect();
    if reverse {
        out.reverse();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::DeviceKind;

    fn device(kind: DeviceKind, backend: &str, max_storage_binding: u64) -> DeviceInfo {
        DeviceInfo {
            kind,
            backend: backend.into(),
            max_storage_binding,
            ..DeviceInfo::cpu()
        }
    }

    #[test]
    fn lookback_is_planned_only_when_asked_offered_and_its_words_fit() {
        let gib = 1 << 30;
        let vulkan = device(DeviceKind::Gpu, "Vulkan", gib);
        let forced = Strategy::LookBack;
        assert_eq!(
            lookback(forced, 600, 4099, &vulkan),
            Some(Plan::LookBack { count: 129 })
        );
        assert_eq!(lookback(forced, 1, 32, &vulkan), Some(Plan::LookBack { count: 1 }));
        assert_eq!(lookback(forced, 1, 33, &vulkan), Some(Plan::LookBack { count: 2 }));
        // Not picked by the other strategies (Auto included, until it is timed), nor at T = 0.
        for s in [Strategy::Auto, Strategy::Lanes, Strategy::Chunked { chunk: None }] {
            assert_eq!(lookback(s, 600, 4099, &vulkan), None);
        }
        assert_eq!(lookback(forced, 600, 0, &vulkan), None);
        // Offered on hardware Vulkan and DX12 and on the software adapters outside the browser.
        for (kind, backend, offered) in [
            (DeviceKind::Gpu, "Dx12", true),
            (DeviceKind::Gpu, "Gl", false),
            (DeviceKind::Gpu, "Metal", false),
            (DeviceKind::Gpu, "BrowserWebGpu", false),
            (DeviceKind::Software, "Vulkan", true),
            (DeviceKind::Software, "Gl", true),
            (DeviceKind::Software, "BrowserWebGpu", false),
            (DeviceKind::CpuReference, "Cpu", false),
        ] {
            let d = device(kind, backend, gib);
            assert_eq!(lookback(forced, 64, 100, &d).is_some(), offered, "{kind:?} {backend}");
        }
        // The flag words must fit one binding: 1 + 3 x 4 chunks x 64 lanes = 769 words.
        assert!(lookback(forced, 64, 100, &device(DeviceKind::Gpu, "Vulkan", 769 * 4)).is_some());
        assert!(lookback(forced, 64, 100, &device(DeviceKind::Gpu, "Vulkan", 769 * 4 - 1)).is_none());
    }
}
