//! Dtype conversion on the device (`shaders/tensor/convert.wgsl`): any view of any dtype into
//! a dense tensor of any dtype, behind [`Tensor::to_dtype`] and the `contiguous` of a half
//! view. On the CPU context the `half` crate does the same rounding on the host.

use super::{narrow, widen, Tensor};
use crate::error::Result;
use crate::kernel::{push_dims, shader, KernelDef, Params};
use crate::shape::DType;
use crate::shape::{check_rank, collapse, Layout};

const CONVERT: KernelDef = KernelDef::new("tensor/convert", shader!("tensor/convert.wgsl"), "convert");

/// x (...) of any dtype and view -> a dense (...) tensor of `dtype`.
pub(crate) fn convert(x: &Tensor, dtype: DType) -> Result<Tensor> {
    let op = "to_dtype";
    let ctx = x.context();
    let Some(gpu) = ctx.gpu() else {
        // Host values are exact values of x's dtype; rounding them is the conversion.
        let a = x.host_widened(op)?;
        let mut t = Tensor::from_host(
            ctx,
            a.mapv(|v| {
                if dtype.is_half() {
                    widen(dtype, narrow(dtype, v))
                } else {
                    v
                }
            }),
        )?;
        t.dtype = dtype;
        return Ok(t);
    };
    let out = Tensor::uninit_dtype(ctx, x.shape(), dtype, op)?;
    if x.is_empty() {
        return Ok(out);
    }
    let l: &Layout = x.layout();
    let (dims, strides) = collapse(&l.shape, std::slice::from_ref(&l.strides))?;
    check_rank(op, &dims)?;
    let words = dtype.words(x.len());
    let params = Params::new()
        .usize(x.len())
        .usize(dims.len())
        .usize(l.offset)
        .usize(words);
    let params = push_dims(push_dims(params, &dims), &strides[0]);
    let consts = [("SRC", f64::from(x.dtype.code())), ("DST", f64::from(dtype.code()))];
    let kernel = gpu.kernel(&CONVERT, &consts)?;
    gpu.dispatch_items(&kernel, &params, &[x.typed_buffer(op)?, out.typed_buffer(op)?], words)?;
    Ok(out)
}
