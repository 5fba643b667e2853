//! Tensors: an f32 buffer on a context's device (or in host memory on the CPU context)
//! viewed through a shape, strides and an offset.
//!
//! Creating a tensor from host data uploads it; reading it back (`to_vec`, `to_array`) is
//! the only point that waits for the device. Natively those block; `*_async` forms serve
//! wasm and native alike.
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

mod copy;
mod interop;

use std::sync::{Arc, RwLock};

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn, ShapeBuilder};

use crate::context::pool::PooledBuffer;
use crate::context::readback;
pub use crate::shape::{numel, Layout, MAX_ELEMENTS};
pub use copy::copy_into;

use crate::context::Context;
use crate::error::{Error, Result};

/// Where a tensor's elements live.
#[derive(Clone)]
pub(crate) enum Storage {
    Gpu(Arc<PooledBuffer>),
    /// Behind a lock so `ops::copy_into` can write into a view of a shared buffer.
    Cpu(Arc<RwLock<Vec<f32>>>),
}

/// An f32 tensor: a shared buffer plus a view (shape, strides, offset). Cloning is cheap.
#[derive(Clone)]
pub struct Tensor {
    ctx: Context,
    layout: Layout,
    storage: Storage,
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tensor{:?} on {:?}", self.layout.shape, self.ctx)
    }
}

impl Tensor {
    /// Uploads `data` (row-major) as a tensor of `shape`.
    pub fn from_slice(ctx: &Context, shape: &[usize], data: &[f32]) -> Result<Self> {
        let n = numel("Tensor::from_slice", "shape", shape)?;
        if n != data.len() {
            return Err(Error::value(
                "Tensor::from_slice",
                "data",
                format!("{n} elements for shape {shape:?}"),
                data.len(),
            ));
        }
        match ctx.gpu() {
            None => {
                let mut v = host_vec("Tensor::from_slice", "data", n)?;
                v.extend_from_slice(data);
                Ok(Tensor {
                    ctx: ctx.clone(),
                    layout: Layout::contiguous(shape),
                    storage: Storage::Cpu(Arc::new(RwLock::new(v))),
                })
            }
            Some(gpu) => {
                let t = Self::alloc(ctx, shape, "Tensor::from_slice", "data")?;
                if let Storage::Gpu(b) = &t.storage {
                    gpu.write(b.buffer(), 0, bytemuck::cast_slice(data));
                }
                Ok(t)
            }
        }
    }

    /// Uploads an `ndarray` array of any dimension and memory order.
    pub fn from_array<S: Data<Elem = f32>, D: Dimension>(ctx: &Context, a: &ArrayBase<S, D>) -> Result<Self> {
        let data: Vec<f32> = a.iter().copied().collect();
        Self::from_slice(ctx, a.shape(), &data)
    }

    /// A tensor of `shape` filled with `value`.
    pub fn full(ctx: &Context, shape: &[usize], value: f32) -> Result<Self> {
        // Checked (element count, device limit) before the host vector exists.
        let t = Self::alloc(ctx, shape, "Tensor::full", "shape")?;
        match (&t.storage, ctx.gpu()) {
            (Storage::Cpu(data), _) => write(data).fill(value),
            (Storage::Gpu(b), Some(gpu)) if !t.is_empty() => {
                let mut v = host_vec("Tensor::full", "shape", t.len())?;
                v.resize(t.len(), value);
                gpu.write(b.buffer(), 0, bytemuck::cast_slice(&v));
            }
            _ => {}
        }
        Ok(t)
    }

    /// A tensor of `shape` filled with zeros.
    pub fn zeros(ctx: &Context, shape: &[usize]) -> Result<Self> {
        Self::full(ctx, shape, 0.0)
    }

    /// A dense output tensor for `op`, contents unspecified (poisoned when the context asks).
    pub(crate) fn uninit(ctx: &Context, shape: &[usize], op: &'static str) -> Result<Self> {
        let t = Self::alloc(ctx, shape, op, "output")?;
        if let (Some(gpu), Storage::Gpu(b)) = (ctx.gpu(), &t.storage) {
            // A plan's buffers are written by its own kernels; an upload cannot be captured.
            if let Some(p) = gpu.poison().filter(|_| !gpu.capturing()) {
                gpu.write(b.buffer(), 0, bytemuck::cast_slice(&vec![p; t.len().max(1)]));
            }
        }
        Ok(t)
    }

    fn alloc(ctx: &Context, shape: &[usize], op: &'static str, arg: &'static str) -> Result<Self> {
        let n = numel(op, arg, shape)?;
        let storage = match ctx.gpu() {
            None => {
                let mut v = host_vec(op, arg, n)?;
                v.resize(n, 0.0);
                Storage::Cpu(Arc::new(RwLock::new(v)))
            }
            Some(gpu) => {
                // A lost device fails here, before a buffer is asked of it.
                gpu.check(op)?;
                let bytes = (n.max(1) as u64) * 4;
                if bytes > gpu.info.max_storage_binding {
                    return Err(Error::TooLarge {
                        op,
                        arg,
                        bytes,
                        limit: gpu.info.max_storage_binding,
                    });
                }
                Storage::Gpu(Arc::new(gpu.acquire(bytes)))
            }
        };
        Ok(Tensor {
            ctx: ctx.clone(),
            layout: Layout::contiguous(shape),
            storage,
        })
    }

