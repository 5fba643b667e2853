//! What the chosen adapter is and what it can do, as reported by `Context::info()`.

use std::fmt;

/// wgpu's backend enum, re-exported so that a caller comparing [`DeviceInfo::backend`] needs no
/// wgpu dependency of its own.
pub use wgpu::Backend;

/// What runs a context's kernels: the one test of "is this a software adapter" that every
/// size choice (scan segments, chunk caps, plan defaults) and every test goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// A hardware GPU (discrete, integrated or virtual).
    Gpu,
    /// An adapter that runs shaders on the CPU: lavapipe, llvmpipe, SwiftShader, softpipe.
    Software,
    /// The CPU reference context: no device, every op runs its `ndarray` reference.
    CpuReference,
    /// An adapter that does not say what it is: device type `Other` and no name (a browser
    /// that withholds its adapter's details reports that). It may be a software adapter, so it
    /// gets their conservative limits ([`DeviceInfo::loop_limited`]).
    Unknown,
}

impl DeviceKind {
    /// The kind of a wgpu adapter, from its device type and (for drivers that report a
    /// software rasteriser as another type) its name; `Unknown` when it reports neither.
    pub(super) fn of(device_type: wgpu::DeviceType, name: &str) -> Self {
        let name = name.trim().to_lowercase();
        let software_name = ["llvmpipe", "lavapipe", "swiftshader", "softpipe"]
            .iter()
            .any(|s| name.contains(s));
        if device_type == wgpu::DeviceType::Cpu || software_name {
            DeviceKind::Software
        } else if device_type == wgpu::DeviceType::Other && name.is_empty() {
            DeviceKind::Unknown
        } else {
            DeviceKind::Gpu
        }
    }
}

/// A snapshot of the adapter behind a context: identity, optional features, real limits.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Adapter name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)` or `NVIDIA H200`.
    pub name: String,
    /// The wgpu backend (`Vulkan`, `Gl`, `Metal`, `Dx12`, `BrowserWebGpu`); `Noop` for the CPU
    /// reference context, which runs no wgpu backend. Printed with `{:?}`.
    pub backend: Backend,
    /// `DiscreteGpu`, `IntegratedGpu`, `Cpu` (software rasterisers such as lavapipe), ...
    /// as wgpu reports it, for display; decisions go through [`DeviceInfo::kind`].
    pub device_type: String,
    /// Hardware GPU, software adapter or the CPU reference context.
    pub kind: DeviceKind,
    /// Driver name and version, when the backend reports them.
    pub driver: String,
    /// The PCI vendor id (or the backend's equivalent), 0 when unknown.
    pub vendor: u32,
    /// The PCI device id (or the backend's equivalent), 0 when unknown.
    pub device_id: u32,
    /// `SUBGROUP` was granted: kernels may use `enable subgroups;`.
    pub subgroups: bool,
    /// Smallest and largest subgroup size the adapter reports (0 when unknown).
    pub subgroup_size: (u32, u32),
    /// `SHADER_F16` was granted.
    pub shader_f16: bool,
    /// wgpu's `EXPERIMENTAL_COOPERATIVE_MATRIX` was granted (with `SHADER_F16`): the f16
    /// matmul may run on the matrix units (`MatmulPath::Cooperative`). Only on request:
    /// `ENGINE_EXPERIMENTAL=cooperative-matrix`, on an adapter with 16 x 16 x 16 f16 -> f32.
    pub cooperative_matrix: bool,
    /// `TIMESTAMP_QUERY` was granted (and inside passes, natively).
    pub timestamps: bool,
    /// `TIMESTAMP_QUERY_INSIDE_PASSES` was granted (native only).
    pub timestamps_inside_passes: bool,
    /// Largest storage buffer binding in bytes.
    pub max_storage_binding: u64,
    /// Largest buffer in bytes.
    pub max_buffer_size: u64,
    /// Workgroup (shared) memory per workgroup in bytes.
    pub max_workgroup_memory: u32,
    /// Invocations per workgroup.
    pub max_invocations: u32,
    /// Workgroups per dispatch dimension.
    pub max_workgroups_per_dim: u32,
    /// Storage buffers one shader stage may bind.
    pub max_storage_buffers: u32,
}

