//! Copies between views, one strided kernel for both `copy_into`, which writes into a view of
//! an existing buffer (the KV-cache append), and the strided copy behind
//! `Tensor::contiguous`, which writes a view into a fresh dense tensor. It comes in two forms
//! over one uniform and one index walk (`shaders/tensor/copy_view.wgsl`): four elements
//! at a time (`copy_into_vec4.wgsl`) where both views' rows are dense from a 16-byte boundary
//! and the last axis is a multiple of 4 or the only one (see `shape::vec4_reads`), one at a
//! time (`copy_into.wgsl`) otherwise.

use super::Tensor;
use crate::error::{Error, Result};
use crate::kernel::{push_dims, shader, KernelDef, Params};
use crate::shape::{check_rank, collapse, vec4_reads, Vec4Read};

const COPY_INTO: KernelDef = KernelDef::new("tensor/copy_into", shader!("tensor/copy_into.wgsl"), "copy_into");

const COPY_INTO_VEC4: KernelDef = KernelDef::new(
    "tensor/copy_into_vec4",
    shader!("tensor/copy_into_vec4.wgsl"),
    "copy_into_vec4",
);

/// `vec4`s each invocation of `copy_into_vec4` moves (its `PER`).
const VEC4_PER_INVOCATION: usize = 4;

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
    // Two invocations would share a packed word of a half dst: convert first (`to_dtype`).
    dst.expect_dtype(op, "dst", &[crate::shape::DType::F32])?;
    src.expect_dtype(op, "src", &[crate::shape::DType::F32])?;
    if dst.shape() != src.shape() {
        return Err(Error::mismatch(op, "dst", dst.shape(), "src", src.shape()));
    }
    // Nothing to write: an empty view's strides (0 along a longer axis) mean nothing.
    if dst.is_empty() {
        return Ok(());
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
    // Reading and writing one buffer in one dispatch is a usage conflict: copy src out first.
    let src = if std::ptr::eq(src.gpu_buffer(op)?, dst.gpu_buffer(op)?) {
        strided_copy(src)?
    } else {
        src.clone()
    };
    let (dims, strides) = collapse(dst.shape(), &[src.layout().strides.clone(), l.strides.clone()])?;
    check_rank(op, &dims)?;
    let params = Params::new()
        .usize(dst.len())
        .usize(dims.len())
        .usize(src.layout().offset)
        .usize(l.offset);
    let params = push_dims(push_dims(push_dims(params, &dims), &strides[0]), &strides[1]);
    let buffers = [src.gpu_buffer(op)?, dst.gpu_buffer(op)?];
    let offsets = [src.layout().offset, l.offset];
    let vec4 = vec4_reads(&dims, &strides, &offsets).is_some_and(|r| r.iter().all(|x| *x == Vec4Read::Vec4))
        && buffers.iter().all(|b| b.size() % 16 == 0);
    if vec4 {
        let kernel = gpu.kernel(&COPY_INTO_VEC4, &[])?;
        let invocations = dst.len().div_ceil(4).div_ceil(VEC4_PER_INVOCATION);
        gpu.dispatch_items(&kernel, &params, &buffers, invocations)
    } else {
        let kernel = gpu.kernel(&COPY_INTO, &[])?;
        gpu.dispatch_items(&kernel, &params, &buffers, dst.len())
    }
}