    /// Wraps a host array as a tensor of the CPU context, or of `ctx` after an upload.
    pub(crate) fn from_host(ctx: &Context, a: ArrayD<f32>) -> Result<Self> {
        if ctx.is_gpu() {
            return Self::from_array(ctx, &a);
        }
        let shape = a.shape().to_vec();
        numel("Tensor::from_host", "shape", &shape)?;
        let data = a.as_standard_layout().iter().copied().collect();
        Ok(Tensor {
            ctx: ctx.clone(),
            layout: Layout::contiguous(&shape),
            storage: Storage::Cpu(Arc::new(RwLock::new(data))),
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

    /// The device buffer of a GPU tensor; an internal error otherwise.
    pub(crate) fn gpu_buffer(&self, op: &'static str) -> Result<&wgpu::Buffer> {
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

    /// A dense copy from offset 0, or this tensor when it already is one.
    pub fn contiguous(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        copy::strided_copy(self)
    }

    /// The elements in row-major order of the view (blocking; native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn to_vec(&self) -> Result<Vec<f32>> {
        pollster::block_on(self.to_vec_async())
    }

    /// The elements in row-major order of the view.
    pub async fn to_vec_async(&self) -> Result<Vec<f32>> {
        match &self.storage {
            Storage::Cpu(data) => Ok(self.cpu_view(&read(data))?.iter().copied().collect()),
            Storage::Gpu(_) => {
                let dense = self.contiguous()?;
                let gpu = self.ctx.require_gpu("to_vec")?;
                let bytes = readback::read_bytes(gpu, dense.gpu_buffer("to_vec")?, 0, (self.len() * 4) as u64).await?;
                Ok(bytemuck::pod_collect_to_vec(&bytes))
            }
        }
    }

    /// The tensor as an `ndarray` array (blocking; native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn to_array(&self) -> Result<ArrayD<f32>> {
        pollster::block_on(self.to_array_async())
    }

    /// The tensor as an `ndarray` array.
    pub async fn to_array_async(&self) -> Result<ArrayD<f32>> {
        let v = self.to_vec_async().await?;
        ArrayD::from_shape_vec(IxDyn(self.shape()), v).map_err(|e| Error::Map(e.to_string()))
    }

    /// The host elements of a CPU-context tensor, for an op's CPU path.
    pub(crate) fn host(&self, op: &'static str) -> Result<ArrayD<f32>> {
        self.host_array().ok_or_else(|| Error::Unsupported {
            op,
            message: "expected a CPU-context tensor".into(),
        })?
    }

    /// The host elements of a CPU-context tensor as an `ndarray` array (no device work).
    pub(crate) fn host_array(&self) -> Option<Result<ArrayD<f32>>> {
        match &self.storage {
            Storage::Cpu(data) => Some(self.cpu_view(&read(data)).map(|v| v.to_owned())),
            Storage::Gpu(_) => None,
        }
    }

    /// Writes `src` (same shape) into this view of a CPU-context tensor, in place.
    pub(crate) fn host_write(&self, src: &ndarray::ArrayViewD<f32>, op: &'static str) -> Result<()> {
        let Storage::Cpu(data) = &self.storage else {
            return Err(Error::Unsupported {
                op,
                message: "expected a CPU-context tensor".into(),
            });
        };
        if src.shape() != self.shape() {
            return Err(Error::mismatch(op, "destination", self.shape(), "source", src.shape()));
        }
        if self.is_empty() {
            return Ok(());
        }
        let mut data = write(data);
        let l = &self.layout;
        let tail = data.get_mut(l.offset..).unwrap_or_default();
        let mut view = ndarray::ArrayViewMut::from_shape(IxDyn(&l.shape).strides(IxDyn(&l.strides)), tail)
            .map_err(|e| outside(op, l, e))?;
        view.assign(src);
        Ok(())
    }

    /// The view over a CPU buffer. Empty views read nothing (their offset may be anywhere).
    fn cpu_view<'a>(&self, data: &'a [f32]) -> Result<ndarray::ArrayViewD<'a, f32>> {
        let l = &self.layout;
        let (strides, tail) = if self.is_empty() {
            (vec![0; l.shape.len()], &[][..])
        } else {
            (l.strides.clone(), data.get(l.offset..).unwrap_or_default())
        };
        ndarray::ArrayView::from_shape(IxDyn(&l.shape).strides(IxDyn(&strides)), tail)
            .map_err(|e| outside("Tensor", l, e))
    }
}

/// The error for a view that does not fit its buffer (an internal invariant, reported).
fn outside(op: &'static str, l: &Layout, e: ndarray::ShapeError) -> Error {
    Error::value(op, "view", "a view within its buffer", format!("{l:?} ({e})"))
}

/// An empty host vector with room for `n` f32s, or an error naming `op` when the allocator
/// refuses (instead of aborting the process).
pub(crate) fn host_vec(op: &'static str, arg: &'static str, n: usize) -> Result<Vec<f32>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|e| {
        Error::value(
            op,
            arg,
            "a host buffer the allocator grants",
            format!("{} bytes ({e})", (n as u64).saturating_mul(4)),
        )
    })?;
    Ok(v)
}

/// Writes a CPU buffer; a poisoned lock still holds valid f32s.
fn write(data: &RwLock<Vec<f32>>) -> std::sync::RwLockWriteGuard<'_, Vec<f32>> {
    data.write().unwrap_or_else(|p| p.into_inner())
}

/// Reads a CPU buffer; a poisoned lock still holds valid f32s.
fn read(data: &RwLock<Vec<f32>>) -> std::sync::RwLockReadGuard<'_, Vec<f32>> {
    data.read().unwrap_or_else(|p| p.into_inner())
}
