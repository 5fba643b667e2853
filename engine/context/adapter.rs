//! Choosing an adapter and opening a device on it.
//!
//! `ENGINE_BACKEND=vulkan|gl|metal|dx12|webgpu|cpu` restricts the backend (unset: all of them,
//! high performance preferred); `WGPU_ADAPTER_NAME=<substring>` picks an adapter by name.
//! The device is opened with the adapter's real limits and every optional feature the engine
//! can use that the adapter has.

use crate::error::{Error, Result};

/// The backend requested by `ENGINE_BACKEND`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// Any backend; no adapter means the CPU reference with one warning.
    Auto,
    /// Exactly these backends; no adapter is an error.
    Only(wgpu::Backends),
    /// The CPU reference.
    Cpu,
}

impl BackendChoice {
    /// Reads `ENGINE_BACKEND`.
    pub fn from_env() -> Result<Self> {
        match std::env::var("ENGINE_BACKEND") {
            Err(std::env::VarError::NotPresent) => Ok(BackendChoice::Auto),
            Err(std::env::VarError::NotUnicode(v)) => Err(Error::value(
                "Context::new",
                "ENGINE_BACKEND",
                "one of auto, vulkan, gl, metal, dx12, webgpu, cpu",
                format!("{v:?} (not UTF-8)"),
            )),
            Ok(v) => Self::parse(&v),
        }
    }

    /// Parses one of `auto`, `vulkan`, `gl`, `metal`, `dx12`, `webgpu`, `cpu`.
    pub fn parse(v: &str) -> Result<Self> {
        Ok(match v.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => BackendChoice::Auto,
            "vulkan" | "vk" => BackendChoice::Only(wgpu::Backends::VULKAN),
            "gl" | "gles" | "opengl" => BackendChoice::Only(wgpu::Backends::GL),
            "metal" | "mtl" => BackendChoice::Only(wgpu::Backends::METAL),
            "dx12" | "d3d12" => BackendChoice::Only(wgpu::Backends::DX12),
            "webgpu" => BackendChoice::Only(wgpu::Backends::BROWSER_WEBGPU),
            "cpu" => BackendChoice::Cpu,
            other => {
                return Err(Error::value(
                    "Context::new",
                    "ENGINE_BACKEND",
                    "one of auto, vulkan, gl, metal, dx12, webgpu, cpu",
                    other,
                ))
            }
        })
    }
}

/// A wgpu instance over the given backends, without a display.
pub(crate) fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    #[cfg(not(target_arch = "wasm32"))]
    skip_device_select_layer();
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    wgpu::Instance::new(desc)
}

/// Sets `NODEVICE_SELECT=1` once per process where it is unset, before the first Vulkan
/// instance.
///
/// Why: Mesa installs an implicit Vulkan layer, `VK_LAYER_MESA_device_select`, that connects to
/// the Wayland or X display to put the "default" GPU first; on a machine without a display it
/// prints `error: XDG_RUNTIME_DIR is invalid or not set in the environment.` twice, which a
/// healthy run should never print. The engine ranks the adapters itself (`adapters`), so the
/// layer changes nothing for it. An application that wants the layer sets `NODEVICE_SELECT`
/// itself (any value is left as it is). The engine calls it before its own instances; an
/// application that creates its own instance to share a device with the engine
/// (`Context::from_wgpu`) calls it first for the same quiet.
#[cfg(not(target_arch = "wasm32"))]
pub fn skip_device_select_layer() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("NODEVICE_SELECT").is_none() {
            std::env::set_var("NODEVICE_SELECT", "1");
        }
    });
}

/// Every adapter of the instance, ordered: discrete GPUs first, software adapters last.
pub(crate) async fn adapters(instance: &wgpu::Instance, backends: wgpu::Backends) -> Vec<wgpu::Adapter> {
    #[cfg(not(target_arch = "wasm32"))]
    let mut list = instance.enumerate_adapters(backends).await;
    #[cfg(target_arch = "wasm32")]
    let mut list = {
        let _ = backends;
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        };
        instance.request_adapter(&options).await.into_iter().collect::<Vec<_>>()
    };
    list.sort_by_key(|a| rank(&a.get_info()));
    list
}

