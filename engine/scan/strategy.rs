//! How a scan walks T on the GPU: one lane per (batch, block, column) walking all of T, or
//! chunked in T (chunk-local scans, a scan of the chunk carries, a fix-up pass).
//!
//! Lane-sequential reads each input once and keeps the prefix in registers: the right choice
//! when the lanes alone fill the device. Chunked reads the inputs twice but multiplies the
//! parallelism by the number of chunks: the right choice for few lanes and long T. Look-back
//! (kernels that have it: the channel scans) is one pass over tiles of chunk steps x
//! adjacent channels, each chunk's carry passed on by decoupled look-back with a fallback
//! (`shaders/scan/lookback.wgsl`): the parallelism of chunks with one read of each input from
//! memory, on every adapter (the fallback needs no forward-progress guarantee).
//!
//! On software adapters a walk also has a loop budget (`Cost`, `max_segment`): lane walks
//! are split into segments and chunked carry walks capped. `super::launch` turns the [`Walk`]
//! into dispatches for every recurrence kernel.

use crate::context::DeviceInfo;

/// The strategy a caller asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Chosen from the lane count, T and the device (`strategy::walk`).
    #[default]
    Auto,
    /// One invocation per (batch, block, column) walks all of T.
    Lanes,
    /// Chunks of `chunk` steps (`None`: a length chosen from T).
    Chunked {
        /// Steps per chunk.
        chunk: Option<usize>,
    },
    /// One pass over chunks of [`lookback_steps`] steps whose carries pass by decoupled
    /// look-back. Kernels without a look-back pass, and the CPU context, run the walk `Auto`
    /// would.
    LookBack,
    /// The walk the tuner measures fastest on this device for the call's shape (the
    /// channel scans, `linear_scan` and `parallel_scan_log`, on a GPU; `crate::tune::Family::ScanWalk`):
    /// `Auto`'s, `LookBack`, `Lanes` or `Chunked`. The walks combine steps in different
    /// orders, so the result agrees with `Auto`'s within the scan's gate rather than bit for
    /// bit. With tuning off, inside a plan capture of an untuned shape, and for the other
    /// scans, it is `Auto`.
    Tuned,
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Strategy::Auto => write!(f, "auto"),
            Strategy::Lanes => write!(f, "lanes"),
            Strategy::Chunked { chunk: None } => write!(f, "chunked"),
            Strategy::Chunked { chunk: Some(c) } => write!(f, "chunked/{c}"),
            Strategy::LookBack => write!(f, "lookback"),
            Strategy::Tuned => write!(f, "tuned"),
        }
    }
}

/// How a launch walks T, the [`Strategy`] resolved for one device: whole lanes (in dispatches
/// of at most `segment` steps), chunks of `len` steps (`count` of them), or `count` chunks of
/// `len` steps, `width` channels an invocation, in one look-back pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    Lanes { segment: usize },
    Chunked { len: usize, count: usize },
    LookBack { len: usize, count: usize, width: usize },
}

impl Walk {
    /// The walk's kind without its sizes, as the tuner's keys and candidates name it.
    pub fn kind(self) -> &'static str {
        match self {
            Walk::Lanes { .. } => "lanes",
            Walk::Chunked { .. } => "chunked",
            Walk::LookBack { .. } => "lookback",
        }
    }
}

/// Whether `device` runs look-back passes: every GPU adapter, the browser's included, and
/// the software adapters. The fallback of `shaders/scan/lookback.wgsl` (a look-back that
/// waits too long computes the predecessor's aggregate itself) needs no promise that a
/// running workgroup progresses while another spins, so Metal, OpenGL and WebGPU qualify
/// as well as Vulkan and DX12. Not the CPU context, which has no kernels.
pub(crate) fn lookback_offered(device: &DeviceInfo) -> bool {
    device.kind != crate::context::DeviceKind::CpuReference
}

/// Polls of a predecessor before a look-back computes that chunk itself (`SPIN` in
/// `shaders/scan/lookback.wgsl`). Hardware Vulkan and DX12 adapters (desktop GPUs, whose
/// running workgroups progress while another spins, as CUDA's look-back scans rely on): 2^20,
/// the fallback for starvation only. Software adapters: 64, since Mesa ends an invocation's
/// loops after 65535 trips in all. Elsewhere (Metal, OpenGL, WebGPU, which promise nothing):
/// 1024, a few microseconds' wait before the work is done twice.
pub(crate) fn lookback_spin(device: &DeviceInfo) -> u32 {
    match device.kind {
        crate::context::DeviceKind::Gpu if matches!(device.backend, wgpu::Backend::Vulkan | wgpu::Backend::Dx12) => {
            1 << 20
        }
        crate::context::DeviceKind::Software => 64,
        _ => 1024,
    }
}

