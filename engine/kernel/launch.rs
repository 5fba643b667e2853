//! Recording one dispatch: uniform parameters, bind group, compute pass.

use super::cache::Kernel;
use super::{Binding, KernelDef};
use crate::context::Gpu;
use crate::error::{Error, Result};

/// A kernel's uniform block, built field by field as 32-bit words.
///
/// Keep the WGSL struct to scalar `u32`/`i32`/`f32` fields (or `vec4<u32>` rows) in the same
/// order; the block is padded to 16 bytes as uniform layout requires.
#[derive(Clone, Debug, Default)]
pub(crate) struct Params {
    words: Vec<u32>,
}

impl Params {
    pub fn new() -> Self {
        Params::default()
    }
    pub fn u32(mut self, v: u32) -> Self {
        self.words.push(v);
        self
    }
    /// A size, stride or offset of a checked tensor (`usize` -> `u32`). Tensors hold at most
    /// [`crate::tensor::MAX_ELEMENTS`] (2^32 - 1) elements and views stay in their buffer, so
    /// these fit; a value that does not saturates (never wraps) and fails a debug assertion.
    /// Arguments a caller chooses freely (a position, an offset) go through [`Params::checked`].
    pub fn usize(self, v: usize) -> Self {
        debug_assert!(u32::try_from(v).is_ok(), "kernel parameter {v} does not fit u32");
        self.u32(u32::try_from(v).unwrap_or(u32::MAX))
    }
    /// A `usize` argument of `op` that must fit the kernel's u32, or an error naming it.
    pub fn checked(self, op: &'static str, arg: &'static str, v: usize) -> Result<Self> {
        let w = u32::try_from(v).map_err(|_| Error::value(op, arg, format!("at most {} (u32)", u32::MAX), v))?;
        Ok(self.u32(w))
    }
    /// These words followed by `more`'s.
    pub fn extend(mut self, more: &Params) -> Self {
        self.words.extend_from_slice(&more.words);
        self
    }
    pub fn i32(self, v: i32) -> Self {
        self.u32(v as u32)
    }
    pub fn f32(self, v: f32) -> Self {
        self.u32(v.to_bits())
    }
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut w = self.words.clone();
        w.resize(w.len().div_ceil(4).max(1) * 4, 0);
        bytemuck::cast_slice(&w).to_vec()
    }
}

/// Workgroup counts for `n` workgroups along one logical axis, folded into x and y so no
/// dimension exceeds the 65535 limit. Kernels recover the index as `id.x + id.y * nwg.x`.
pub(crate) fn groups_1d(n: u32) -> [u32; 3] {
    const MAX: u32 = 65535;
    if n <= MAX {
        [n.max(1), 1, 1]
    } else {
        [MAX, n.div_ceil(MAX), 1]
    }
}

impl Gpu {
    /// The pipeline of a hand-written kernel, specialised by `constants`.
    pub(crate) fn kernel(&self, def: &KernelDef, constants: &[(&'static str, f64)]) -> Result<std::sync::Arc<Kernel>> {
        self.kernels.get(&self.device, &def.key(constants), || Ok(def.source()))
    }

    /// The bind group of `kernel` over `buffers` (its storage bindings in order) and the
    /// uniform slot `(buffer, offset, size)` if the kernel has a uniform binding.
    pub(crate) fn bind_group(
        &self,
        kernel: &Kernel,
        uniform: Option<&(wgpu::Buffer, u64, u64)>,
        buffers: &[impl std::borrow::Borrow<wgpu::Buffer>],
    ) -> wgpu::BindGroup {
        let mut next = buffers.iter();
        let entries: Vec<wgpu::BindGroupEntry> = kernel
            .bindings
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let resource = match (b, uniform) {
                    (Binding::Uniform, Some((buffer, offset, size))) => {
                        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer,
                            offset: *offset,
                            size: std::num::NonZeroU64::new(*size),
                        })
                    }
                    // Callers checked the counts; a short list leaves the layout's check to wgpu.
                    _ => next.next()?.borrow().as_entire_binding(),
                };
                Some(wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource,
                })
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&kernel.name),
            layout: &kernel.layout,
            entries: &entries,
        })
    }

    /// Records one dispatch of `kernel` over `groups` workgroups.
    ///
    /// `buffers` fill the kernel's storage bindings in order; `params` fills its uniform
    /// binding (if it has one). Nothing runs until the pending commands are submitted.
    #[allow(clippy::expect_used, reason = "one buffer per storage binding, counted just above")]
    pub(crate) fn dispatch(
        &self,
        kernel: &std::sync::Arc<Kernel>,
        params: &Params,
        buffers: &[&wgpu::Buffer],
        groups: [u32; 3],
    ) -> Result<()> {
        self.check(&kernel.name)?;
        let storage = kernel.bindings.iter().filter(|b| **b != Binding::Uniform).count();
        if storage != buffers.len() {
            return Err(Error::Gpu {
                context: kernel.name.clone(),
                message: format!("kernel has {storage} storage bindings, {} buffers given", buffers.len()),
            });
        }
        self.dispatched.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let captured = self.with_capture(|c| {
            c.atoms.push(crate::context::gpu::CapturedAtom {
                kernel: kernel.clone(),
                params: kernel.bindings.contains(&Binding::Uniform).then(|| params.bytes()),
                buffers: buffers.iter().map(|b| (*b).clone()).collect(),
                groups,
            })
        });
        if captured.is_some() {
            return Ok(());
        }
        let uniform = kernel
            .bindings
            .contains(&Binding::Uniform)
            .then(|| self.uniform(&params.bytes()));
        let bind_group = self.bind_group(kernel, uniform.as_ref(), buffers);
        let profiled = self.profile_begin(&kernel.name)?;
        self.record(|encoder| {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(&kernel.name),
                timestamp_writes: profiled.as_ref().and_then(|p| p.timestamp_writes()),
            });
            pass.set_pipeline(&kernel.pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
        });
        self.profile_end(profiled)
    }
}