/// Sort key: high performance first, as `PowerPreference::HighPerformance` would.
fn rank(info: &wgpu::AdapterInfo) -> u8 {
    match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// The first adapter whose name contains `WGPU_ADAPTER_NAME` (case-insensitive), if set.
pub(crate) fn filter_by_name(list: Vec<wgpu::Adapter>) -> Result<Vec<wgpu::Adapter>> {
    let Ok(wanted) = std::env::var("WGPU_ADAPTER_NAME") else {
        return Ok(list);
    };
    let wanted_lc = wanted.to_lowercase();
    let names: Vec<String> = list.iter().map(|a| a.get_info().name).collect();
    let kept: Vec<_> = list
        .into_iter()
        .filter(|a| a.get_info().name.to_lowercase().contains(&wanted_lc))
        .collect();
    if kept.is_empty() {
        return Err(Error::NoAdapter(format!(
            "WGPU_ADAPTER_NAME={wanted:?} matches none of {names:?}"
        )));
    }
    Ok(kept)
}

/// The value of `ENGINE_EXPERIMENTAL` that opts into wgpu's experimental cooperative matrices.
pub const COOPERATIVE_MATRIX: &str = "cooperative-matrix";

#[cfg(not(target_arch = "wasm32"))]
/// Whether `ENGINE_EXPERIMENTAL` (a comma-separated list) names `feature`. Unset is none; an
/// unknown name is an error, never ignored.
pub(crate) fn experimental(feature: &str) -> Result<bool> {
    match std::env::var("ENGINE_EXPERIMENTAL") {
        Ok(v) => Ok(experimental_names(&v)?.contains(&feature)),
        Err(_) => Ok(false),
    }
}

/// The names in a value of `ENGINE_EXPERIMENTAL`; an unknown one is an error.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
fn experimental_names(v: &str) -> Result<Vec<&str>> {
    let names: Vec<&str> = v.split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
    match names.iter().find(|&&n| n != COOPERATIVE_MATRIX) {
        Some(bad) => Err(Error::value(
            "Context::new",
            "ENGINE_EXPERIMENTAL",
            format!("a comma-separated list of {COOPERATIVE_MATRIX}"),
            bad,
        )),
        None => Ok(names),
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// Whether the adapter offers the one cooperative-matrix configuration the engine's f16
/// matmul uses: 16 x 16 x 16, f16 inputs, f32 accumulator.
fn has_f16_coop_16(adapter: &wgpu::Adapter) -> bool {
    adapter
        .features()
        .contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16)
        && adapter.cooperative_matrix_properties().iter().any(|c| {
            (c.m_size, c.n_size, c.k_size) == (16, 16, 16)
                && c.ab_type == wgpu::CooperativeScalarType::F16
                && c.cr_type == wgpu::CooperativeScalarType::F32
        })
}

/// The optional features the engine uses, where the adapter has them; cooperative matrices
/// only when `ENGINE_EXPERIMENTAL` asks for them (native only).
pub(crate) fn wanted_features(adapter: &wgpu::Adapter) -> Result<wgpu::Features> {
    #[allow(unused_mut)]
    let mut wanted = wgpu::Features::SUBGROUP | wgpu::Features::SHADER_F16 | wgpu::Features::TIMESTAMP_QUERY;
    #[cfg(not(target_arch = "wasm32"))]
    {
        wanted |= wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        if experimental(COOPERATIVE_MATRIX)? && has_f16_coop_16(adapter) {
            wanted |= wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX;
        }
    }
    Ok(adapter.features() & wanted)
}

/// Opens a device with the adapter's real limits and the wanted features.
pub(crate) async fn open(adapter: &wgpu::Adapter) -> Result<(wgpu::Device, wgpu::Queue)> {
    let required_features = wanted_features(adapter)?;
    let coop = required_features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
    let desc = wgpu::DeviceDescriptor {
        label: Some("engine device"),
        required_features,
        required_limits: adapter.limits(),
        experimental_features: if coop {
            // SAFETY: wgpu marks its experimental features unsafe because their validation is
            // incomplete. The engine asks for them only when the user opts in
            // (ENGINE_EXPERIMENTAL=cooperative-matrix), and its one kernel that uses them
            // (shaders/ops/matmul/cooperative.wgsl) loads and stores whole 16 x 16 tiles that the
            // host has checked lie inside the operands (engine/ops/matmul/select.rs).
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        },
        ..Default::default()
    };
    adapter.request_device(&desc).await.map_err(|e| Error::RequestDevice {
        adapter: adapter.get_info().name,
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn experimental_names_parse_and_unknown_ones_are_errors() {
        assert_eq!(experimental_names("").unwrap(), Vec::<&str>::new());
        assert_eq!(
            experimental_names(" cooperative-matrix ,").unwrap(),
            vec![COOPERATIVE_MATRIX]
        );
        let e = experimental_names("cooperative-matrix,warp-drive")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ENGINE_EXPERIMENTAL") && e.contains("warp-drive"), "{e}");
    }
}
