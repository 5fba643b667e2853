//! The look-back protocol of the one-pass channel scans (`shaders/recurrence/lookback.wgsl`):
//! whether a device runs it, the walk it plans (`Walk::LookBack`: chunks of
//! [`lookback_steps`] steps), the `side` words it needs (a ticket, then each chunk's P, S and
//! inclusive carry per channel), the poll budget before its fallback (`SPIN`) and the test
//! hook that withholds the inclusive carries (`WITHHOLD`). A kernel that has look-back passes
//! brings them as `LookBacks`, one pair (clear, the pass) per width.
//!
//! Why a fallback: a look-back that has polled a predecessor `lookback_spin()` times computes
//! that chunk's aggregate itself, so no workgroup waits on one that is not running and the
//! pass needs no forward-progress guarantee (WebGPU, Metal and OpenGL promise none).

use super::strategy::{Strategy, Walk};
use crate::context::DeviceInfo;

/// Whether `device` runs look-back passes: every GPU adapter, the browser's included, and
/// the software adapters. The fallback of `shaders/recurrence/lookback.wgsl` (a look-back that
/// waits too long computes the predecessor's aggregate itself) needs no promise that a
/// running workgroup progresses while another spins, so Metal, OpenGL and WebGPU qualify
/// as well as Vulkan and DX12. Not the CPU context, which has no kernels.
pub(crate) fn lookback_offered(device: &DeviceInfo) -> bool {
    device.kind != crate::context::DeviceKind::CpuReference
}

/// Polls of a predecessor before a look-back computes that chunk itself (`SPIN` in
/// `shaders/recurrence/lookback.wgsl`). Hardware Vulkan and DX12 adapters (desktop GPUs, whose
/// running workgroups progress while another spins, as CUDA's look-back scans rely on): 2^20,
/// the fallback for starvation only. Software adapters (and an adapter of unknown kind, which
/// may be one): 64, since Mesa ends an invocation's loops after 65535 trips in all.
/// Elsewhere (Metal, OpenGL, WebGPU, which promise nothing): 1024, a few microseconds' wait
/// before the work is done twice.
pub(crate) fn lookback_spin(device: &DeviceInfo) -> u32 {
    match device.kind {
        crate::context::DeviceKind::Gpu if matches!(device.backend, wgpu::Backend::Vulkan | wgpu::Backend::Dx12) => {
            1 << 20
        }
        crate::context::DeviceKind::Software | crate::context::DeviceKind::Unknown => 64,
        _ => 1024,
    }
}

/// Whether the look-back passes withhold their inclusive carries ([`withhold_lookback_carries`]).
static WITHHOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A test hook, process-wide: while on, the look-back's chunks after the first publish their
/// aggregates but not their inclusive carries (`WITHHOLD` in `shaders/recurrence/lookback.wgsl`),
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
/// ticket, then each chunk's P, S and inclusive carry per channel (`shaders/recurrence/lookback.wgsl`).
pub(crate) fn lookback_words(channels: usize, count: usize) -> usize {
    1 + 3 * count * channels
}

/// Invocations a look-back pass aims for: about 2^17, a wave of 64 warps on each of an
/// H200's 132 SMs (fewer on smaller devices, which then run several waves).
const LOOKBACK_FILL: usize = 1 << 17;

/// Steps per chunk of a look-back pass over `lanes` invocation-wide walks of `t` steps: the
/// power of two from 32 to 256 that brings the invocations (lanes x chunks) nearest
/// `LOOKBACK_FILL` from above. Longer chunks cost fewer look-backs and flag words; shorter
/// ones more parallelism. `ENGINE_LOOKBACK_STEPS` (a power of two from 8 to 1024) overrides
/// it, for measuring.
pub fn lookback_steps(lanes: usize, t: usize) -> usize {
    // Read once per process: plans are made on every scan call.
    static FORCED: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let forced = FORCED.get_or_init(|| {
        crate::context::forced::forced("ENGINE_LOOKBACK_STEPS", "a power of two from 8 to 1024", |v| {
            v.parse::<usize>()
                .ok()
                .filter(|v| v.is_power_of_two() && (8..=1024).contains(v))
        })
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
/// storage binding; `None` otherwise (the caller picks with [`walk`](super::strategy::walk)). `Auto` does not pick it:
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

/// A channel scan's look-back passes (clear, then the one pass) by width: four, two and one
/// channel an invocation.
pub(crate) type LookBacks = [[crate::kernel::KernelDef; 2]; 3];

/// The [`LookBacks`] of the look-back kernels `$vec4`, `$vec2` and `$scalar` (shader table
/// paths, as a `.widths` description generates them: `scan/linear_lookback_vec4.wgsl`; entry
/// points `scan_lookback_clear` and `scan_lookback`).
macro_rules! lookbacks {
    ($vec4:tt, $vec2:tt, $scalar:tt) => {
        [
            $crate::recurrence::lookback::lookbacks!(@one $vec4),
            $crate::recurrence::lookback::lookbacks!(@one $vec2),
            $crate::recurrence::lookback::lookbacks!(@one $scalar),
        ]
    };
    (@one $file:tt) => {
        [
            $crate::kernel::KernelDef::new($file, $crate::kernel::shader!($file), "scan_lookback_clear"),
            $crate::kernel::KernelDef::new($file, $crate::kernel::shader!($file), "scan_lookback"),
        ]
    };
}
pub(crate) use lookbacks;

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
    fn an_adapter_of_unknown_kind_spins_as_a_software_one() {
        // Issue 41, finding 1 (with the walks' limits in `strategy`'s tests).
        let binding = DeviceInfo::cpu().max_storage_binding;
        let software = device(DeviceKind::Software, wgpu::Backend::Vulkan, binding);
        for backend in [wgpu::Backend::BrowserWebGpu, wgpu::Backend::Vulkan, wgpu::Backend::Gl] {
            let unknown = device(DeviceKind::Unknown, backend, binding);
            assert_eq!(lookback_spin(&unknown), lookback_spin(&software), "{backend:?}");
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
            (DeviceKind::Unknown, wgpu::Backend::BrowserWebGpu, true),
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
