//! The K = V = 1 affine scan on the GPU (`linear_scan`, and `matrix_affine_scan` at k = v = 1):
//! h_t = a_t h_{t-1} + b_t per channel, through the one launch, both strategies.
//!
//! One invocation carries one channel (`shaders/scan/linear_scalar.wgsl`), or four adjacent
//! channels (`vec4` loads, `linear.wgsl`) when N divides into fours and the walks are so many
//! that a quarter of them still fill the device (`channel::vector_width`, the hand rule; the
//! tuner may measure another width faster, `channel::ChannelKernels::choose_width`); all walk
//! `shaders/scan/linear_walk.wgsl`, which keeps eight to sixteen steps' loads in flight ahead
//! of their dependent updates (software pipelined). `Strategy::LookBack` is one pass over
//! tiles of chunk steps x adjacent channels, a chunk an invocation, the carries passed on by
//! decoupled look-back (`shaders/recurrence/lookback.wgsl`). The backward is one reverse launch that
//! also writes dA = G_t h_{t-1} and dh0, so the adjoint is never read back for a separate dA
//! pass.
//!
//! F16 and BF16 (every tensor of a call in one dtype): the same kernels read through dtype
//! slots and keep the state in f32. An invocation writes whole packed words: four channels,
//! or two (`linear_pair.wgsl`) when N is even (`channel::dtype_width`). At odd N the
//! one-channel kernel writes f32 and the outputs are narrowed after (`Tensor::to_dtype`, one
//! invocation per output word), so each output is rounded once either way.

use super::channel::{ChannelBindings, ChannelCall, ChannelKernels};
use super::envelope::AffineDims;
use super::grads::ScanGrads;
use super::route::ScanOptions;
use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::Params;
use crate::recurrence::launch::passes;
use crate::recurrence::lookback::lookbacks;
use crate::tensor::Tensor;

/// The kernels by width, the look-back passes and the dtype slots (`channel::ChannelKernels`).
const KERNELS: ChannelKernels = ChannelKernels {
    vec4: passes!("scan/linear", "scan/linear.wgsl"),
    pair: passes!("scan/linear_pair", "scan/linear_pair.wgsl"),
    scalar: passes!("scan/linear_scalar", "scan/linear_scalar.wgsl"),
    lookback: lookbacks!(
        "scan/linear_lookback_quad.wgsl",
        "scan/linear_lookback_pair.wgsl",
        "scan/linear_lookback_scalar.wgsl"
    ),
    inputs: &["a", "x", "h0", "h"],
    outputs: &["out", "da", "dh0"],
};

/// H (B, T, N, 1, 1) from A, B (B, T, N, 1, 1) and h0 (B, N, 1, 1) or zeros.
pub(crate) fn forward(
    gpu: &Gpu,
    op: &'static str,
    d: &AffineDims,
    a: &Tensor,
    b: &Tensor,
    h0: Option<&Tensor>,
    opts: &ScanOptions,
) -> Result<Tensor> {
    Ok(launch(gpu, op, d, a, b, h0, None, opts, None)?.0)
}

/// dA, dB and dH0 from the forward's A, h0, output H and dL/dH.
#[allow(clippy::too_many_arguments)]
pub(crate) fn backward(
    gpu: &Gpu,
    op: &'static str,
    d: &AffineDims,
    a: &Tensor,
    h0: Option<&Tensor>,
    h: &Tensor,
    grad: &Tensor,
    opts: &ScanOptions,
) -> Result<ScanGrads> {
    let (db, da, dh0) = launch(gpu, op, d, a, grad, h0, Some(h), opts, None)?;
    Ok(ScanGrads { da, db, dh0 })
}

/// The forward over `x` = B (`h` None), or the adjoint over `x` = dL/dH (`h` Some(H)).
/// Returns (out, dA, dh0): H forward (dA and dh0 unused scratch), G = dB in reverse.
/// `width`: the channels per invocation, or `None` for the tuner's (or the hand rule's).
#[allow(clippy::too_many_arguments)]
fn launch(
    gpu: &Gpu,
    op: &'static str,
    d: &AffineDims,
    a: &Tensor,
    x: &Tensor,
    h0: Option<&Tensor>,
    h: Option<&Tensor>,
    opts: &ScanOptions,
    width: Option<usize>,
) -> Result<(Tensor, Tensor, Tensor)> {
    let reverse = h.is_some();
    let call = ChannelCall {
        gpu,
        op,
        dtype: a.dtype(),
        dims: (d.n, d.lanes(), d.t),
        reverse,
    };
    // Bindings: a, x, h0, h (H, read in reverse); out (H, or G = dB in reverse), dA, dh0.
    let has_h0 = u32::from(h0.is_some());
    let bind = ChannelBindings {
        first: a,
        inputs: [Some(x), h0, h],
        outputs: &[
            Some(d.h_shape().to_vec()),
            reverse.then(|| d.a_shape().to_vec()),
            reverse.then(|| d.h0_shape().to_vec()),
        ],
        tail: &|w| Params::new().usize(d.n / w).u32(has_h0),
    };
    let rerun = |o: &ScanOptions, w: Option<usize>| launch(gpu, op, d, a, x, h0, h, o, w).map(drop);
    let mut out = KERNELS.launch(&call, &bind, opts, width, &rerun)?.into_iter();
    match (out.next(), out.next(), out.next()) {
        (Some(h), Some(da), Some(dh0)) => Ok((h, da, dh0)),
        _ => Err(crate::error::Error::Gpu {
            context: op.to_string(),
            message: "the channel launch returned fewer outputs than bound".into(),
        }),
    }
}
