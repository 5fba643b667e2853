//! The window op: shift, slice or pad a tensor along one axis, for element-scan gradients.
//!
//! `out[.., t, ..] = x[.., t + offset, ..]` where that is inside x, else `fill[.., ..]` (the
//! initial state, for the "previous state" sequence) or zero. GPU: `shaders/element_scan/
//! window.wgsl`; CPU context: the same loop on host data.

use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, Binding, KernelDef, Params};
use crate::tensor::Tensor;

const OP: &str = "element_scan::window";

const WINDOW: KernelDef = KernelDef {
    name: "element_scan/window",
    wgsl: shader!("element_scan/window.wgsl"),
    entry: "window",
    bindings: &[Binding::Uniform, Binding::Read, Binding::Read, Binding::ReadWrite],
};

/// x (.., t_in, ..) -> (.., len, ..) along `axis`; fill has x's shape without `axis`.
pub(crate) fn window(x: &Tensor, fill: Option<&Tensor>, axis: usize, offset: isize, len: usize) -> Result<Tensor> {
    let ctx = x.context();
    let shape = x.shape();
    let t_in = shape[axis];
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let mut out_shape = shape.to_vec();
    out_shape[axis] = len;
    let Some(gpu) = ctx.gpu() else {
        let xs: Vec<f32> = x.host(OP)?.iter().copied().collect();
        let fs: Option<Vec<f32>> = fill
            .map(|f| f.host(OP).map(|a| a.iter().copied().collect()))
            .transpose()?;
        let mut out = Vec::with_capacity(outer * len * inner);
        for o in 0..outer {
            for t in 0..len {
                let src = t as isize + offset;
                for k in 0..inner {
                    out.push(if src >= 0 && (src as usize) < t_in {
                        xs[(o * t_in + src as usize) * inner + k]
                    } else {
                        fs.as_ref().map(|f| f[o * inner + k]).unwrap_or(0.0)
                    });
                }
            }
        }
        let a =
            ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&out_shape), out).map_err(|e| Error::Map(e.to_string()))?;
        return Tensor::from_host(ctx, a);
    };
    let x = x.contiguous()?;
    let fill = fill.map(|f| f.contiguous()).transpose()?;
    let out = Tensor::uninit(ctx, &out_shape, OP)?;
    if out.is_empty() {
        return Ok(out);
    }
    let kernel = gpu.kernel(&WINDOW, &[("HAS_FILL", fill.is_some() as u32 as f64)])?;
    let params = Params::new()
        .usize(out.len())
        .usize(len)
        .usize(t_in)
        .usize(inner)
        .i32(offset as i32);
    let xb = x.gpu_buffer(OP)?;
    let fb = match &fill {
        Some(f) => f.gpu_buffer(OP)?,
        None => xb,
    };
    gpu.dispatch(
        &kernel,
        &params,
        &[xb, fb, out.gpu_buffer(OP)?],
        groups_1d(out.len().div_ceil(256) as u32),
    )?;
    Ok(out)
}
