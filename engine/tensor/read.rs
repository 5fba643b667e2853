//! Reading tensors back: to host vectors, half bit patterns and `ndarray` arrays (the only
//! points that wait for the device; natively blocking, `*_async` for wasm and native alike),
//! and the CPU context's direct access to a view of its host buffer.

use ndarray::{ArrayD, IxDyn, ShapeBuilder};

use super::halves::narrow;
use super::{read, write, Storage, Tensor};
use crate::context::pool::PooledBuffer;
use crate::context::readback;
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::shape::{DType, Layout};

impl Tensor {
    /// The elements in row-major order of the view (blocking; native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn to_vec(&self) -> Result<Vec<f32>> {
        pollster::block_on(self.to_vec_async())
    }

    /// The one element of a one-element tensor (any rank: `()`, `(1,)`, `(1, 1)`), read back
    /// (blocking; native only): a loss as an `f32`. More or fewer elements is an error.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn item(&self) -> Result<f32> {
        pollster::block_on(self.item_async())
    }

    /// [`Tensor::item`] without blocking (the browser's form).
    pub async fn item_async(&self) -> Result<f32> {
        if self.len() != 1 {
            return Err(Error::shape("item", "self", "exactly one element", self.shape()));
        }
        Ok(self.to_vec_async().await?[0])
    }

    /// The elements in row-major order of the view, widened to f32 (exact) for F16 and BF16.
    pub async fn to_vec_async(&self) -> Result<Vec<f32>> {
        match &self.storage {
            Storage::Cpu(data) => Ok(self.cpu_view(&read(data))?.iter().copied().collect()),
            Storage::Gpu(b) => {
                let gpu = self.ctx.require_gpu("to_vec")?;
                expect_written(gpu, b, "Tensor::to_vec")?;
                let dense = self.to_dtype(DType::F32)?;
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
            Storage::Gpu(b) => {
                let gpu = self.ctx.require_gpu(op)?;
                expect_written(gpu, b, op)?;
                let dense = self.contiguous()?;
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

    /// `f` of a borrowed view of a CPU-context tensor's host elements: no copy, for the CPU
    /// paths that read large operands (the reference product reads GPT-2's 154 MB head once a
    /// token). The buffer stays read-locked during `f`: `f` must not lock this tensor's
    /// storage again (a tensor sharing it is read through [`Tensor::host_widened`] first).
    pub(crate) fn with_host_view<R>(
        &self,
        op: &'static str,
        f: impl FnOnce(ndarray::ArrayViewD<f32>) -> Result<R>,
    ) -> Result<R> {
        let Storage::Cpu(data) = &self.storage else {
            return Err(Error::Unsupported {
                op,
                message: "expected a CPU-context tensor".into(),
            });
        };
        let data = read(data);
        f(self.cpu_view(&data)?)
    }

    /// True when both tensors are views of one CPU buffer.
    pub(crate) fn shares_host_buffer(&self, other: &Tensor) -> bool {
        matches!((&self.storage, &other.storage), (Storage::Cpu(a), Storage::Cpu(b)) if std::sync::Arc::ptr_eq(a, b))
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

/// Fails for a plan's captured output before the plan's first replay (its buffer holds
/// nothing the plan computed yet; reading it used to return whatever the pool left there).
/// Inside the capture itself the readback's own error names the cause instead.
fn expect_written(gpu: &Gpu, b: &PooledBuffer, op: &'static str) -> Result<()> {
    if b.awaiting_replay() && !gpu.capturing() {
        return Err(Error::Unsupported {
            op,
            message: "this tensor is a plan's captured output and holds nothing before the plan's \
                      first replay: call plan.replay(&ctx) before reading it"
                .into(),
        });
    }
    Ok(())
}

/// The error for a view that does not fit its buffer (an internal invariant, reported).
fn outside(op: &'static str, l: &Layout, e: ndarray::ShapeError) -> Error {
    Error::value(op, "view", "a view within its buffer", format!("{l:?} ({e})"))
}
