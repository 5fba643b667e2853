//! The angle-fused scan of the rotation-family mixers (`shaders/mixer/givens_scan*.wgsl`):
//! one kernel builds each step's transition lambda G from its angles in registers and walks
//! T, so no per-step (B, T, N, k, k) tensor exists in either direction. The backward
//! recomputes every step from the stored forward states (h_{t-1} is the forward's own output)
//! instead of undoing the recurrence by division.
//!
//! Two strategies, picked like the scans' ([`crate::scan::Strategy`]): lanes (one invocation
//! per (batch, block) walks all of T) and chunked (per-chunk k x k products and local states,
//! a walk over the chunk carries, a fix-up pass), for few lanes and long T.

use super::gates::{groups, mixer_wgsl};
use crate::context::DeviceInfo;
use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::{Binding, KernelDef, Params};
use crate::scan::strategy::{max_segment, plan, segments, Plan, Strategy, LOOP_BUDGET};
use crate::tensor::Tensor;

const fn forward_kernel(entry: &'static str) -> KernelDef {
    KernelDef {
        name: "mixer/givens_scan",
        wgsl: mixer_wgsl!("math.wgsl", "givens.wgsl", "givens_scan.wgsl"),
        entry,
        bindings: &[Binding::Uniform, Binding::Read, Binding::ReadWrite, Binding::ReadWrite],
    }
}

const fn backward_kernel(entry: &'static str) -> KernelDef {
    KernelDef {
        name: "mixer/givens_scan_backward",
        wgsl: mixer_wgsl!("math.wgsl", "givens.wgsl", "givens_backward.wgsl", "givens_scan_backward.wgsl"),
        entry,
        bindings: &[
            Binding::Uniform,
            Binding::Read,
            Binding::Read,
            Binding::Read,
            Binding::ReadWrite,
            Binding::ReadWrite,
        ],
    }
}

const LANES: KernelDef = forward_kernel("givens_scan");
const CHUNK_REDUCE: KernelDef = forward_kernel("givens_chunk_reduce");
const CARRIES: KernelDef = forward_kernel("givens_carries");
const CHUNK_FIXUP: KernelDef = forward_kernel("givens_chunk_fixup");
const LANES_BACKWARD: KernelDef = backward_kernel("givens_scan_backward");
const CHUNK_REDUCE_BACKWARD: KernelDef = backward_kernel("givens_chunk_reduce_backward");
const CARRIES_BACKWARD: KernelDef = backward_kernel("givens_carries_backward");
const CHUNK_FIXUP_BACKWARD: KernelDef = backward_kernel("givens_chunk_fixup_backward");

