//! Tensors: a buffer of F32, F16 or BF16 elements ([`DType`]) on a context's device (or in
//! host memory on the CPU context) viewed through a shape, strides and an offset.
//!
//! F16 and BF16 tensors are stored packed, two elements per 32-bit word (see [`DType`]); on
//! the CPU context they hold their values widened to f32 (exactly). Views, offsets and
//! strides count elements whatever the dtype. Half-precision tensors go to the ops that read
//! them (matmul, linear, embedding, layer_norm, the GPT-2 decode kernels) and through
//! [`Tensor::to_dtype`]; every other op refuses them with [`Error::DType`].
//!
//! Creating a tensor from host data uploads it; reading it back (`to_vec`, `to_array`) is
//! the only point that waits for the device. Natively those block; `*_async` forms serve
//! wasm and native alike.
//!
//! This file holds the type, its metadata and its views (transpose, narrow, reshape, the
//! dense copy); `create` makes tensors (uploads, fills, the ops' outputs), `random` seeded
//! random ones, `read` reads them back, `write` overwrites one in place, `halves` widens and
//! narrows half-precision patterns on the host, `copy` is the strided copy, `convert` the
//! dtype conversion and `interop` the hand-off to raw wgpu. The methods that run ops
//! (`x.exp()`, `x.matmul(&w)`, ..) sit with the ops, in `ops/methods.rs`.
//!
//! ```
//! use wgsl_compute::{Context, Tensor};
//! let ctx = Context::cpu();
//! let t = Tensor::from_slice(&ctx, &[2, 3], &[1., 2., 3., 4., 5., 6.])?; // (2, 3)
//! let tt = t.transpose(0, 1)?;                                           // (3, 2), a view
//! assert!(!tt.is_contiguous());
//! assert_eq!(tt.to_vec()?, vec![1., 4., 2., 5., 3., 6.]);
//! assert_eq!(t.narrow(1, 1, 3)?.to_vec()?, vec![2., 3., 5., 6.]);        // columns 1..3
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

mod convert;
mod copy;
mod create;
mod halves;
mod interop;
mod random;
mod read;
mod write;

use std::sync::{Arc, RwLock};

use crate::context::pool::PooledBuffer;
use crate::shape::DType;
pub use crate::shape::{numel, Layout, MAX_ELEMENTS};
pub use copy::copy_into;
pub(crate) use create::host_vec;
pub(crate) use halves::{narrow, widen};

use crate::context::Context;
use crate::error::{Error, Result};

/// Where a tensor's elements live.
#[derive(Clone)]
pub(crate) enum Storage {
    Gpu(Arc<PooledBuffer>),
    /// Behind a lock so `ops::copy_into` can write into a view of a shared buffer. Half
    /// tensors keep their values widened (each exactly a value of their dtype).
    Cpu(Arc<RwLock<Vec<f32>>>),
}

/// A tensor: a shared buffer plus a view (shape, strides, offset) and an element type.
/// Cloning is cheap.
#[derive(Clone)]
pub struct Tensor {
    ctx: Context,
    layout: Layout,
    dtype: DType,
    storage: Storage,
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tensor{:?} {} on {:?}", self.layout.shape, self.dtype, self.ctx)
    }
}

