//! Walk plans: how a recurrence walks T on the GPU, one lane per (batch, block, column)
//! walking all of T, or chunked in T (chunk-local scans, a scan of the chunk carries, a
//! fix-up pass), or in one look-back pass (`super::lookback`).
//!
//! Lane-sequential reads each input once and keeps the prefix in registers: the right choice
//! when the lanes alone fill the device. Chunked reads the inputs twice but multiplies the
//! parallelism by the number of chunks: the right choice for few lanes and long T. Look-back
//! (kernels that have it: the channel scans) is one pass over tiles of chunk steps x
//! adjacent channels, each chunk's carry passed on by decoupled look-back with a fallback
//! (`shaders/recurrence/lookback.wgsl`): the parallelism of chunks with one read of each input from
//! memory, on every adapter (the fallback needs no forward-progress guarantee).
//!
//! On software adapters a walk also has a loop budget (`Cost`, `max_segment`): lane walks
//! are split into segments and chunked carry walks capped. The launch (`recurrence::launch`,
//! which imports this file and never the reverse) turns the `Walk` into dispatches for
//! every recurrence kernel.

use crate::context::DeviceInfo;

/// The strategy a caller asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Chosen from the lane count, T and the device (`walk`).
    #[default]
    Auto,
    /// One invocation per (batch, block, column) walks all of T.
    Lanes,
    /// Chunks of `chunk` steps (`None`: a length chosen from T).
    Chunked {
        /// Steps per chunk.
        chunk: Option<usize>,
    },
    /// One pass over chunks of [`lookback_steps`](super::lookback::lookback_steps) steps whose carries pass by decoupled
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

/// Loop trips one invocation may make on a software adapter: under gallivm's 65535 with room.
pub(crate) const LOOP_BUDGET: usize = 60_000;

/// The loop trips a walk costs one invocation: per step, and per chunk of the chunked carry
/// walk. Only loop-limited adapters count them (see [`max_segment`]).
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
/// so it stopped after step 3640 of 4099. On those adapters, and on one of unknown kind
/// (`DeviceInfo::loop_limited`), the walks are split into segments that stay well under the
/// limit; on hardware there is no such limit.
pub(crate) fn max_segment(device: &DeviceInfo, step: usize) -> usize {
    if device.loop_limited() {
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
        Walk::Chunked { count, .. } if device.loop_limited() && count > max_chunks => {
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

    fn device(kind: DeviceKind, backend: wgpu::Backend) -> DeviceInfo {
        DeviceInfo {
            kind,
            backend,
            ..DeviceInfo::cpu()
        }
    }

    #[test]
    fn an_adapter_of_unknown_kind_gets_the_software_limits() {
        // Issue 41, finding 1: a context that cannot tell what its adapter is walks as on
        // lavapipe (segments and chunk counts under Mesa's loop limit), not as on hardware.
        let software = device(DeviceKind::Software, wgpu::Backend::Vulkan);
        let hardware = device(DeviceKind::Gpu, wgpu::Backend::Vulkan);
        for backend in [wgpu::Backend::BrowserWebGpu, wgpu::Backend::Vulkan, wgpu::Backend::Gl] {
            let unknown = device(DeviceKind::Unknown, backend);
            assert!(unknown.loop_limited() && !unknown.is_software());
            assert_eq!(max_segment(&unknown, 8), LOOP_BUDGET / 8);
            // A channel scan's costs, and the fused mixer's at k = 16 (a carry walk dearer
            // than a step, so `walk` lengthens the chunks).
            let mixer = Cost { step: 68, carry: 288 };
            for (strategy, t, cost) in [
                (Strategy::Lanes, 600_000, Cost::block(1)),
                (Strategy::Chunked { chunk: Some(1) }, 600_000, Cost::block(1)),
                (Strategy::Chunked { chunk: Some(4) }, 70_001, Cost::block(1)),
                (Strategy::Chunked { chunk: Some(16) }, 4001, mixer),
            ] {
                let got = walk(strategy, 2, t, cost, &unknown);
                assert_eq!(got, walk(strategy, 2, t, cost, &software), "{strategy:?} T = {t}");
                assert_ne!(got, walk(strategy, 2, t, cost, &hardware), "{strategy:?} T = {t}");
            }
        }
        assert_eq!(max_segment(&hardware, 8), usize::MAX);
        assert!(!hardware.loop_limited() && !DeviceInfo::cpu().loop_limited());
    }
}
