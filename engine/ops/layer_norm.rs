//! Layer norm over the last axis, one workgroup per row (`shaders/ops/layer_norm.wgsl`), and
//! its backward in one launch (`shaders/ops/layer_norm_backward.wgsl`).

use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::ops::matmul::{linear_parts, linear_residual};
use crate::ops::softmax::rows_cols;
use crate::reference;
use crate::shape::DType;
use crate::tensor::Tensor;

const LAYER_NORM: KernelDef = KernelDef::new("ops/layer_norm", shader!("ops/layer_norm.wgsl"), "layer_norm");

const LAYER_NORM_BACKWARD: KernelDef = KernelDef::new(
    "ops/layer_norm_backward",
    shader!("ops/layer_norm_backward.wgsl"),
    "layer_norm_backward",
);

const RESIDUAL_LAYER_NORM: KernelDef = KernelDef::new(
    "ops/residual_layer_norm",
    shader!("ops/residual_layer_norm.wgsl"),
    "residual_layer_norm",
);

/// `(x - mean) / sqrt(var + eps) * gamma + beta` over the last axis (biased variance; GPT-2
/// uses eps = 1e-5). x (..., n) F32, gamma (n,), beta (n,) F32, F16 or BF16 -> (..., n) F32.
pub fn layer_norm(x: &Tensor, gamma: &Tensor, beta: &Tensor, eps: f32) -> Result<Tensor> {
    let op = "layer_norm";
    x.expect_dtype(op, "x", &[DType::F32])?;
    let (rows, cols) = rows_cols(op, x)?;
    let ctx = x.context();
    gamma.expect_context(ctx, op, "gamma")?;
    beta.expect_context(ctx, op, "beta")?;
    for (name, t) in [("gamma", gamma), ("beta", beta)] {
        if t.shape() != [cols] {
            return Err(Error::shape(
                op,
                name,
                format!("[{cols}] (the last axis of x {:?})", x.shape()),
                t.shape(),
            ));
        }
    }
    if !(eps >= 0.0 && eps.is_finite()) {
        return Err(Error::value(op, "eps", "a finite value >= 0", eps));
    }
    let Some(gpu) = ctx.gpu() else {
        let (g, b) = (gamma.host_widened(op)?, beta.host_widened(op)?);
        return Tensor::from_host(
            ctx,
            reference::nn::layer_norm(&x.host(op)?.view(), &g.view(), &b.view(), eps)?,
        );
    };
    let (x, gamma, beta) = (x.contiguous()?, gamma.contiguous()?, beta.contiguous()?);
    let out = Tensor::uninit(ctx, x.shape(), op)?;
    if rows == 0 {
        return Ok(out);
    }
    let params = Params::new().usize(rows).usize(cols).f32(eps);
    let kernel = gpu.typed_kernel(&LAYER_NORM, &[("gamma", gamma.dtype()), ("beta", beta.dtype())], &[])?;
    let buffers = [
        x.gpu_buffer(op)?,
        gamma.typed_buffer(op)?,
        beta.typed_buffer(op)?,
        out.gpu_buffer(op)?,
    ];
    gpu.dispatch(&kernel, &params, &buffers, groups_1d(rows as u32))?;
    Ok(out)
}

/// The backward of [`layer_norm`] from dL/dy `g`: (dx, g xhat), where xhat = (x - mean) rstd
/// is the normalised input, so dL/dgamma is the column sums of g xhat and dL/dbeta those of
/// g. With dxhat = g gamma, dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)) per row.
/// One launch on a GPU, the moments recomputed as the forward computes them; f64 rows on the
/// CPU context. x, g (..., n) F32, gamma (n,) F32, F16 or BF16 -> two (..., n) F32.
pub fn layer_norm_backward(x: &Tensor, gamma: &Tensor, g: &Tensor, eps: f32) -> Result<(Tensor, Tensor)> {
    norm_backward("layer_norm_backward", x, gamma, g, eps, false)
}

/// [`layer_norm_backward`], or with `rms` the RMS norm's (`ops::rms_norm_backward`): one
/// kernel for both (`RMS`, an override constant), `op` naming the caller in errors.
pub(crate) fn norm_backward(
    op: &'static str,
    x: &Tensor,
    gamma: &Tensor,
    g: &Tensor,
    eps: f32,
    rms: bool,
) -> Result<(Tensor, Tensor)> {
    let arg = if rms { "weight" } else { "gamma" };
    x.expect_dtype(op, "x", &[DType::F32])?;
    g.expect_dtype(op, "g", &[DType::F32])?;
    let (rows, cols) = rows_cols(op, x)?;
    let ctx = x.context();
    gamma.expect_context(ctx, op, arg)?;
    g.expect_context(ctx, op, "g")?;
    if gamma.shape() != [cols] {
        return Err(Error::shape(
            op,
            arg,
            format!("[{cols}] (the last axis of x {:?})", x.shape()),
            gamma.shape(),
        ));
    }
    if g.shape() != x.shape() {
        return Err(Error::mismatch(op, "x", x.shape(), "g", g.shape()));
    }
    if !(eps >= 0.0 && eps.is_finite()) {
        return Err(Error::value(op, "eps", "a finite value >= 0", eps));
    }
    let Some(gpu) = ctx.gpu() else {
        let (dx, gxhat) = reference::nn::norm_backward(
            &x.host(op)?.view(),
            &gamma.host_widened(op)?.view(),
            &g.host(op)?.view(),
            eps,
            rms,
        )?;
        return Ok((Tensor::from_host(ctx, dx)?, Tensor::from_host(ctx, gxhat)?));
    };
    let (x, gamma, g) = (x.contiguous()?, gamma.contiguous()?, g.contiguous()?);
    let dx = Tensor::uninit(ctx, x.shape(), op)?;
    let gxhat = Tensor::uninit(ctx, x.shape(), op)?;
    if rows == 0 {
        return Ok((dx, gxhat));
    }
    let params = Params::new().usize(rows).usize(cols).f32(eps);
    let constants = [("RMS", if rms { 1.0 } else { 0.0 })];
    let kernel = gpu.typed_kernel(&LAYER_NORM_BACKWARD, &[("gamma", gamma.dtype())], &constants)?;
    let buffers = [
        x.gpu_buffer(op)?,
        gamma.typed_buffer(op)?,
        g.gpu_buffer(op)?,
        dx.gpu_buffer(op)?,
        gxhat.gpu_buffer(op)?,
    ];
    gpu.dispatch(&kernel, &params, &buffers, groups_1d(rows as u32))?;
    Ok((dx, gxhat))
}

