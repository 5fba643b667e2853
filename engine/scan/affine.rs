//! The affine scan seam shared by `linear_scan` (k = v = 1), `matrix_scan` (k = 2, v = 1)
//! and `matrix_affine_scan`: each public op's argument checks and layouts ([`AffineOp`]),
//! mapped onto the 5-d core A (B, T, N, k, k), B / H (B, T, N, k, v), h0 (B, N, k, v), and
//! the one route (`seam`) to the GPU kernels or the f64 reference, forward and backward. On the GPU
//! k = v = 1 runs the channel-wise kernels (`linear_gpu`), the rest the k x v kernels
//! (`affine_gpu`).

use super::affine_gpu::{backward_da_gpu, narrowed, scan_gpu, Scan};
use super::envelope::{self, AffineDims};
use super::grads::{Adjoint, ScanGrads};
use super::linear_gpu;
use super::padded;
use super::route::{self, from_host_as, host_widened, host_widened_opt, ScanOptions};
use crate::context::Gpu;
use crate::error::Result;
use crate::reference;
use crate::tensor::Tensor;

/// A public affine scan (`linear_scan`, `matrix_scan`, `matrix_affine_scan`): its names, its
/// own shape check and layouts, from which [`forward_op`] and [`backward_op`] check its
/// arguments and map them onto the 5-d core and back.
pub(crate) struct AffineOp {
    pub op: &'static str,
    pub op_backward: &'static str,
    /// The injections' name ("b" / "B") and the output's ("h" / "H").
    pub b_name: &'static str,
    pub h_name: &'static str,
    /// The op's shape check of A against b (forward) or h (backward): its dims.
    pub dims: fn(&'static str, &Tensor, &'static str, &Tensor) -> Result<AffineDims>,
    /// The op's own h0 shape for its dims, e.g. (B, D) for `linear_scan`.
    pub h0_shape: fn(&AffineDims) -> Vec<usize>,
    /// The layouts errors name: h0's, and dL/dh's (the output's).
    pub h0_layout: &'static str,
    pub h_layout: &'static str,
}

/// `t` in `shape`: itself when it already has it (a view stays a view), else reshaped.
fn as_shape(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if t.shape() == shape {
        Ok(t.clone())
    } else {
        t.reshape(shape)
    }
}

/// `s`'s forward from its own arguments: checks them, scans, and returns h in b's shape.
pub(crate) fn forward_op(
    s: &AffineOp,
    a: &Tensor,
    b: &Tensor,
    h0: Option<&Tensor>,
    opts: &ScanOptions,
) -> Result<Tensor> {
    let a_name = if s.b_name == "b" { "a" } else { "A" };
    envelope::one_dtype(
        s.op,
        &[(a_name, Some(a)), (s.b_name, Some(b)), ("h0", h0)],
        &crate::DType::ALL,
    )?;
    let d = (s.dims)(s.op, a, s.b_name, b)?;
    b.expect_context(a.context(), s.op, s.b_name)?;
    if let Some(h0) = h0 {
        envelope::exact(s.op, "h0", h0, &(s.h0_shape)(&d), s.h0_layout)?;
        h0.expect_context(a.context(), s.op, "h0")?;
    }
    let h0 = h0.map(|t| as_shape(t, &d.h0_shape())).transpose()?;
    let h = forward(
        s.op,
        d,
        &as_shape(a, &d.a_shape())?,
        &as_shape(b, &d.h_shape())?,
        h0.as_ref(),
        opts,
    )?;
    as_shape(&h, b.shape())
}

/// `s`'s backward from its own arguments (`args` in the op's shapes, not yet the core's):
/// checks them and returns the gradients in the shapes of a, b (= h) and h0.
pub(crate) fn backward_op(s: &AffineOp, args: Adjoint<'_>, opts: &ScanOptions) -> Result<ScanGrads> {
    let Adjoint { a, h0, h, grad: grad_h } = args;
    let a_name = if s.b_name == "b" { "a" } else { "A" };
    envelope::one_dtype(
        s.op_backward,
        &[
            (a_name, Some(a)),
            (s.h_name, Some(h)),
            ("grad_h", Some(grad_h)),
            ("h0", h0),
        ],
        &crate::DType::ALL,
    )?;
    let d = (s.dims)(s.op_backward, a, s.h_name, h)?;
    let h0_shape = (s.h0_shape)(&d);
    envelope::backward_args(
        s.op_backward,
        a,
        s.h_name,
        h,
        grad_h,
        s.h_layout,
        h0,
        &h0_shape,
        s.h0_layout,
    )?;
    let h0 = h0.map(|t| as_shape(t, &d.h0_shape())).transpose()?;
    let adj = Adjoint {
        a: &as_shape(a, &d.a_shape())?,
        h0: h0.as_ref(),
        h: &as_shape(h, &d.h_shape())?,
        grad: &as_shape(grad_h, &d.h_shape())?,
    };
    let g = backward(s.op_backward, d, adj, opts)?;
    Ok(ScanGrads {
        da: as_shape(&g.da, a.shape())?,
        db: as_shape(&g.db, h.shape())?,
        dh0: as_shape(&g.dh0, &h0_shape)?,
    })
}

