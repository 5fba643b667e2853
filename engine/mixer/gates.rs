//! The gate kernels of the materialising path: pre-activations (B, T, 2D) into each mixer's
//! scan-op inputs, and back (`shaders/mixer/*_gates*.wgsl`). GPU only: the CPU context runs
//! the whole mixer scan in the reference instead (see `super::scan`).

use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::{groups_1d, Binding, KernelDef, Params};
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

macro_rules! mixer_wgsl {
    ($($file:literal),+) => {
        concat!($(include_str!(concat!("../../shaders/mixer/", $file))),+)
    };
}
pub(crate) use mixer_wgsl;

const LOG: KernelDef = def(
    "mixer/log_gates",
    mixer_wgsl!("math.wgsl", "log_gates.wgsl"),
    "log_gates",
    FORWARD,
);
const LOG_GRAD: KernelDef = def(
    "mixer/log_gates_grad",
    mixer_wgsl!("math.wgsl", "log_gates_grad.wgsl"),
    "log_gates_grad",
    BACKWARD,
);
const SIGNED: KernelDef = def(
    "mixer/signed_gates",
    mixer_wgsl!("math.wgsl", "signed_gates.wgsl"),
    "signed_gates",
    FORWARD,
);
const SIGNED_GRAD: KernelDef = def(
    "mixer/signed_gates_grad",
    mixer_wgsl!("math.wgsl", "signed_gates_grad.wgsl"),
    "signed_gates_grad",
    BACKWARD,
);
const GIVENS: KernelDef = def(
    "mixer/givens_gates",
    mixer_wgsl!("math.wgsl", "givens.wgsl", "givens_gates.wgsl"),
    "givens_gates",
    FORWARD,
);
const GIVENS_GRAD: KernelDef = def(
    "mixer/givens_gates_grad",
    mixer_wgsl!("math.wgsl", "givens.wgsl", "givens_grad.wgsl", "givens_gates_grad.wgsl"),
    "givens_gates_grad",
    BACKWARD,
);

/// Workgroups for one invocation per item (64 per workgroup).
pub(crate) fn groups(items: usize) -> [u32; 3] {
    groups_1d(items.div_ceil(64) as u32)
}

/// (B, T, D) of a contiguous pre (B, T, 2D).
fn btd(pre: &Tensor) -> (usize, usize, usize) {
    let s = pre.shape();
    (s[0], s[1], s[2] / 2)
}

/// MinGRU: pre -> (log_coeffs (B, T, D), log_values (B, T + 1, D)) with log h0 a finite
/// stand-in for log 0.
pub(crate) fn log_gates(gpu: &Gpu, op: &'static str, pre: &Tensor) -> Result<(Tensor, Tensor)> {
    let (b, t, d) = btd(pre);
    let ctx = pre.context();
    let lc = Tensor::uninit(ctx, &[b, t, d], op)?;
    let lv = Tensor::uninit(ctx, &[b, t + 1, d], op)?;
    let total = lv.len();
    gpu.dispatch(
        &*gpu.kernel(&LOG, &[])?,
        &Params::new().usize(total).usize(d).usize(t),
        &[pre.gpu_buffer(op)?, lc.gpu_buffer(op)?, lv.gpu_buffer(op)?],
        groups(total),
    )?;
    Ok((lc, lv))
}

/// Backward of [`log_gates`]: d pre (B, T, 2D).
pub(crate) fn log_gates_grad(gpu: &Gpu, op: &'static str, pre: &Tensor, dlc: &Tensor, dlv: &Tensor) -> Result<Tensor> {
    let (b, t, d) = btd(pre);
    let dpre = Tensor::uninit(pre.context(), pre.shape(), op)?;
    let total = b * t * d;
    gpu.dispatch(
        &*gpu.kernel(&LOG_GRAD, &[])?,
        &Params::new().usize(total).usize(d).usize(t),
        &[
            pre.gpu_buffer(op)?,
            dlc.gpu_buffer(op)?,
            dlv.gpu_buffer(op)?,
            dpre.gpu_buffer(op)?,
        ],
        groups(total),
    )?;
    Ok(dpre)
}

/// SignedMinGRU: pre -> (a, b), each (B, T, D).
pub(crate) fn signed_gates(gpu: &Gpu, op: &'static str, pre: &Tensor) -> Result<(Tensor, Tensor)> {
    let (b, t, d) = btd(pre);
    let ctx = pre.context();
    let a = Tensor::uninit(ctx, &[b, t, d], op)?;
    let inj = Tensor::uninit(ctx, &[b, t, d], op)?;
    let total = a.len();
    gpu.dispatch(
        &*gpu.kernel(&SIGNED, &[])?,
        &Params::new().usize(total).usize(d),
        &[pre.gpu_buffer(op)?, a.gpu_buffer(op)?, inj.gpu_buffer(op)?],
        groups(total),
    )?;
    Ok((a, inj))
}

/// Backward of [`signed_gates`]: d pre (B, T, 2D).
pub(crate) fn signed_gates_grad(gpu: &Gpu, op: &'static str, pre: &Tensor, da: &Tensor, db: &Tensor) -> Result<Tensor> {
    let (b, t, d) = btd(pre);
    let dpre = Tensor::uninit(pre.context(), pre.shape(), op)?;
    let total = b * t * d;
    gpu.dispatch(
        &*gpu.kernel(&SIGNED_GRAD, &[])?,
        &Params::new().usize(total).usize(d),
        &[
            pre.gpu_buffer(op)?,
            da.gpu_buffer(op)?,
            db.gpu_buffer(op)?,
            dpre.gpu_buffer(op)?,
        ],
        groups(total),
    )?;
    Ok(dpre)
}

/// Rotation family: pre -> (A (B, T, N, k, k), B (B, T, N, k, 1)), every step's transition
/// materialised.
pub(crate) fn givens_gates(gpu: &Gpu, op: &'static str, pre: &Tensor, k: usize) -> Result<(Tensor, Tensor)> {
    let (b, t, d) = btd(pre);
    let n = d / k;
    let ctx = pre.context();
    let a = Tensor::uninit(ctx, &[b, t, n, k, k], op)?;
    let inj = Tensor::uninit(ctx, &[b, t, n, k, 1], op)?;
    let total = b * t * n;
    gpu.dispatch(
        &*gpu.kernel(&GIVENS, &[("K", k as f64)])?,
        &Params::new().usize(total).usize(n),
        &[pre.gpu_buffer(op)?, a.gpu_buffer(op)?, inj.gpu_buffer(op)?],
        groups(total),
    )?;
    Ok((a, inj))
}

/// Backward of [`givens_gates`]: dA (B, T, N, k, k), dB (B, T, N, k, 1) -> d pre (B, T, 2D).
pub(crate) fn givens_gates_grad(
    gpu: &Gpu,
    op: &'static str,
    pre: &Tensor,
    k: usize,
    da: &Tensor,
    db: &Tensor,
) -> Result<Tensor> {
    let (b, t, d) = btd(pre);
    let n = d / k;
    let dpre = Tensor::uninit(pre.context(), pre.shape(), op)?;
    let total = b * t * n;
    gpu.dispatch(
        &*gpu.kernel(&GIVENS_GRAD, &[("K", k as f64)])?,
        &Params::new().usize(total).usize(n),
        &[
            pre.gpu_buffer(op)?,
            da.gpu_buffer(op)?,
            db.gpu_buffer(op)?,
            dpre.gpu_buffer(op)?,
        ],
        groups(total),
    )?;
    Ok(dpre)
}
