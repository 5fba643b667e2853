//! The angle-fused scan of the rotation-family mixers (`shaders/mixer/givens_scan*.wgsl`):
//! one kernel builds each step's transition lambda G from its angles in registers and walks
//! T, so no (B, T, N, k, k) tensor exists in either direction. The backward recomputes every
//! step from the stored forward states (h_{t-1} is the forward's own output) instead of
//! undoing the recurrence by division.

use super::gates::{groups, mixer_wgsl};
use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::{Binding, KernelDef, Params};
use crate::scan::strategy::max_segment;
use crate::tensor::Tensor;

const SCAN: KernelDef = KernelDef {
    name: "mixer/givens_scan",
    wgsl: mixer_wgsl!("math.wgsl", "givens.wgsl", "givens_scan.wgsl"),
    entry: "givens_scan",
    bindings: &[Binding::Uniform, Binding::Read, Binding::ReadWrite],
};

const SCAN_GRAD: KernelDef = KernelDef {
    name: "mixer/givens_scan_grad",
    wgsl: mixer_wgsl!("math.wgsl", "givens.wgsl", "givens_grad.wgsl", "givens_scan_grad.wgsl"),
    entry: "givens_scan_grad",
    bindings: &[
        Binding::Uniform,
        Binding::Read,
        Binding::Read,
        Binding::Read,
        Binding::ReadWrite,
        Binding::ReadWrite,
    ],
};

/// The `[begin, end)` pieces of T one dispatch walks (several only on software adapters,
/// whose loop limiter would otherwise cut long walks short; see `max_segment`).
fn segments(gpu: &Gpu, t: usize, loops_per_step: usize) -> Vec<(usize, usize)> {
    let len = max_segment(&gpu.info, loops_per_step).min(t).max(1);
    (0..t.div_ceil(len))
        .map(|i| (i * len, ((i + 1) * len).min(t)))
        .collect()
}

/// h (B, T, D) from a contiguous pre (B, T, 2D), blocks of k.
pub(crate) fn forward(gpu: &Gpu, op: &'static str, pre: &Tensor, k: usize) -> Result<Tensor> {
    let s = pre.shape();
    let (b, t, d) = (s[0], s[1], s[2] / 2);
    let n = d / k;
    let h = Tensor::uninit(pre.context(), &[b, t, d], op)?;
    let kernel = gpu.kernel(&SCAN, &[("K", k as f64)])?;
    for (begin, end) in segments(gpu, t, k) {
        gpu.dispatch(
            &kernel,
            &Params::new().usize(b * n).usize(n).usize(t).usize(begin).usize(end),
            &[pre.gpu_buffer(op)?, h.gpu_buffer(op)?],
            groups(b * n),
        )?;
    }
    Ok(h)
}

/// d pre (B, T, 2D) from pre, the forward's h (B, T, D) and dL/dh (B, T, D), all contiguous.
pub(crate) fn backward(gpu: &Gpu, op: &'static str, pre: &Tensor, k: usize, h: &Tensor, dh: &Tensor) -> Result<Tensor> {
    let s = pre.shape();
    let (b, t, d) = (s[0], s[1], s[2] / 2);
    let n = d / k;
    let ctx = pre.context();
    let dpre = Tensor::uninit(ctx, pre.shape(), op)?;
    let carry = Tensor::uninit(ctx, &[b, n, k], op)?;
    let kernel = gpu.kernel(&SCAN_GRAD, &[("K", k as f64)])?;
    for (begin, end) in segments(gpu, t, 2 * k).into_iter().rev() {
        gpu.dispatch(
            &kernel,
            &Params::new().usize(b * n).usize(n).usize(t).usize(begin).usize(end),
            &[
                pre.gpu_buffer(op)?,
                h.gpu_buffer(op)?,
                dh.gpu_buffer(op)?,
                dpre.gpu_buffer(op)?,
                carry.gpu_buffer(op)?,
            ],
            groups(b * n),
        )?;
    }
    Ok(dpre)
}
