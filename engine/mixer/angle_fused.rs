//! The angle-fused scan of the rotation-family mixers (`shaders/mixer/givens_scan*.wgsl`):
//! one kernel builds each step's transition lambda G from its angles in registers and walks
//! T, so no per-step (B, T, N, k, k) tensor exists in either direction. The backward
//! recomputes every step from the stored forward states (h_{t-1} is the forward's own output)
//! instead of undoing the recurrence by division.
//!
//! Both directions run through the one recurrence launch (`crate::recurrence::launch`), which
//! plans the [`Strategy`]: lanes (one invocation per (batch, block) walks T, in segments on
//! software adapters) or chunked (per-chunk k x k products and local states, a walk over the
//! chunk carries shared by both directions in `givens_walk.wgsl`, a fix-up pass), for few
//! lanes and long T.

use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::{shader, Binding, KernelDef, Params};
use crate::recurrence::launch::{Columns, Launch, Passes};
use crate::recurrence::strategy::{Cost, Strategy};
use crate::tensor::Tensor;

/// Both directions bind the uniform, pre and side first (`givens_walk.wgsl`).
const fn forward_kernel(entry: &'static str) -> KernelDef {
    KernelDef {
        name: "mixer/givens_scan",
        wgsl: shader!("mixer/givens_scan.wgsl"),
        entry,
        bindings: &[Binding::Uniform, Binding::Read, Binding::ReadWrite, Binding::ReadWrite],
    }
}

const fn backward_kernel(entry: &'static str) -> KernelDef {
    KernelDef {
        name: "mixer/givens_scan_backward",
        wgsl: shader!("mixer/givens_scan_backward.wgsl"),
        entry,
        bindings: &[
            Binding::Uniform,
            Binding::Read,
            Binding::ReadWrite,
            Binding::Read,
            Binding::ReadWrite,
            Binding::Read,
        ],
    }
}

const FORWARD: Passes = [
    forward_kernel("givens_scan"),
    forward_kernel("givens_chunk_reduce"),
    forward_kernel("givens_carries"),
    forward_kernel("givens_chunk_fixup"),
];
const BACKWARD: Passes = [
    backward_kernel("givens_scan_backward"),
    backward_kernel("givens_chunk_reduce_backward"),
    backward_kernel("givens_carries_backward"),
    backward_kernel("givens_chunk_fixup_backward"),
];

/// The launch over a contiguous pre (B, T, 2D) with blocks of k: one lane per (b, n), K + 1
/// product columns per chunk. A step costs about 4k loop trips forward and twice that
/// backward (planned as for a k- or 2k-block scan); the chunked carry walk k^2 + 2k per
/// chunk, not a step's few k.
fn launch(gpu: &Gpu, pre: &Tensor, k: usize, reverse: bool, strategy: Strategy) -> Launch {
    let s = pre.shape();
    let lanes = s[0] * (s[2] / 2 / k);
    let columns = Columns { walk: 1, reduce: k + 1 };
    let cost = Cost {
        step: Cost::block(if reverse { 2 * k } else { k }).step,
        carry: k * k + 2 * k,
    };
    Launch::new(gpu, strategy, lanes, s[1], reverse, columns, cost)
}

/// Records `launch` over blocks of k (N of them per batch row) with `passes`.
fn run(gpu: &Gpu, launch: &Launch, k: usize, n: usize, passes: &Passes, buffers: &[&wgpu::Buffer]) -> Result<()> {
    launch.run_passes(gpu, passes, &[], &[("K", k as f64)], &Params::new().usize(n), buffers)
}

/// Scratch for the launch: per-chunk products and states, or the backward lane walk's carry
/// between segments (the forward resumes from h).
fn side(launch: &Launch, k: usize, op: &'static str, pre: &Tensor) -> Result<Tensor> {
    let len = match launch.chunks() {
        Some((_, count)) => launch.lanes * count * (k + 1) * k,
        None if launch.reverse => launch.lanes * k,
        None => 1,
    };
    Tensor::uninit(pre.context(), &[len], op)
}

/// h (B, T, D) from a contiguous pre (B, T, 2D), blocks of k.
pub(crate) fn forward(gpu: &Gpu, op: &'static str, pre: &Tensor, k: usize, strategy: Strategy) -> Result<Tensor> {
    let launch = launch(gpu, pre, k, false, strategy);
    let n = pre.shape()[2] / 2 / k;
    let h = Tensor::uninit(pre.context(), &[pre.shape()[0], launch.t, n * k], op)?;
    let side = side(&launch, k, op, pre)?;
    let buffers = [pre.gpu_buffer(op)?, side.gpu_buffer(op)?, h.gpu_buffer(op)?];
    run(gpu, &launch, k, n, &FORWARD, &buffers)?;
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
    let launch = launch(gpu, pre, k, true, strategy);
    let n = pre.shape()[2] / 2 / k;
    let dpre = Tensor::uninit(pre.context(), pre.shape(), op)?;
    let side = side(&launch, k, op, pre)?;
    let buffers = [
        pre.gpu_buffer(op)?,
        side.gpu_buffer(op)?,
        h.gpu_buffer(op)?,
        dpre.gpu_buffer(op)?,
        dh.gpu_buffer(op)?,
    ];
    run(gpu, &launch, k, n, &BACKWARD, &buffers)?;
    Ok(dpre)
}