impl Tensor {
    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Fails with [`Error::DType`] naming `op` and `arg` unless this tensor's dtype is one
    /// of `accepted`.
    pub fn expect_dtype(&self, op: &'static str, arg: &'static str, accepted: &[DType]) -> Result<()> {
        if accepted.contains(&self.dtype) {
            return Ok(());
        }
        let names: Vec<&str> = accepted.iter().map(|d| d.name()).collect();
        Err(Error::DType {
            op,
            arg,
            expected: names.join(" or "),
            actual: self.dtype.to_string(),
        })
    }

    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.layout.shape.len()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.layout.len()
    }

    /// True when some dimension is 0.
    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }

    /// The view: shape, strides and offset in elements.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The context this tensor lives on.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The device buffer (None on the CPU context).
    pub(crate) fn buffer(&self) -> Option<&wgpu::Buffer> {
        match &self.storage {
            Storage::Gpu(b) => Some(b.buffer()),
            Storage::Cpu(_) => None,
        }
    }

    /// How many tensors share this one's storage (views and clones count; 1 = only this).
    pub(crate) fn handles(&self) -> usize {
        match &self.storage {
            Storage::Gpu(b) => Arc::strong_count(b),
            Storage::Cpu(c) => Arc::strong_count(c),
        }
    }

    /// True when `self` and `other` may name one element: the same storage and overlapping
    /// spans (first to last element each view reaches). An empty view names none.
    pub(crate) fn overlaps(&self, other: &Tensor) -> bool {
        let same = match (&self.storage, &other.storage) {
            (Storage::Gpu(a), Storage::Gpu(b)) => Arc::ptr_eq(a, b),
            (Storage::Cpu(a), Storage::Cpu(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        let span = |l: &Layout| {
            let last = (l.shape.iter().zip(&l.strides)).fold(0usize, |a, (&n, &s)| {
                a.saturating_add(n.saturating_sub(1).saturating_mul(s))
            });
            (l.offset, l.offset.saturating_add(last))
        };
        let ((a0, a1), (b0, b1)) = (span(&self.layout), span(&other.layout));
        same && !self.is_empty() && !other.is_empty() && a0 <= b1 && b0 <= a1
    }

    /// The device buffer of a GPU f32 tensor, for kernels that read f32 words: a half
    /// tensor is refused here ([`Error::DType`]), the net under every op that does not take
    /// half inputs (most name the argument themselves first). An internal error off the GPU.
    pub(crate) fn gpu_buffer(&self, op: &'static str) -> Result<&wgpu::Buffer> {
        self.expect_dtype(op, "input", &[DType::F32])?;
        self.typed_buffer(op)
    }

    /// The device buffer of a GPU tensor of any dtype, for kernels that read its dtype (their
    /// `dtype` slots, `kernel::dtype`).
    pub(crate) fn typed_buffer(&self, op: &'static str) -> Result<&wgpu::Buffer> {
        self.buffer().ok_or_else(|| Error::Unsupported {
            op,
            message: "tensor is not on a GPU context".into(),
        })
    }

    /// Same buffer, another view.
    pub(crate) fn with_layout(&self, layout: Layout) -> Tensor {
        Tensor {
            ctx: self.ctx.clone(),
            layout,
            dtype: self.dtype,
            storage: self.storage.clone(),
        }
    }

    /// Fails unless this tensor lives on `ctx`.
    pub(crate) fn expect_context(&self, ctx: &Context, op: &'static str, arg: &'static str) -> Result<()> {
        if self.ctx.same(ctx) {
            return Ok(());
        }
        Err(Error::WrongContext {
            op,
            arg,
            expected: format!("{ctx:?}"),
            actual: format!("{:?}", self.ctx),
        })
    }

    /// The view with axes `a` and `b` swapped (no copy).
    pub fn transpose(&self, a: usize, b: usize) -> Result<Tensor> {
        Ok(self.with_layout(self.layout.transpose(a, b)?))
    }

    /// The view keeping `start..end` of `axis` (no copy).
    pub fn narrow(&self, axis: usize, start: usize, end: usize) -> Result<Tensor> {
        Ok(self.with_layout(self.layout.narrow(axis, start, end)?))
    }

    /// The same elements under another shape; copies only when the view is not dense.
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor> {
        let n = numel("reshape", "shape", shape)?;
        if n != self.len() {
            return Err(Error::shape(
                "reshape",
                "shape",
                format!("{} elements like {:?}", self.len(), self.shape()),
                shape,
            ));
        }
        let dense = if self.layout.is_dense() {
            self.clone()
        } else {
            self.contiguous()?
        };
        let mut layout = Layout::contiguous(shape);
        layout.offset = dense.layout.offset;
        Ok(dense.with_layout(layout))
    }

    /// True when dense from element 0, the form every kernel binds without a copy.
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_contiguous()
    }

    /// A dense copy from offset 0 (same dtype), or this tensor when it already is one.
    pub fn contiguous(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        match self.dtype {
            DType::F32 => copy::strided_copy(self),
            d => convert::convert(self, d),
        }
    }

    /// This tensor's elements as a dense tensor of `dtype`, converted on the device
    /// (`shaders/tensor/convert.wgsl`): to F16 or BF16 rounded to nearest even (overflow to
    /// infinity, NaN kept NaN), to F32 exact. Any view; the same dtype makes a dense copy
    /// (or returns this tensor when already dense from offset 0).
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype {
            return self.contiguous();
        }
        convert::convert(self, dtype)
    }
}

/// Writes a CPU buffer; a poisoned lock still holds valid f32s.
fn write(data: &RwLock<Vec<f32>>) -> std::sync::RwLockWriteGuard<'_, Vec<f32>> {
    data.write().unwrap_or_else(|p| p.into_inner())
}

/// Reads a CPU buffer; a poisoned lock still holds valid f32s.
fn read(data: &RwLock<Vec<f32>>) -> std::sync::RwLockReadGuard<'_, Vec<f32>> {
    data.read().unwrap_or_else(|p| p.into_inner())
}