impl DeviceInfo {
    /// The info of the CPU reference context.
    /// Each CPU context gets its own number (`CPU reference #2 ...`), so two of them in one
    /// process print distinct names (a wrong-context error names both).
    pub(crate) fn cpu() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        DeviceInfo {
            name: format!("CPU reference #{n} (ndarray, f64 accumulation)"),
            backend: Backend::Noop,
            device_type: "Cpu".into(),
            kind: DeviceKind::CpuReference,
            driver: String::new(),
            vendor: 0,
            device_id: 0,
            subgroups: false,
            subgroup_size: (0, 0),
            shader_f16: false,
            cooperative_matrix: false,
            timestamps: false,
            timestamps_inside_passes: false,
            max_storage_binding: u64::MAX,
            max_buffer_size: u64::MAX,
            max_workgroup_memory: 0,
            max_invocations: 0,
            max_workgroups_per_dim: 0,
            max_storage_buffers: 0,
        }
    }

    /// The info of a device opened on the adapter `adapter` describes (what the engine's own
    /// adapter reports, or what an application's device reports of the adapter it came from).
    pub(crate) fn from_device(adapter: &wgpu::AdapterInfo, features: wgpu::Features, limits: &wgpu::Limits) -> Self {
        let kind = DeviceKind::of(adapter.device_type, &adapter.name);
        let name = match adapter.name.trim() {
            "" => "unknown adapter".to_string(),
            _ => adapter.name.clone(),
        };
        DeviceInfo {
            name,
            backend: adapter.backend,
            device_type: format!("{:?}", adapter.device_type),
            kind,
            driver: format!("{} {}", adapter.driver, adapter.driver_info).trim().to_string(),
            vendor: adapter.vendor,
            device_id: adapter.device,
            subgroups: features.contains(wgpu::Features::SUBGROUP),
            subgroup_size: (adapter.subgroup_min_size, adapter.subgroup_max_size),
            shader_f16: features.contains(wgpu::Features::SHADER_F16),
            cooperative_matrix: features
                .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16),
            timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
            timestamps_inside_passes: features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES),
            max_storage_binding: limits.max_storage_buffer_binding_size,
            max_buffer_size: limits.max_buffer_size,
            max_workgroup_memory: limits.max_compute_workgroup_storage_size,
            max_invocations: limits.max_compute_invocations_per_workgroup,
            max_workgroups_per_dim: limits.max_compute_workgroups_per_dimension,
            max_storage_buffers: limits.max_storage_buffers_per_shader_stage,
        }
    }

    /// True for the CPU reference context.
    pub fn is_cpu_reference(&self) -> bool {
        self.kind == DeviceKind::CpuReference
    }

    /// True for an adapter that runs shaders on the CPU (lavapipe, llvmpipe, SwiftShader).
    pub fn is_software(&self) -> bool {
        self.kind == DeviceKind::Software
    }

    /// True when every shader loop must stay under Mesa's loop limit (an invocation's loops
    /// end silently after 65,535 trips in all on lavapipe and llvmpipe), so long walks are
    /// split into dispatches: on software adapters, and on an adapter of unknown kind, which
    /// may be one. Never on the CPU reference context, which runs no shaders.
    pub fn loop_limited(&self) -> bool {
        matches!(self.kind, DeviceKind::Software | DeviceKind::Unknown)
    }

    /// One line for a user on a software adapter: which one it is and what would be faster.
    /// `None` on a hardware adapter and on the CPU reference context.
    ///
    /// Measured on a 2-core machine with the shipped GPT-2: llvmpipe (GL) 2.4 tokens/s,
    /// lavapipe (Vulkan) 10.3 tokens/s; a GPU is orders of magnitude faster than either.
    pub fn software_note(&self) -> Option<String> {
        if !self.is_software() {
            return None;
        }
        Some(if self.backend == Backend::Gl {
            format!(
                "note: {} is Mesa's OpenGL software rasteriser on the CPU; lavapipe (Vulkan, \
                 `apt-get install mesa-vulkan-drivers`) runs the same kernels about 4x faster, \
                 and any GPU far faster",
                self.name
            )
        } else {
            let what = if self.backend == Backend::Vulkan && self.name.contains("llvmpipe") {
                "Vulkan: Mesa's lavapipe".to_string()
            } else {
                format!("{:?}", self.backend)
            };
            format!(
                "note: {} ({what}) is a software adapter running on the CPU; a GPU runs the \
                 same kernels far faster",
                self.name
            )
        })
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "adapter:          {}", self.name)?;
        writeln!(f, "backend:          {:?} ({})", self.backend, self.device_type)?;
        if !self.driver.is_empty() {
            writeln!(f, "driver:           {}", self.driver)?;
        }
        if self.is_cpu_reference() {
            return Ok(());
        }
        let yes = |b: bool| if b { "yes" } else { "no" };
        writeln!(
            f,
            "subgroups:        {} (size {}..{})",
            yes(self.subgroups),
            self.subgroup_size.0,
            self.subgroup_size.1
        )?;
        writeln!(f, "shader-f16:       {}", yes(self.shader_f16))?;
        // Storage is packed u32 words on every adapter, so every dtype works without shader-f16.
        writeln!(
            f,
            "dtypes:           F32, F16, BF16 (halves packed two per 32-bit word, widened to f32 in the kernels)"
        )?;
        writeln!(
            f,
            "timestamps:       {} (inside passes: {})",
            yes(self.timestamps),
            yes(self.timestamps_inside_passes)
        )?;
        writeln!(f, "storage binding:  {} MiB", self.max_storage_binding >> 20)?;
        writeln!(f, "max buffer:       {} MiB", self.max_buffer_size >> 20)?;
        writeln!(f, "workgroup memory: {} KiB", self.max_workgroup_memory >> 10)?;
        writeln!(f, "invocations:      {} per workgroup", self.max_invocations)?;
        writeln!(f, "storage buffers:  {} per stage", self.max_storage_buffers)?;
        write!(f, "workgroups:       {} per dimension", self.max_workgroups_per_dim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(device_type: wgpu::DeviceType, name: &str) -> wgpu::AdapterInfo {
        wgpu::AdapterInfo {
            name: name.into(),
            ..wgpu::AdapterInfo::new(device_type, Backend::BrowserWebGpu)
        }
    }

    #[test]
    fn an_adapter_that_says_nothing_is_of_unknown_kind_and_loop_limited() {
        use wgpu::DeviceType::{Cpu, DiscreteGpu, Other};
        for (device_type, name, kind) in [
            (Other, "", DeviceKind::Unknown),
            (Other, "  ", DeviceKind::Unknown),
            (Other, "llvmpipe (LLVM 15.0.6, 256 bits)", DeviceKind::Software),
            (Other, "SwiftShader Device (Subzero)", DeviceKind::Software),
            (Cpu, "", DeviceKind::Software),
            (Other, "Apple M2", DeviceKind::Gpu),
            (DiscreteGpu, "NVIDIA H200", DeviceKind::Gpu),
        ] {
            let info = DeviceInfo::from_device(
                &adapter(device_type, name),
                wgpu::Features::empty(),
                &Default::default(),
            );
            assert_eq!(info.kind, kind, "{device_type:?} {name:?}");
            assert_eq!(info.loop_limited(), kind != DeviceKind::Gpu, "{device_type:?} {name:?}");
            assert!(
                !info.name.trim().is_empty(),
                "{device_type:?} {name:?}: a name to print"
            );
        }
    }
}
