//! Copies between views, one strided kernel (`shaders/elementwise/copy_into.wgsl`) for both:
//! `copy_into`, which writes into a view of an existing buffer (the KV-cache append), and the
//! strided copy behind `Tensor::contiguous`, which writes a view into a fresh dense tensor.

use super::Tensor;
use crate::error::{Error, Result};
use crate::kernel::{push_dims, shader, KernelDef, Params};
use crate::shape::{check_rank, collapse};

const COPY_INTO: KernelDef = KernelDef::new(
    "elementwise/copy_into",
    shader!("elementwise/copy_into.wgsl"),
    "copy_into",
);

/// A dense copy of any view. x (...) -> (...) contiguous from offset 0.
pub(crate) fn strided_copy(x: &Tensor) -> Result<Tensor> {
    let op = "contiguous";
    let ctx = x.context();
    if !ctx.is_gpu() {
        return Tensor::from_host(ctx, x.host(op)?);
    }
    let out = Tensor::uninit(ctx, x.shape(), op)?;
    copy_into(&out, x)?;
    Ok(out)
}

/// Writes `src` into the view `dst` (same shape) of a preallocated tensor, in place: every
/// tensor sharing dst's buffer sees the new values (the KV-cache append). dst must not
/// address one element twice (no stride-0 axis of size > 1). dst (...), src (...) -> ().
pub fn copy_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    let op = "copy_into";
    let ctx = dst.context();
    src.expect_context(ctx, op, "src")?;
    if dst.shape() != src.shape() {
        return Err(Error::mismatch(op, "dst", dst.shape(), "src", src.shape()));
    }
    let l = dst.layout();
    if l.shape.iter().zip(&l.strides).any(|(&n, &s)| n > 1 && s == 0) {
        return Err(Error::Unsupported {
            op,
            message: format!(
                "dst {:?} with strides {:?} writes one element more than once",
                l.shape, l.strides
            ),
        });
    }
    let Some(gpu) = ctx.gpu() else {
        return dst.host_write(&src.host(op)?.view(), op);
    };
    if dst.is_empty() {
        return Ok(());
    }
    // Reading and writing one buffer in one dispatch is a usage conflict: copy src out first.
    let src = if std::ptr::eq(src.gpu_buffer(op)?, dst.gpu_buffer(op)?) {
        strided_copy(src)?
    } else {
        src.clone()
    };
    let (dims, strides) = collapse(dst.shape(), &[src.layout().strides.clone(), l.strides.clone()]);
    check_rank(op, &dims)?;
    let params = Params::new()
        .usize(dst.len())
        .usize(dims.len())
        .usize(src.layout().offset)
        .usize(l.offset);
    let params = push_dims(push_dims(push_dims(params, &dims), &strides[0]), &strides[1]);
    let kernel = gpu.kernel(&COPY_INTO, &[])?;
    gpu.dispatch_items(&kernel, &params, &[src.gpu_buffer(op)?, dst.gpu_buffer(op)?], dst.len())?;
    Ok(())
}
