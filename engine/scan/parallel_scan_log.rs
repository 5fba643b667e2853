//! `parallel_scan_log`: the minGRU scan in log space, h_t = exp(z_t) with
//! z_t = logaddexp(lc_t + z_{t-1}, lv_{t+1}) and z_{-1} = lv_0; equivalently
//! exp(a* + logcumsumexp(log_values - a*))[:, 1:] with a* the zero-padded cumsum of the log
//! coefficients. The backward is its own adjoint kernel (no recompute through the reference).
//!
//! The GPU kernels and their launch are `log_gpu`'s.

use super::envelope;
use super::log_gpu;
use super::route::{self, from_host_as, host_widened, ScanOptions};
use crate::error::{Error, Result};
use crate::reference;
use crate::tensor::Tensor;

const OP: &str = "parallel_scan_log";
const OP_BACKWARD: &str = "parallel_scan_log_backward";

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
        |gpu| log_gpu::forward(gpu, OP, dims, log_coeffs, log_values, opts),
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
                log_gpu::backward(gpu, op, dims, log_coeffs, log_values, h, grad_h, opts)?;
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
