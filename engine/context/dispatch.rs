//! Recording one dispatch on the device: the pipeline of a kernel from the device's cache,
//! its bind group (uniform slot from the arena plus storage buffers), one compute pass.

use std::borrow::Cow;

use super::{Context, Gpu};
use crate::error::{Error, Result};
use crate::kernel::{groups_1d, Binding, Kernel, KernelDef, KernelKey, KernelSource, Params};

impl Gpu {
    /// The pipeline of a hand-written kernel, specialised by `constants`.
    pub(crate) fn kernel(&self, def: &KernelDef, constants: &[(&'static str, f64)]) -> Result<std::sync::Arc<Kernel>> {
        self.kernels.get(&self.device, &def.key(constants), || Ok(def.source()))
    }

    /// The pipeline of a kernel with dtype slots (`kernel::dtype`), each slot named in
    /// `dtypes` read as that dtype (the others as F32), specialised by `constants`.
    pub(crate) fn typed_kernel(
        &self,
        def: &KernelDef,
        dtypes: &[(&str, crate::shape::DType)],
        constants: &[(&'static str, f64)],
    ) -> Result<std::sync::Arc<Kernel>> {
        let key = def.typed_key(dtypes, constants);
        self.kernels.get(&self.device, &key, || {
            def.typed_source(dtypes).map_err(|message| Error::Shader {
                kernel: key.name.to_string(),
                message,
                wgsl: def.wgsl.to_string(),
            })
        })
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

    /// Records one dispatch of `kernel` with one invocation per item, `items` in all: the
    /// workgroup count comes from the kernel's own `@workgroup_size` (x), folded by
    /// [`groups_1d`] so no dimension passes 65535. Kernels recover the item index as
    /// `(wid.x + wid.y * nwg.x) * WG + lid` or read `global_invocation_id.x` when one row of
    /// workgroups suffices.
    pub(crate) fn dispatch_items(
        &self,
        kernel: &std::sync::Arc<Kernel>,
        params: &Params,
        buffers: &[&wgpu::Buffer],
        items: usize,
    ) -> Result<()> {
        let per_group = kernel.workgroup_size[0].max(1) as usize;
        let groups = u32::try_from(items.div_ceil(per_group)).map_err(|_| Error::Gpu {
            context: kernel.name.clone(),
            message: format!("{items} invocations need more workgroups than a u32 counts"),
        })?;
        self.dispatch(kernel, params, buffers, groups_1d(groups))
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
            c.dispatches.push(crate::context::gpu::CapturedDispatch {
                kernel: kernel.clone(),
                params: kernel.bindings.contains(&Binding::Uniform).then(|| params.bytes()),
                buffers: buffers.iter().map(|b| (*b).clone()).collect(),
                groups,
                fusible: None,
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

/// Builds `wgsl` (entry point `main`, no bindings) on `ctx` as kernel `name`, returning the
/// compile error (kernel name, message, source) if any. Useful to check user or generated
/// WGSL before running it; on the CPU context it validates with naga only.
pub fn check_wgsl(ctx: &Context, name: &str, wgsl: &str) -> Result<()> {
    let Some(gpu) = ctx.gpu() else {
        return crate::kernel::cache::validate_wgsl(wgsl).map_err(|message| Error::Shader {
            kernel: name.to_string(),
            message,
            wgsl: wgsl.to_string(),
        });
    };
    let key = KernelKey {
        name: Cow::Owned(name.to_string()),
        entry: Cow::Borrowed("main"),
        constants: vec![],
    };
    let source = KernelSource {
        wgsl: Cow::Owned(wgsl.to_string()),
        bindings: vec![],
    };
    gpu.kernels.get(&gpu.device, &key, || Ok(source)).map(|_| ())
}
