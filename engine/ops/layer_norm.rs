//! Layer norm over the last axis, one workgroup per row (`shaders/reduce/layer_norm.wgsl`).

use crate::error::{Error, Result};
use crate::kernel::{groups_1d, Binding, KernelDef, Params};
use crate::ops::softmax::rows_cols;
use crate::reference;
use crate::tensor::Tensor;

const LAYER_NORM: KernelDef = KernelDef {
    name: "reduce/layer_norm",
    wgsl: concat!(
        include_str!("../../shaders/reduce/tree.wgsl"),
        include_str!("../../shaders/reduce/layer_norm.wgsl")
    ),
    entry: "layer_norm",
    bindings: &[
        Binding::Uniform,
        Binding::Read,
        Binding::Read,
        Binding::Read,
        Binding::ReadWrite,
    ],
};

/// `(x - mean) / sqrt(var + eps) * gamma + beta` over the last axis (biased variance; GPT-2
/// uses eps = 1e-5). x (..., n), gamma (n,), beta (n,) -> (..., n).
pub fn layer_norm(x: &Tensor, gamma: &Tensor, beta: &Tensor, eps: f32) -> Result<Tensor> {
    let op = "layer_norm";
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
        let (g, b) = (gamma.host(op)?, beta.host(op)?);
        return Tensor::from_host(
            ctx,
            reference::nn::layer_norm(&x.host(op)?.view(), &g.view(), &b.view(), eps),
        );
    };
    let (x, gamma, beta) = (x.contiguous()?, gamma.contiguous()?, beta.contiguous()?);
    let out = Tensor::uninit(ctx, x.shape(), op)?;
    if rows == 0 {
        return Ok(out);
    }
    let params = Params::new().usize(rows).usize(cols).f32(eps);
    let kernel = gpu.kernel(&LAYER_NORM, &[])?;
    let buffers = [
        x.gpu_buffer(op)?,
        gamma.gpu_buffer(op)?,
        beta.gpu_buffer(op)?,
        out.gpu_buffer(op)?,
    ];
    gpu.dispatch(&kernel, &params, &buffers, groups_1d(rows as u32))?;
    Ok(out)
}
