//! Copies between views: the strided copy that makes a view dense (the identity unary
//! kernel), and `copy_into`, which writes into a view of an existing buffer.

use crate::error::{Error, Result};
use crate::kernel::{groups_1d, Binding, KernelDef, Params};
use crate::ops::broadcast::{check_rank, collapse, push_dims};
use crate::ops::elementwise::{unary, Unary};
use crate::tensor::Tensor;

const COPY_INTO: KernelDef = KernelDef {
    name: "elementwise/copy_into",
    wgsl: include_str!("../../shaders/elementwise/copy_into.wgsl"),
    entry: "copy_into",
    bindings: &[Binding::Uniform, Binding::Read, Binding::ReadWrite],
};

/// A dense copy of any view. x (...) -> (...) contiguous from offset 0.
pub(crate) fn strided_copy(x: &Tensor) -> Result<Tensor> {
    unary(Unary::Identity, x)
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
    gpu.dispatch(
        &kernel,
        &params,
        &[src.gpu_buffer(op)?, dst.gpu_buffer(op)?],
        groups_1d(dst.len().div_ceil(256) as u32),
    )?;
    Ok(())
}
