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
mod interop;

use std::sync::{Arc, RwLock};

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn, ShapeBuilder};

use crate::context::pool::PooledBuffer;
use crate::context::readback;
pub use crate::shape::{numel, DType, Layout, MAX_ELEMENTS};
pub use copy::copy_into;

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
                    dtype: DType::F32,
                    storage: Storage::Cpu(Arc::new(RwLock::new(v))),
                })
            }
            Some(gpu) => {
                let t = Self::alloc(ctx, shape, DType::F32, "Tensor::from_slice", "data")?;
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
        let t = Self::alloc(ctx, shape, DType::F32, "Tensor::full", "shape")?;
        match (&t.storage, ctx.gpu()) {
            (Storage::Cpu(data), _) => write(data).fill(value),
            // Zeros are cleared on the device: no host vector, no upload. Uploading them kept
            // the H200 idle long enough (8 GiB in 7 s) for its clocks to fall from 1980 to
            // 345 MHz, which small kernels after it then paid 2-4x for (issue #28's order
            // effect). Inside a capture the upload path stays, and reports itself.
            (Storage::Gpu(b), Some(gpu)) if !t.is_empty() && value.to_bits() == 0 && !gpu.capturing() => {
                gpu.record(|e| e.clear_buffer(b.buffer(), 0, None));
            }
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

    /// A dense f32 output tensor for `op`, contents unspecified (poisoned when the context asks).
    pub(crate) fn uninit(ctx: &Context, shape: &[usize], op: &'static str) -> Result<Self> {
        Self::uninit_dtype(ctx, shape, DType::F32, op)
    }

    /// A dense output tensor of `dtype` for `op`, contents unspecified (poisoned when the
    /// context asks: the poison value in every element, both halves of a word for halves).
    pub(crate) fn uninit_dtype(ctx: &Context, shape: &[usize], dtype: DType, op: &'static str) -> Result<Self> {
        let t = Self::alloc(ctx, shape, dtype, op, "output")?;
        if let (Some(gpu), Storage::Gpu(b)) = (ctx.gpu(), &t.storage) {
            // A plan's buffers are written by its own kernels; an upload cannot be captured.
            if let Some(p) = gpu.poison().filter(|_| !gpu.capturing()) {
                let word = match dtype {
                    DType::F32 => p.to_bits(),
                    DType::F16 => u32::from(half::f16::from_f32(p).to_bits()) * 0x1_0001,
                    DType::BF16 => u32::from(half::bf16::from_f32(p).to_bits()) * 0x1_0001,
                };
                gpu.write(
                    b.buffer(),
                    0,
                    bytemuck::cast_slice(&vec![word; dtype.words(t.len()).max(1)]),
                );
            }
        }
        Ok(t)
    }

    fn alloc(ctx: &Context, shape: &[usize], dtype: DType, op: &'static str, arg: &'static str) -> Result<Self> {
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
                let bytes = dtype.storage_bytes(op, arg, n.max(1))? as u64;
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
            dtype,
            storage,
        })
    }

    /// Uploads half-precision elements given as their 16-bit patterns (row-major): `dtype`
    /// F16 or BF16. Stored packed, two per 32-bit word.
    pub fn from_halves(ctx: &Context, shape: &[usize], dtype: DType, bits: &[u16]) -> Result<Self> {
        let op = "Tensor::from_halves";
        if !dtype.is_half() {
            return Err(Error::DType {
                op,
                arg: "dtype",
                expected: "F16 or BF16".into(),
                actual: dtype.to_string(),
            });
        }
        let n = numel(op, "shape", shape)?;
        if n != bits.len() {
            return Err(Error::value(
                op,
                "bits",
                format!("{n} elements for shape {shape:?}"),
                bits.len(),
            ));
        }
        let t = Self::alloc(ctx, shape, dtype, op, "bits")?;
        match (&t.storage, ctx.gpu()) {
            (Storage::Cpu(data), _) => {
                let mut d = write(data);
                for (o, &b) in d.iter_mut().zip(bits) {
                    *o = widen(dtype, b);
                }
            }
            (Storage::Gpu(b), Some(gpu)) if n > 0 => {
                let mut words = Vec::new();
                words
                    .try_reserve_exact(dtype.words(n))
                    .map_err(|e| Error::value(op, "bits", "a host buffer the allocator grants", e.to_string()))?;
                words.extend(
                    bits.chunks(2)
                        .map(|p| u32::from(p[0]) | (u32::from(*p.get(1).unwrap_or(&0)) << 16)),
                );
                gpu.write(b.buffer(), 0, bytemuck::cast_slice(&words));
            }
            _ => {}
        }
        Ok(t)
    }

    /// Uploads IEEE half-precision values as an F16 tensor (row-major).
    pub fn from_slice_f16(ctx: &Context, shape: &[usize], data: &[half::f16]) -> Result<Self> {
        let bits: Vec<u16> = data.iter().map(|h| h.to_bits()).collect();
        Self::from_halves(ctx, shape, DType::F16, &bits)
    }

    /// Uploads bfloat16 values as a BF16 tensor (row-major).
    pub fn from_slice_bf16(ctx: &Context, shape: &[usize], data: &[half::bf16]) -> Result<Self> {
        let bits: Vec<u16> = data.iter().map(|h| h.to_bits()).collect();
        Self::from_halves(ctx, shape, DType::BF16, &bits)
    }

    /// Uploads f32 values as a tensor of `dtype`, rounded to nearest even on the host (the
    /// `half` crate) for F16 and BF16.
    pub fn from_slice_as(ctx: &Context, shape: &[usize], data: &[f32], dtype: DType) -> Result<Self> {
        match dtype {
            DType::F32 => Self::from_slice(ctx, shape, data),
            DType::F16 => {
                let bits: Vec<u16> = data.iter().map(|&x| half::f16::from_f32(x).to_bits()).collect();
                Self::from_halves(ctx, shape, dtype, &bits)
            }
            DType::BF16 => {
                let bits: Vec<u16> = data.iter().map(|&x| half::bf16::from_f32(x).to_bits()).collect();
                Self::from_halves(ctx, shape, dtype, &bits)
            }
        }
    }

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
            dtype: DType::F32,
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

    /// The elements in row-major order of the view (blocking; native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn to_vec(&self) -> Result<Vec<f32>> {
        pollster::block_on(self.to_vec_async())
    }

    /// The elements in row-major order of the view, widened to f32 (exact) for F16 and BF16.
    pub async fn to_vec_async(&self) -> Result<Vec<f32>> {
        match &self.storage {
            Storage::Cpu(data) => Ok(self.cpu_view(&read(data))?.iter().copied().collect()),
            Storage::Gpu(_) => {
                let dense = self.to_dtype(DType::F32)?;
                let gpu = self.ctx.require_gpu("to_vec")?;
                let bytes = readback::read_bytes(gpu, dense.gpu_buffer("to_vec")?, 0, (self.len() * 4) as u64).await?;
                Ok(bytemuck::pod_collect_to_vec(&bytes))
            }
        }
    }

    /// The stored 16-bit patterns of an F16 or BF16 tensor's elements, row-major over the
    /// view (blocking; native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn to_halves(&self) -> Result<Vec<u16>> {
        pollster::block_on(self.to_halves_async())
    }

    /// The stored 16-bit patterns of an F16 or BF16 tensor's elements, row-major over the view.
    pub async fn to_halves_async(&self) -> Result<Vec<u16>> {
        let op = "Tensor::to_halves";
        self.expect_dtype(op, "self", &[DType::F16, DType::BF16])?;
        match &self.storage {
            // Each value is exactly one of the dtype's, so narrowing gives its pattern back.
            Storage::Cpu(data) => Ok(self
                .cpu_view(&read(data))?
                .iter()
                .map(|&x| narrow(self.dtype, x))
                .collect()),
            Storage::Gpu(_) => {
                let dense = self.contiguous()?;
                let gpu = self.ctx.require_gpu(op)?;
                let bytes = (self.dtype.words(self.len()) * 4) as u64;
                let bytes = readback::read_bytes(gpu, dense.typed_buffer(op)?, 0, bytes).await?;
                let halves: Vec<u16> = bytemuck::pod_collect_to_vec(&bytes);
                Ok(halves[..self.len()].to_vec())
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

    /// The host elements of a CPU-context f32 tensor, for an op's CPU path; a half tensor is
    /// refused as [`Tensor::gpu_buffer`] refuses it.
    pub(crate) fn host(&self, op: &'static str) -> Result<ArrayD<f32>> {
        self.expect_dtype(op, "input", &[DType::F32])?;
        self.host_widened(op)
    }

    /// The host elements of a CPU-context tensor of any dtype, widened to f32 (exact), for
    /// the CPU paths of the ops that take half inputs.
    pub(crate) fn host_widened(&self, op: &'static str) -> Result<ArrayD<f32>> {
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

/// The f32 value of a half-precision pattern of `dtype` (exact).
pub(crate) fn widen(dtype: DType, bits: u16) -> f32 {
    // A NaN keeps its sign and payload bit for bit (signalling ones included: `half` and
    // F16C set the quiet bit), so the CPU context stores and returns the patterns it was
    // given, as the GPUs' packed words do.
    if is_half_nan(dtype, bits) {
        let shift = if dtype == DType::BF16 { 16 } else { 13 };
        let sign = ((bits & 0x8000) as u32) << 16;
        let man = (bits & half_man_mask(dtype)) as u32;
        return f32::from_bits(sign | 0x7f80_0000 | (man << shift));
    }
    match dtype {
        DType::BF16 => half::bf16::from_bits(bits).to_f32(),
        _ => half::f16::from_bits(bits).to_f32(),
    }
}

/// The pattern of `x` in `dtype` (F16 or BF16), rounded to nearest even. A NaN keeps its
/// sign and the top bits of its payload (so `narrow(widen(b)) == b` for every pattern `b`);
/// a payload that would truncate to zero (an infinity) becomes quiet.
pub(crate) fn narrow(dtype: DType, x: f32) -> u16 {
    if x.is_nan() {
        let b = x.to_bits();
        let (shift, exp, quiet) = if dtype == DType::BF16 {
            (16, 0x7f80, 0x0040)
        } else {
            (13, 0x7c00, 0x0200)
        };
        let sign = ((b >> 16) & 0x8000) as u16;
        let man = ((b & 0x007f_ffff) >> shift) as u16;
        return sign | exp | if man == 0 { quiet } else { man };
    }
    match dtype {
        DType::BF16 => half::bf16::from_f32(x).to_bits(),
        _ => half::f16::from_f32(x).to_bits(),
    }
}

/// The mantissa bits of a half pattern of `dtype`.
fn half_man_mask(dtype: DType) -> u16 {
    if dtype == DType::BF16 {
        0x007f
    } else {
        0x03ff
    }
}

/// True when `bits` is a NaN pattern of `dtype` (all exponent bits set, mantissa nonzero).
fn is_half_nan(dtype: DType, bits: u16) -> bool {
    let exp = if dtype == DType::BF16 { 0x7f80 } else { 0x7c00 };
    bits & exp == exp && bits & half_man_mask(dtype) != 0
}

/// Writes a CPU buffer; a poisoned lock still holds valid f32s.
fn write(data: &RwLock<Vec<f32>>) -> std::sync::RwLockWriteGuard<'_, Vec<f32>> {
    data.write().unwrap_or_else(|p| p.into_inner())
}

/// Reads a CPU buffer; a poisoned lock still holds valid f32s.
fn read(data: &RwLock<Vec<f32>>) -> std::sync::RwLockReadGuard<'_, Vec<f32>> {
    data.read().unwrap_or_else(|p| p.into_inner())
}
