//! `parallel_scan_log` on the GPU: its kernels by width and its one launch through
//! `channel::ChannelKernels::launch`, forward and adjoint.
//!
//! F16 and BF16 as in `linear_gpu`: every tensor of a call in one dtype, read through the
//! kernels' dtype slots, f32 state, outputs in the inputs' dtype written as whole packed words
//! (four or two channels per invocation), or at odd D written f32 and narrowed after.

use super::channel::{ChannelBindings, ChannelCall, ChannelKernels};
use super::route::ScanOptions;
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Params;
use crate::recurrence::launch::passes;
use crate::recurrence::lookback::lookbacks;
use crate::tensor::Tensor;

/// The kernels: one channel per invocation, four adjacent ones (vec4 loads) when D % 4 == 0
/// and B x D walks are enough that a quarter of them fill the device, or two for a half
/// dtype at even D (`channel::dtype_width`); all walk the same WGSL (`shaders/scan/log_walk.wgsl`).
/// `Strategy::LookBack`: one pass over tiles of chunk steps x adjacent channels
/// (`shaders/recurrence/lookback.wgsl`).
const KERNELS: ChannelKernels = ChannelKernels {
    vec4: passes!("scan/parallel_scan_log", "scan/parallel_scan_log.wgsl"),
    pair: passes!("scan/parallel_scan_log_pair", "scan/parallel_scan_log_pair.wgsl"),
    scalar: passes!("scan/parallel_scan_log_scalar", "scan/parallel_scan_log_scalar.wgsl"),
    lookback: lookbacks!(
        "scan/parallel_scan_log_lookback_quad.wgsl",
        "scan/parallel_scan_log_lookback_pair.wgsl",
        "scan/parallel_scan_log_lookback_scalar.wgsl"
    ),
    inputs: &["lc", "lv", "g", "h"],
    outputs: &["out", "out2"],
};

/// h (B, T, D) from log_coeffs (B, T, D) and log_values (B, T + 1, D); `dims` = (B, T, D).
pub(crate) fn forward(
    gpu: &Gpu,
    op: &'static str,
    dims: (usize, usize, usize),
    lc: &Tensor,
    lv: &Tensor,
    opts: &ScanOptions,
) -> Result<Tensor> {
    Ok(launch(gpu, op, dims, lc, lv, None, opts, None)?.0)
}

/// (d log_coeffs (B, T, D), d log_values (B, T + 1, D)) from the inputs, the forward's h and
/// dL/dh (B, T, D).
#[allow(clippy::too_many_arguments)]
pub(crate) fn backward(
    gpu: &Gpu,
    op: &'static str,
    dims: (usize, usize, usize),
    lc: &Tensor,
    lv: &Tensor,
    h: &Tensor,
    grad_h: &Tensor,
    opts: &ScanOptions,
) -> Result<(Tensor, Tensor)> {
    launch(gpu, op, dims, lc, lv, Some((h, grad_h)), opts, None)
}

/// Records the forward (`backward` None: returns (h, unused)) or the adjoint (`backward`
/// Some((h, dL/dh)): returns (d log_coeffs, d log_values)) with the planned strategy.
/// `width`: the channels per invocation, or `None` for the tuner's (or the hand rule's).
#[allow(clippy::too_many_arguments)]
fn launch(
    gpu: &Gpu,
    op: &'static str,
    (b, t, d): (usize, usize, usize),
    lc: &Tensor,
    lv: &Tensor,
    backward: Option<(&Tensor, &Tensor)>,
    opts: &ScanOptions,
    width: Option<usize>,
) -> Result<(Tensor, Tensor)> {
    let reverse = backward.is_some();
    let call = ChannelCall {
        gpu,
        op,
        dtype: lc.dtype(),
        dims: (d, b * d, t),
        reverse,
    };
    // Bindings: log_coeffs, log_values, g and h (read in reverse); out (h, or d log_coeffs
    // in reverse), out2 (d log_values, (B, T + 1, D), in reverse).
    let bind = ChannelBindings {
        first: lc,
        inputs: [Some(lv), backward.map(|(_, g)| g), backward.map(|(h, _)| h)],
        outputs: &[Some(vec![b, t, d]), reverse.then(|| vec![b, t + 1, d])],
        tail: &|w| Params::new().usize(d / w),
    };
    let rerun = |o: &ScanOptions, w: Option<usize>| launch(gpu, op, (b, t, d), lc, lv, backward, o, w).map(drop);
    let mut out = KERNELS.launch(&call, &bind, opts, width, &rerun)?.into_iter();
    match (out.next(), out.next()) {
        (Some(h), Some(out2)) => Ok((h, out2)),
        _ => Err(Error::Gpu {
            context: op.to_string(),
            message: "the channel launch returned fewer outputs than bound".into(),
        }),
    }
}
