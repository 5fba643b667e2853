//! The K = V = 1 affine scan on the GPU (`linear_scan`, and `matrix_affine_scan` at k = v = 1):
//! h_t = a_t h_{t-1} + b_t per channel, through the one launch, both strategies.
//!
//! One invocation carries one channel (`shaders/scan/linear_scalar.wgsl`), or four adjacent
//! channels (`vec4` loads, `linear.wgsl`) when N divides into fours and the walks are so many
//! that a quarter of them still fill the device (`launch::vector_width`); both walk
//! `shaders/scan/linear_walk.wgsl`, which keeps eight to sixteen steps' loads in flight ahead
//! of their dependent updates (software pipelined). The backward is one reverse launch that also writes dA = G_t h_{t-1} and dh0, so
//! the adjoint is never read back for a separate dA pass.

use super::affine::ScanGrads;
use super::dispatch::ScanOptions;
use super::envelope::AffineDims;
use super::launch::{passes, vector_width, Columns, Launch, Passes};
use super::strategy::Cost;
use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::Params;
use crate::tensor::Tensor;

const PASSES_VEC4: Passes = passes!("scan/linear", "scan/linear.wgsl");
const PASSES_SCALAR: Passes = passes!("scan/linear_scalar", "scan/linear_scalar.wgsl");

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
    Ok(launch(gpu, op, d, a, b, h0, None, opts)?.0)
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
    let (db, da, dh0) = launch(gpu, op, d, a, grad, h0, Some(h), opts)?;
    Ok(ScanGrads { da, db, dh0 })
}

/// The forward over `x` = B (`h` None), or the adjoint over `x` = dL/dH (`h` Some(H)).
/// Returns (out, dA, dh0): H forward (dA and dh0 unused scratch), G = dB in reverse.
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
) -> Result<(Tensor, Tensor, Tensor)> {
    let ctx = a.context();
    let (a, x) = (a.contiguous()?, x.contiguous()?);
    let h0 = h0.map(|t| t.contiguous()).transpose()?;
    let h = h.map(|t| t.contiguous()).transpose()?;
    let reverse = h.is_some();
    let w = vector_width(d.n, d.lanes());
    let lanes = d.lanes() / w;
    let out = Tensor::uninit(ctx, &d.h_shape(), op)?;
    // Bindings a direction does not use get a scratch of one F value.
    let (da, dh0) = if reverse {
        (
            Tensor::uninit(ctx, &d.a_shape(), op)?,
            Tensor::uninit(ctx, &d.h0_shape(), op)?,
        )
    } else {
        (Tensor::uninit(ctx, &[w], op)?, Tensor::uninit(ctx, &[w], op)?)
    };
    let columns = Columns { walk: 1, reduce: 1 };
    let launch = Launch::new(gpu, opts.strategy, lanes, d.t, reverse, columns, Cost::block(1));
    let side = match launch.chunks() {
        Some((_, chunks)) => Tensor::uninit(ctx, &[chunks * 2 * lanes * w], op)?,
        None => Tensor::uninit(ctx, &[w], op)?,
    };
    // An absent h0, and H in the forward, bind A again: read-only aliases the kernel ignores.
    let a_buf = a.gpu_buffer(op)?;
    let buffers = [
        a_buf,
        x.gpu_buffer(op)?,
        h0.as_ref().map(|t| t.gpu_buffer(op)).transpose()?.unwrap_or(a_buf),
        h.as_ref().map(|t| t.gpu_buffer(op)).transpose()?.unwrap_or(a_buf),
        out.gpu_buffer(op)?,
        da.gpu_buffer(op)?,
        side.gpu_buffer(op)?,
        dh0.gpu_buffer(op)?,
    ];
    let tail = Params::new().usize(d.n / w).u32(h0.is_some() as u32);
    let passes = if w == 4 { &PASSES_VEC4 } else { &PASSES_SCALAR };
    let constants = [("REVERSE", if reverse { 1.0 } else { 0.0 })];
    launch.run_passes(gpu, passes, &constants, &tail, &buffers)?;
    Ok((out, da, dh0))
}
