//! The gate kernels of the materialising path: pre-activations (B, T, 2D) into each mixer's
//! scan-op inputs, and back (`shaders/mixer/*_gates*.wgsl`). GPU only: the CPU context runs
//! the whole mixer scan in the reference instead (see `super::scan`).

use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::{shader, Binding, KernelDef, Params};
use crate::recurrence::launch::groups;
use crate::tensor::Tensor;

const fn def(name: &'static str, wgsl: &'static str, entry: &'static str, bindings: &'static [Binding]) -> KernelDef {
    KernelDef {
        name,
        wgsl,
        entry,
        bindings,
    }
}

/// pre in, two outputs.
const FORWARD: &[Binding] = &[Binding::Uniform, Binding::Read, Binding::ReadWrite, Binding::ReadWrite];
/// pre and two gradients in, d pre out.
const BACKWARD: &[Binding] = &[
    Binding::Uniform,
    Binding::Read,
    Binding::Read,
    Binding::Read,
    Binding::ReadWrite,
];

const LOG: KernelDef = def("mixer/log_gates", shader!("mixer/log_gates.wgsl"), "log_gates", FORWARD);
const LOG_BACKWARD: KernelDef = def(
    "mixer/log_gates_backward",
    shader!("mixer/log_gates_backward.wgsl"),
    "log_gates_backward",
    BACKWARD,
);
const SIGNED: KernelDef = def(
    "mixer/signed_gates",
    shader!("mixer/signed_gates.wgsl"),
    "signed_gates",
    FORWARD,
);
const SIGNED_BACKWARD: KernelDef = def(
    "mixer/signed_gates_backward",
    shader!("mixer/signed_gates_backward.wgsl"),
    "signed_gates_backward",
    BACKWARD,
);
const GIVENS: KernelDef = def(
    "mixer/givens_gates",
    shader!("mixer/givens_gates.wgsl"),
    "givens_gates",
    FORWARD,
);
const GIVENS_BACKWARD: KernelDef = def(
    "mixer/givens_gates_backward",
    shader!("mixer/givens_gates_backward.wgsl"),
    "givens_gates_backward",
    BACKWARD,
);

/// (B, T, D) of a contiguous pre (B, T, 2D).
fn btd(pre: &Tensor) -> (usize, usize, usize) {
    let s = pre.shape();
    (s[0], s[1], s[2] / 2)
}

/// One launch of a forward gates kernel: pre in, two fresh outputs of the given shapes out,
/// `items` invocations.
fn two_outputs(
    gpu: &Gpu,
    op: &'static str,
    kernel: (&KernelDef, &[(&'static str, f64)]),
    params: Params,
    pre: &Tensor,
    shapes: [&[usize]; 2],
    items: usize,
) -> Result<(Tensor, Tensor)> {
    let ctx = pre.context();
    let (x, y) = (Tensor::uninit(ctx, shapes[0], op)?, Tensor::uninit(ctx, shapes[1], op)?);
    gpu.dispatch(
        &gpu.kernel(kernel.0, kernel.1)?,
        &params,
        &[pre.gpu_buffer(op)?, x.gpu_buffer(op)?, y.gpu_buffer(op)?],
        groups(items),
    )?;
    Ok((x, y))
}

/// One launch of a gates-backward kernel: pre and two gradients in, d pre (B, T, 2D) out,
/// `items` invocations.
fn pre_backward(
    gpu: &Gpu,
    op: &'static str,
    kernel: (&KernelDef, &[(&'static str, f64)]),
    params: Params,
    pre: &Tensor,
    grads: [&Tensor; 2],
    items: usize,
) -> Result<Tensor> {
    let dpre = Tensor::uninit(pre.context(), pre.shape(), op)?;
    gpu.dispatch(
        &gpu.kernel(kernel.0, kernel.1)?,
        &params,
        &[
            pre.gpu_buffer(op)?,
            grads[0].gpu_buffer(op)?,
            grads[1].gpu_buffer(op)?,
            dpre.gpu_buffer(op)?,
        ],
        groups(items),
    )?;
    Ok(dpre)
}

/// MinGRU: pre -> (log_coeffs (B, T, D), log_values (B, T + 1, D)) with log h0 a finite
/// stand-in for log 0. One invocation per element of log_values.
pub(crate) fn log_gates(gpu: &Gpu, op: &'static str, pre: &Tensor) -> Result<(Tensor, Tensor)> {
    let (b, t, d) = btd(pre);
    let total = b * (t + 1) * d;
    let params = Params::new().usize(total).usize(d).usize(t);
    two_outputs(gpu, op, (&LOG, &[]), params, pre, [&[b, t, d], &[b, t + 1, d]], total)
}

/// Backward of [`log_gates`]: d pre (B, T, 2D).
pub(crate) fn log_gates_backward(
    gpu: &Gpu,
    op: &'static str,
    pre: &Tensor,
    dlc: &Tensor,
    dlv: &Tensor,
) -> Result<Tensor> {
    let (b, t, d) = btd(pre);
    let total = b * t * d;
    let params = Params::new().usize(total).usize(d).usize(t);
    pre_backward(gpu, op, (&LOG_BACKWARD, &[]), params, pre, [dlc, dlv], total)
}

/// SignedMinGRU: pre -> (a, b), each (B, T, D).
pub(crate) fn signed_gates(gpu: &Gpu, op: &'static str, pre: &Tensor) -> Result<(Tensor, Tensor)> {
    let (b, t, d) = btd(pre);
    let total = b * t * d;
    let params = Params::new().usize(total).usize(d);
    two_outputs(gpu, op, (&SIGNED, &[]), params, pre, [&[b, t, d], &[b, t, d]], total)
}

/// Backward of [`signed_gates`]: d pre (B, T, 2D).
pub(crate) fn signed_gates_backward(
    gpu: &Gpu,
    op: &'static str,
    pre: &Tensor,
    da: &Tensor,
    db: &Tensor,
) -> Result<Tensor> {
    let (b, t, d) = btd(pre);
    let total = b * t * d;
    let params = Params::new().usize(total).usize(d);
    pre_backward(gpu, op, (&SIGNED_BACKWARD, &[]), params, pre, [da, db], total)
}

/// Rotation family: pre -> (A (B, T, N, k, k), B (B, T, N, k, 1)), every step's transition
/// materialised. One invocation per (b, t, n).
pub(crate) fn givens_gates(gpu: &Gpu, op: &'static str, pre: &Tensor, k: usize) -> Result<(Tensor, Tensor)> {
    let (b, t, d) = btd(pre);
    let n = d / k;
    let total = b * t * n;
    let params = Params::new().usize(total).usize(n);
    let kernel = (&GIVENS, &[("K", k as f64)][..]);
    two_outputs(
        gpu,
        op,
        kernel,
        params,
        pre,
        [&[b, t, n, k, k], &[b, t, n, k, 1]],
        total,
    )
}

/// Backward of [`givens_gates`]: dA (B, T, N, k, k), dB (B, T, N, k, 1) -> d pre (B, T, 2D).
pub(crate) fn givens_gates_backward(
    gpu: &Gpu,
    op: &'static str,
    pre: &Tensor,
    k: usize,
    da: &Tensor,
    db: &Tensor,
) -> Result<Tensor> {
    let (b, t, d) = btd(pre);
    let n = d / k;
    let total = b * t * n;
    let params = Params::new().usize(total).usize(n);
    pre_backward(
        gpu,
        op,
        (&GIVENS_BACKWARD, &[("K", k as f64)][..]),
        params,
        pre,
        [da, db],
        total,
    )
}