/// The seam's one route for a call of dims `d` on A's context, forward or backward: on the
/// GPU, a v the kernels are not specialised for runs zero-padded to the next (`on_padded`,
/// handed the padded dims; exact, `scan::padded`), any other checks its block sizes and runs
/// `on_kernels`; on the CPU context (or as the route says), `on_host`, the f64 reference.
fn seam<R>(
    op: &'static str,
    d: &AffineDims,
    a: &Tensor,
    opts: &ScanOptions,
    on_padded: impl FnOnce(&Gpu, AffineDims) -> Result<R>,
    on_kernels: impl FnOnce(&Gpu) -> Result<R>,
    on_host: impl FnOnce() -> Result<R>,
) -> Result<R> {
    let gpu = |gpu: &Gpu| match padded::padded_dims(d) {
        Some(p) => on_padded(gpu, p),
        None => {
            envelope::gpu_block_sizes(op, d)?;
            on_kernels(gpu)
        }
    };
    route::run(op, a.context(), opts, gpu, on_host)
}

/// Forward through the seam: H (B, T, N, k, v).
pub(crate) fn forward(
    op: &'static str,
    d: AffineDims,
    a: &Tensor,
    b: &Tensor,
    h0: Option<&Tensor>,
    opts: &ScanOptions,
) -> Result<Tensor> {
    seam(
        op,
        &d,
        a,
        opts,
        |_, p| {
            let h0 = h0.map(|h| padded::pad(h, p.k, p.v)).transpose()?;
            let (a_f32, b_p) = (padded::widened(a)?, padded::pad(b, p.k, p.v)?);
            let h = forward(op, p, &a_f32, &b_p, h0.as_ref(), opts)?;
            narrowed(padded::unpad(&h, d.k, d.v)?, a.dtype())
        },
        |gpu| {
            let s = Scan {
                gpu,
                op,
                d: &d,
                a,
                x: b,
                h0,
                reverse: false,
            };
            match (d.k, d.v) {
                (1, 1) => linear_gpu::forward(s, opts),
                _ => narrowed(scan_gpu(s, opts)?.0, a.dtype()),
            }
        },
        || {
            let (ctx, dtype) = (a.context(), a.dtype());
            let (a, b, h0) = (host_widened(a, op)?, host_widened(b, op)?, host_widened_opt(h0, op)?);
            let h = reference::scan::matrix_affine_scan(&a.view(), &b.view(), h0.as_ref().map(|x| x.view()).as_ref())?;
            from_host_as(ctx, h, dtype)
        },
    )
}

/// Backward through the seam.
pub(crate) fn backward(op: &'static str, d: AffineDims, adj: Adjoint<'_>, opts: &ScanOptions) -> Result<ScanGrads> {
    let Adjoint { a, h0, h, grad } = adj;
    seam(
        op,
        &d,
        a,
        opts,
        |gpu, p| padded::backward(gpu, op, &d, &p, adj, opts),
        |gpu| match (d.k, d.v) {
            (1, 1) => linear_gpu::backward(gpu, op, &d, adj, opts),
            _ => {
                let s = Scan {
                    gpu,
                    op,
                    d: &d,
                    a,
                    x: grad,
                    h0: None,
                    reverse: true,
                };
                let (db, dh0) = scan_gpu(s, opts)?;
                let da = backward_da_gpu(gpu, op, &d, &db, h, h0)?;
                let dtype = a.dtype();
                Ok(ScanGrads {
                    da: narrowed(da, dtype)?,
                    db: narrowed(db, dtype)?,
                    dh0: narrowed(dh0, dtype)?,
                })
            }
        },
        || {
            let (ctx, dtype) = (a.context(), a.dtype());
            let (a, h0, h, g) = (
                host_widened(a, op)?,
                host_widened_opt(h0, op)?,
                host_widened(h, op)?,
                host_widened(grad, op)?,
            );
            let (da, db, dh0) = reference::scan::matrix_affine_scan_backward(
                &a.view(),
                h0.as_ref().map(|x| x.view()).as_ref(),
                &h.view(),
                &g.view(),
            )?;
            Ok(ScanGrads {
                da: from_host_as(ctx, da, dtype)?,
                db: from_host_as(ctx, db, dtype)?,
                dh0: from_host_as(ctx, dh0, dtype)?,
            })
        },
    )
}