/// A transformer block's projection, residual add and the next layer norm in two dispatches:
/// `y = residual + x @ w + bias` and `layer_norm(y, gamma, beta, eps)`, returned as (y, h).
/// x (M, K), w (K, N), bias, gamma, beta (N,), residual (M, N) dense -> two (M, N). The
/// product's partial sums over K-slices go straight to the norm's kernel
/// (`residual_layer_norm.wgsl`), which sums them, adds the bias and the residual, and
/// normalises each row; y and h are [`linear_residual`] followed by [`layer_norm`], up to
/// the order of the sums (the slices are added eight at a time).
pub fn linear_residual_layer_norm(
    x: &Tensor,
    w: &Tensor,
    bias: &Tensor,
    residual: &Tensor,
    gamma: &Tensor,
    beta: &Tensor,
    eps: f32,
) -> Result<(Tensor, Tensor)> {
    let op = "linear_residual_layer_norm";
    let ctx = x.context();
    for (name, t) in [
        ("w", w),
        ("bias", bias),
        ("residual", residual),
        ("gamma", gamma),
        ("beta", beta),
    ] {
        t.expect_context(ctx, op, name)?;
    }
    // w may be half (the product reads it through its dtype slot); the fused norm reads f32.
    for (name, t) in [
        ("x", x),
        ("bias", bias),
        ("residual", residual),
        ("gamma", gamma),
        ("beta", beta),
    ] {
        t.expect_dtype(op, name, &[DType::F32])?;
    }
    // The kernel reads vec4s: C and every offset a multiple of 4.
    let vec4 = |t: &Tensor| t.layout().is_dense() && t.layout().offset.is_multiple_of(4);
    let fused = ctx.is_gpu()
        && x.rank() == 2
        && w.rank() == 2
        && w.shape()[1].is_multiple_of(4)
        && [bias, gamma, beta, residual].iter().all(|t| vec4(t));
    if !fused {
        // The CPU context, odd widths and unaligned views: the two ops.
        let y = linear_residual(x, w, bias, residual)?;
        let h = layer_norm(&y, gamma, beta, eps)?;
        return Ok((y, h));
    }
    let (m, n) = (x.shape()[0], w.shape()[1]);
    if residual.shape() != [m, n] {
        return Err(Error::shape(
            op,
            "residual",
            format!("[{m}, {n}] like x @ w"),
            residual.shape(),
        ));
    }
    for (name, t) in [("bias", bias), ("gamma", gamma), ("beta", beta)] {
        if t.shape() != [n] {
            return Err(Error::shape(
                op,
                name,
                format!("[{n}] (N of w {:?})", w.shape()),
                t.shape(),
            ));
        }
    }
    if !(eps >= 0.0 && eps.is_finite()) {
        return Err(Error::value(op, "eps", "a finite value >= 0", eps));
    }
    let parts = linear_parts(op, x, w)?; // (S, M, N)
    let gpu = ctx.require_gpu(op)?;
    let y = Tensor::uninit(ctx, &[m, n], op)?;
    let h = Tensor::uninit(ctx, &[m, n], op)?;
    if m == 0 || n == 0 {
        return Ok((y, h));
    }
    let params = Params::new()
        .usize(m)
        .usize(n)
        .usize(parts.shape()[0])
        .f32(eps)
        .usize(bias.layout().offset / 4)
        .usize(residual.layout().offset / 4)
        .usize(gamma.layout().offset / 4)
        .usize(beta.layout().offset / 4);
    let buffers = [
        parts.gpu_buffer(op)?,
        bias.gpu_buffer(op)?,
        residual.gpu_buffer(op)?,
        gamma.gpu_buffer(op)?,
        beta.gpu_buffer(op)?,
        y.gpu_buffer(op)?,
        h.gpu_buffer(op)?,
    ];
    let kernel = gpu.kernel(&RESIDUAL_LAYER_NORM, &[])?;
    gpu.dispatch(&kernel, &params, &buffers, groups_1d(m as u32))?;
    Ok((y, h))
}
