//! Making tensors: uploads of f32 data, `ndarray` arrays and half-precision bit patterns,
//! filled tensors, the unspecified (poisoned on request) outputs of the ops, and the one
//! allocation every one of them goes through, which checks the element count, the device's
//! binding limit and the host allocator before anything is written.

use std::sync::{Arc, RwLock};

use ndarray::{ArrayBase, ArrayD, Data, Dimension};

use super::halves::widen;
use super::{write, Storage, Tensor};
use crate::context::op_scope::in_op;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::shape::{numel, DType, Layout};

/// `Tensor::full` inside a plan capture (`shaders/tensor/fill.wgsl`).
const FILL: KernelDef = KernelDef::new("tensor/fill", shader!("tensor/fill.wgsl"), "fill");

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
                    in_op("Tensor::from_slice", || {
                        gpu.write(b.buffer(), 0, bytemuck::cast_slice(data))
                    });
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

    /// A tensor of `shape` filled with `value`. Inside a plan capture it is filled by a
    /// kernel that each replay runs again (so a constant may be made inside a captured step).
    pub fn full(ctx: &Context, shape: &[usize], value: f32) -> Result<Self> {
        // Checked (element count, device limit) before the host vector exists.
        let t = Self::alloc(ctx, shape, DType::F32, "Tensor::full", "shape")?;
        match (&t.storage, ctx.gpu()) {
            (Storage::Cpu(data), _) => write(data).fill(value),
            // Zeros are cleared on the device: no host vector, no upload. Uploading them kept
            // the H200 idle long enough (8 GiB in 7 s) for its clocks to fall from 1980 to
            // 345 MHz, which small kernels after it then paid 2-4x for (issue #28's order
            // effect).
            (Storage::Gpu(b), Some(gpu)) if !t.is_empty() && value.to_bits() == 0 && !gpu.capturing() => {
                gpu.record(|e| e.clear_buffer(b.buffer(), 0, None));
            }
            // Inside a capture neither an upload nor a clear can be replayed: a fill kernel
            // with the value in its uniform is (a constant of a captured step).
            (Storage::Gpu(b), Some(gpu)) if !t.is_empty() && gpu.capturing() => {
                let params = Params::new().usize(t.len()).f32(value);
                gpu.dispatch_items(&gpu.kernel(&FILL, &[])?, &params, &[b.buffer()], t.len())?;
            }
            (Storage::Gpu(b), Some(gpu)) if !t.is_empty() => {
                let mut v = host_vec("Tensor::full", "shape", t.len())?;
                v.resize(t.len(), value);
                in_op("Tensor::full", || gpu.write(b.buffer(), 0, bytemuck::cast_slice(&v)));
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