/// The scans' plan for `lanes` walks of `t` steps (`budget` loop trips per step, as for a
/// `budget`-block scan), with the chunked carry walk kept inside the software adapters' loop
/// limit too: it costs k^2 + 2k trips per chunk, not a step's few k.
fn fused_plan(strategy: Strategy, lanes: usize, t: usize, k: usize, budget: usize, info: &DeviceInfo) -> Plan {
    let p = plan(strategy, lanes, t, budget, info);
    let max_chunks = (LOOP_BUDGET / (k * k + 2 * k)).max(1);
    match p {
        Plan::Chunked { count, .. } if info.is_software() && count > max_chunks => {
            let len = t.div_ceil(max_chunks);
            let segment = max_segment(info, budget);
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

/// One direction's launches: `lanes` walks, or the three chunked passes.
struct Launch<'a> {
    gpu: &'a Gpu,
    k: usize,
    lanes: usize,
    n: usize,
    t: usize,
    reverse: bool,
}

impl<'a> Launch<'a> {
    /// The launches over a contiguous pre (B, T, 2D) with blocks of k: one lane per (b, n).
    fn new(gpu: &'a Gpu, pre: &Tensor, k: usize, reverse: bool) -> Self {
        let s = pre.shape();
        let n = s[2] / 2 / k;
        Launch {
            gpu,
            k,
            lanes: s[0] * n,
            n,
            t: s[1],
            reverse,
        }
    }

    fn run(&self, plan: Plan, buffers: &[&wgpu::Buffer], kernels: [&KernelDef; 4]) -> Result<()> {
        let gpu = self.gpu;
        let constants = [("K", self.k as f64)];
        let params = |begin: usize, end: usize, chunk: usize, chunks: usize| {
            Params::new()
                .usize(self.lanes)
                .usize(self.n)
                .usize(self.t)
                .usize(begin)
                .usize(end)
                .usize(chunk)
                .usize(chunks)
        };
        match plan {
            Plan::Lanes { segment } => {
                let kernel = gpu.kernel(kernels[0], &constants)?;
                for (begin, end) in segments(self.t, segment, self.reverse) {
                    gpu.dispatch(&kernel, &params(begin, end, 0, 1), buffers, groups(self.lanes))?;
                }
            }
            Plan::Chunked { len, count } => {
                let p = params(0, self.t, len, count);
                let per_chunk = self.lanes * count;
                let reduce = gpu.kernel(kernels[1], &constants)?;
                gpu.dispatch(&reduce, &p, buffers, groups(per_chunk * (self.k + 1)))?;
                gpu.dispatch(&gpu.kernel(kernels[2], &constants)?, &p, buffers, groups(self.lanes))?;
                gpu.dispatch(&gpu.kernel(kernels[3], &constants)?, &p, buffers, groups(per_chunk))?;
            }
        }
        Ok(())
    }

    /// Scratch for the plan: per-chunk products and states, or the lanes' segment carry.
    fn side(&self, plan: Plan, op: &'static str, pre: &Tensor) -> Result<Tensor> {
        let len = match plan {
            // The backward's segments pass their carry through side; the forward resumes from h.
            Plan::Lanes { .. } if self.reverse => self.lanes * self.k,
            Plan::Lanes { .. } => 1,
            Plan::Chunked { count, .. } => self.lanes * count * (self.k + 1) * self.k,
        };
        Tensor::uninit(pre.context(), &[len], op)
    }
}

/// h (B, T, D) from a contiguous pre (B, T, 2D), blocks of k.
pub(crate) fn forward(gpu: &Gpu, op: &'static str, pre: &Tensor, k: usize, strategy: Strategy) -> Result<Tensor> {
    let launch = Launch::new(gpu, pre, k, false);
    // About 4k loop trips per step (the budget `max_segment` assumes for a k-block scan).
    let plan = fused_plan(strategy, launch.lanes, launch.t, k, k, &gpu.info);
    let h = Tensor::uninit(pre.context(), &[pre.shape()[0], launch.t, launch.n * k], op)?;
    let side = launch.side(plan, op, pre)?;
    let buffers = [pre.gpu_buffer(op)?, h.gpu_buffer(op)?, side.gpu_buffer(op)?];
    launch.run(plan, &buffers, [&LANES, &CHUNK_REDUCE, &CARRIES, &CHUNK_FIXUP])?;
    Ok(h)
}

/// d pre (B, T, 2D) from pre, the forward's h (B, T, D) and dL/dh (B, T, D), all contiguous.
pub(crate) fn backward(
    gpu: &Gpu,
    op: &'static str,
    pre: &Tensor,
    k: usize,
    h: &Tensor,
    dh: &Tensor,
    strategy: Strategy,
) -> Result<Tensor> {
    let launch = Launch::new(gpu, pre, k, true);
    // About twice the forward's loop trips per step: plan as for a 2k block.
    let plan = fused_plan(strategy, launch.lanes, launch.t, k, 2 * k, &gpu.info);
    let dpre = Tensor::uninit(pre.context(), pre.shape(), op)?;
    let side = launch.side(plan, op, pre)?;
    let buffers = [
        pre.gpu_buffer(op)?,
        h.gpu_buffer(op)?,
        dh.gpu_buffer(op)?,
        dpre.gpu_buffer(op)?,
        side.gpu_buffer(op)?,
    ];
    launch.run(
        plan,
        &buffers,
        [&LANES_BACKWARD, &CHUNK_REDUCE_BACKWARD, &CARRIES_BACKWARD, &CHUNK_FIXUP_BACKWARD],
    )?;
    Ok(dpre)
}
