//! `parallel_scan_log`: the minGRU scan in log space, h_t = exp(z_t) with
//! z_t = logaddexp(lc_t + z_{t-1}, lv_{t+1}) and z_{-1} = lv_0; equivalently
//! exp(a* + logcumsumexp(log_values - a*))[:, 1:] with a* the zero-padded cumsum of the log
//! coefficients. The backward is its own adjoint kernel (no recompute through the reference).
//!
//! F16 and BF16 as in `linear_gpu`: every tensor of a call in one dtype, read through the
//! kernels' dtype slots, f32 state, outputs in the inputs' dtype written as whole packed words
//! (four or two channels per invocation), or at odd D written f32 and narrowed after.

use super::channel::{ChannelBindings, ChannelCall, ChannelKernels};
use super::envelope;
use super::route::{self, from_host_as, host_widened, ScanOptions};
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::kernel::Params;
use crate::recurrence::launch::passes;
use crate::recurrence::lookback::lookbacks;
use crate::reference;
use crate::tensor::Tensor;

const OP: &str = "parallel_scan_log";
const OP_BACKWARD: &str = "parallel_scan_log_backward";

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

/// Gradients of [`parallel_scan_log`].
#[derive(Clone, Debug)]
pub struct LogScanGrads {
    /// dL/d log_coeffs (B, T, D).
    pub d_log_coeffs: Tensor,
    /// dL/d log_values (B, T + 1, D).
    pub d_log_values: Tensor,
}

/// (B, T, D) from log_coeffs (B, T, D) and log_values (B, T + 1, D).
fn dims(op: &'static str, lc: &Tensor, lv: &Tensor) -> Result<(usize, usize, usize)> {
    envelope::rank(op, "log_coeffs", lc, 3, "(B, T, D)")?;
    envelope::rank(op, "log_values", lv, 3, "(B, T + 1, D)")?;
    let s = lc.shape();
    let (b, t, d) = (s[0], s[1], s[2]);
    if lv.shape() != [b, t + 1, d] {
        return Err(Error::shape(
            op,
            "log_values",
            format!("[{b}, {}, {d}] (B, T + 1, D) for log_coeffs {s:?}", t + 1),
            lv.shape(),
        ));
    }
    envelope::nonempty_time(op, "log_coeffs", lc, t)?;
    lv.expect_context(lc.context(), op, "log_values")?;
    envelope::one_dtype(
        op,
        &[("log_coeffs", Some(lc)), ("log_values", Some(lv))],
        &crate::DType::ALL,
    )?;
    Ok((b, t, d))
}

/// log_coeffs (B, T, D), log_values (B, T + 1, D) whose step 0 is log h0 -> h (B, T, D).
pub fn parallel_scan_log(log_coeffs: &Tensor, log_values: &Tensor) -> Result<Tensor> {
    parallel_scan_log_with(log_coeffs, log_values, &ScanOptions::default())
}

/// [`parallel_scan_log`] with an explicit route and strategy.
pub fn parallel_scan_log_with(log_coeffs: &Tensor, log_values: &Tensor, opts: &ScanOptions) -> Result<Tensor> {
    let dims = dims(OP, log_coeffs, log_values)?;
    let ctx = log_coeffs.context();
    route::run(
        OP,
        ctx,
        opts,
        |gpu| Ok(launch(gpu, OP, dims, log_coeffs, log_values, None, opts, None)?.0),
        || {
            let (lc, lv) = (host_widened(log_coeffs, OP)?, host_widened(log_values, OP)?);
            let h = reference::scan::parallel_scan_log(&lc.view(), &lv.view())?;
            from_host_as(ctx, h, log_coeffs.dtype())
        },
    )
}

/// Gradients of [`parallel_scan_log`] from its inputs, its output h (B, T, D) and dL/dh
/// (B, T, D): d log_coeffs (B, T, D), d log_values (B, T + 1, D).
pub fn parallel_scan_log_backward(
    log_coeffs: &Tensor,
    log_values: &Tensor,
    h: &Tensor,
    grad_h: &Tensor,
) -> Result<LogScanGrads> {
    parallel_scan_log_backward_with(log_coeffs, log_values, h, grad_h, &ScanOptions::default())
}

/// [`parallel_scan_log_backward`] with an explicit route and strategy.
pub fn parallel_scan_log_backward_with(
    log_coeffs: &Tensor,
    log_values: &Tensor,
    h: &Tensor,
    grad_h: &Tensor,
    opts: &ScanOptions,
) -> Result<LogScanGrads> {
    let op = OP_BACKWARD;
    let dims = dims(op, log_coeffs, log_values)?;
    let shape = log_coeffs.shape();
    envelope::exact(op, "h", h, shape, "(B, T, D), the forward output for these log_coeffs")?;
    envelope::exact(op, "grad_h", grad_h, shape, "(B, T, D), the shape of h")?;
    h.expect_context(log_coeffs.context(), op, "h")?;
    grad_h.expect_context(log_coeffs.context(), op, "grad_h")?;
    let dtype = envelope::one_dtype(
        op,
        &[
            ("log_coeffs", Some(log_coeffs)),
            ("h", Some(h)),
            ("grad_h", Some(grad_h)),
        ],
        &crate::DType::ALL,
    )?;
    let ctx = log_coeffs.context();
    route::run(
        op,
        ctx,
        opts,
        |gpu| {
            let (d_log_coeffs, d_log_values) =
                launch(gpu, op, dims, log_coeffs, log_values, Some((h, grad_h)), opts, None)?;
            Ok(LogScanGrads {
                d_log_coeffs,
                d_log_values,
            })
        },
        || {
            let (lc, lv, h, g) = (
                host_widened(log_coeffs, op)?,
                host_widened(log_values, op)?,
                host_widened(h, op)?,
                host_widened(grad_h, op)?,
            );
            let (dlc, dlv) = reference::scan::parallel_scan_log_backward(&lc.view(), &lv.view(), &h.view(), &g.view())?;
            Ok(LogScanGrads {
                d_log_coeffs: from_host_as(ctx, dlc, dtype)?,
                d_log_values: from_host_as(ctx, dlv, dtype)?,
            })
        },
    )
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