/// Whether the look-back passes withhold their inclusive carries ([`withhold_lookback_carries`]).
static WITHHOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A test hook, process-wide: while on, the look-back's chunks after the first publish their
/// aggregates but not their inclusive carries (`WITHHOLD` in `shaders/scan/lookback.wgsl`),
/// so every look-back folds the aggregates of all its predecessors back to chunk 0, a path a
/// test cannot otherwise force. The results are the same; the scans are slower.
#[doc(hidden)]
pub fn withhold_lookback_carries(on: bool) {
    WITHHOLD.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// `WITHHOLD`'s value for the look-back kernels built now.
pub(crate) fn lookback_withheld() -> bool {
    WITHHOLD.load(std::sync::atomic::Ordering::Relaxed)
}

/// The `side` words of a look-back over `channels` channel walks of `count` chunks: the
/// ticket, then each chunk's P, S and inclusive carry per channel (`shaders/scan/lookback.wgsl`).
pub(crate) fn lookback_words(channels: usize, count: usize) -> usize {
    1 + 3 * count * channels
}

/// Invocations a look-back pass aims for: about 2^17, a wave of 64 warps on each of an
/// H200's 132 SMs (fewer on smaller devices, which then run several waves).
const LOOKBACK_FILL: usize = 1 << 17;

/// Steps per chunk of a look-back pass over `lanes` invocation-wide walks of `t` steps: the
/// power of two from 32 to 256 that brings the invocations (lanes x chunks) nearest
/// [`LOOKBACK_FILL`] from above. Longer chunks cost fewer look-backs and flag words; shorter
/// ones more parallelism. `ENGINE_LOOKBACK_STEPS` (a power of two from 8 to 1024) overrides
/// it, for measuring.
pub fn lookback_steps(lanes: usize, t: usize) -> usize {
    // Read once per process: plans are made on every scan call.
    static FORCED: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let forced = FORCED.get_or_init(|| {
        std::env::var("ENGINE_LOOKBACK_STEPS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|v| v.is_power_of_two() && (8..=1024).contains(v))
    });
    if let Some(len) = *forced {
        return len;
    }
    let per_lane = LOOKBACK_FILL.div_ceil(lanes.max(1));
    let len = t.div_ceil(per_lane).max(1).next_power_of_two();
    len.clamp(32, 256)
}

/// The look-back walk for `lanes` walks of `t` steps when `strategy` asks for one, `device`
/// offers it and its flag words ([`lookback_words`]) fit one
/// storage binding; `None` otherwise (the caller picks with [`walk`]). `Auto` does not pick it:
/// on the H200 it measured slower than the lane walks and chunked passes
/// (`benches/results/h200.md`, 2026-12-02).
pub(crate) fn lookback(strategy: Strategy, lanes: usize, width: usize, t: usize, device: &DeviceInfo) -> Option<Walk> {
    if strategy != Strategy::LookBack || t == 0 || !lookback_offered(device) {
        return None;
    }
    let len = lookback_steps(lanes, t);
    let count = t.div_ceil(len);
    let bytes = lookback_words(lanes * width, count).saturating_mul(4) as u64;
    (bytes <= device.max_storage_binding).then_some(Walk::LookBack { len, count, width })
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

/// Picks the walk for `invocations` independent lane walks of `t` steps costing `cost` on
/// `device`.
///
/// Lane-sequential when the lanes alone fill the device (or T is too short to split);
/// otherwise chunked. "Fill" is a few thousand invocations on a GPU, a few hundred on a
/// software adapter, whose cores are few. A chunked walk reads the inputs twice (5 transfers
/// per element instead of 3 forward), so it pays only when the lane walks are too few to keep
/// the memory system busy. (The channel scans keep 8 to 16 steps' loads in flight per walk,
/// software pipelined: 8192 one-channel walks hold 0.5-1 MB, a quarter of what HBM needs, but
/// the threshold is shared with the matrix scans, whose walks load far more per step.) On a
/// software adapter the chunked carry walk stays inside the loop limit too: at most
/// `LOOP_BUDGET / cost.carry` chunks (longer chunks, or lane walks when a chunk would pass a
/// segment).
pub(crate) fn walk(strategy: Strategy, invocations: usize, t: usize, cost: Cost, device: &DeviceInfo) -> Walk {
    let p = walk_steps(strategy, invocations, t, cost.step, device);
    let max_chunks = (LOOP_BUDGET / cost.carry.max(1)).max(1);
    match p {
        Walk::Chunked { count, .. } if device.is_software() && count > max_chunks => {
            let len = t.div_ceil(max_chunks);
            let segment = max_segment(device, cost.step);
            if len <= segment {
                Walk::Chunked {
                    len,
                    count: t.div_ceil(len),
                }
            } else {
                Walk::Lanes { segment }
            }
        }
        p => p,
    }
}

/// [`walk`] for steps costing `step` loop trips, with no more chunks than a segment's steps.
fn walk_steps(strategy: Strategy, invocations: usize, t: usize, step: usize, device: &DeviceInfo) -> Walk {
    let segment = max_segment(device, step);
    let chunked = |chunk: Option<usize>| {
        // Within the loop budget both ways: no chunk longer than a segment, and no more
        // chunks than a segment's steps for the carry walk.
        let len = chunk
            .unwrap_or_else(|| auto_chunk(t))
            .clamp(1, t.max(1))
            .min(segment)
            .max(t.div_ceil(segment));
        Walk::Chunked {
            len,
            count: t.div_ceil(len),
        }
    };
    match strategy {
        Strategy::Lanes => Walk::Lanes { segment },
        Strategy::Chunked { chunk } => chunked(chunk),
        Strategy::Auto | Strategy::LookBack | Strategy::Tuned => {
            let fill = if device.is_software() { 256 } else { 8192 };
            if invocations >= fill || t < 4 * auto_chunk(t) {
                Walk::Lanes { segment }
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

    fn device(kind: DeviceKind, backend: wgpu::Backend, max_storage_binding: u64) -> DeviceInfo {
        DeviceInfo {
            kind,
            backend,
            max_storage_binding,
            ..DeviceInfo::cpu()
        }
    }

    #[test]
    fn lookback_is_planned_only_when_asked_offered_and_its_words_fit() {
        let gib = 1 << 30;
        let vulkan = device(DeviceKind::Gpu, wgpu::Backend::Vulkan, gib);
        let forced = Strategy::LookBack;
        // Chunks of 32 steps at few lanes; longer ones (to 256) as the lanes grow.
        assert_eq!(
            lookback(forced, 600, 1, 4099, &vulkan),
            Some(Walk::LookBack {
                len: 32,
                count: 129,
                width: 1
            })
        );
        assert_eq!(
            lookback(forced, 1, 4, 32, &vulkan),
            Some(Walk::LookBack {
                len: 32,
                count: 1,
                width: 4
            })
        );
        assert_eq!(
            lookback(forced, 16 * 1024, 4, 4096, &vulkan),
            Some(Walk::LookBack {
                len: 256,
                count: 16,
                width: 4
            })
        );
        // Not picked by the other strategies, nor at T = 0.
        for s in [Strategy::Auto, Strategy::Lanes, Strategy::Chunked { chunk: None }] {
            assert_eq!(lookback(s, 600, 1, 4099, &vulkan), None);
        }
        assert_eq!(lookback(forced, 600, 1, 0, &vulkan), None);
        // Offered on every adapter (the fallback needs no forward-progress guarantee), not on
        // the CPU context.
        for (kind, backend, offered) in [
            (DeviceKind::Gpu, wgpu::Backend::Dx12, true),
            (DeviceKind::Gpu, wgpu::Backend::Gl, true),
            (DeviceKind::Gpu, wgpu::Backend::Metal, true),
            (DeviceKind::Gpu, wgpu::Backend::BrowserWebGpu, true),
            (DeviceKind::Software, wgpu::Backend::Vulkan, true),
            (DeviceKind::Software, wgpu::Backend::Gl, true),
            (DeviceKind::Software, wgpu::Backend::BrowserWebGpu, true),
            (DeviceKind::CpuReference, wgpu::Backend::Noop, false),
        ] {
            let d = device(kind, backend, gib);
            assert_eq!(
                lookback(forced, 64, 1, 100, &d).is_some(),
                offered,
                "{kind:?} {backend:?}"
            );
        }
        // The flag words must fit one binding: 1 + 3 x 4 chunks x 64 lanes x 2 channels.
        let words = 1 + 3 * 4 * 64 * 2;
        assert!(lookback(
            forced,
            64,
            2,
            100,
            &device(DeviceKind::Gpu, wgpu::Backend::Vulkan, words * 4)
        )
        .is_some());
        assert!(lookback(
            forced,
            64,
            2,
            100,
            &device(DeviceKind::Gpu, wgpu::Backend::Vulkan, words * 4 - 1)
        )
        .is_none());
    }
}
