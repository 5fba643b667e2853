//! The device context: which adapter runs the ops, and everything bound to its device.
//!
//! A [`Context`] is either a GPU context (instance, adapter, device, queue, kernel cache,
//! buffer pool, pending command encoder) or the CPU reference context, on which every op runs
//! its `ndarray` reference implementation. It is `Clone` over an `Arc` and `Send + Sync`.
//!
//! The device owns what lives on it: the buffer pool (`pool`), the readback path, the only
//! synchronisation point (`readback`), and the dispatch of cached kernels (`dispatch`). The
//! kernels themselves (source, bindings, cache) are described one layer down in `kernel`.

mod adapter;
mod dispatch;
mod fastest;
pub(crate) mod forced;
pub(crate) mod gpu;
mod info;
pub(crate) mod op_scope;
pub(crate) mod pool;
mod profile;
pub(crate) mod readback;
mod timing;
pub(crate) mod tune;

use std::sync::{Arc, Once};

#[cfg(not(target_arch = "wasm32"))]
pub use adapter::skip_device_select_layer;
pub use adapter::{BackendChoice, COOPERATIVE_MATRIX};
pub use dispatch::check_wgsl;
pub use fastest::Picked;
pub(crate) use gpu::Gpu;
pub use info::{Backend, DeviceInfo, DeviceKind};
pub use pool::PoolStats;
pub use profile::{Event, KernelTime, Profile};
pub use timing::{Clock, Timed};
pub use tune::TuneItem;

use crate::error::{Error, Result};

/// Where ops run: one GPU device, or the CPU reference.
///
/// Dropping the last handle of a GPU context waits for the pipelines the tuner is still
/// building on background threads (those not begun are cancelled), so no engine thread is
/// inside the driver when the process ends: on NVIDIA's driver a process that ended during
/// such a build could die with SIGSEGV at exit. `std::process::exit` skips every drop: a
/// program that calls it drops its contexts first (or lets `main` return).
#[derive(Clone)]
pub struct Context {
    inner: Arc<Inner>,
    /// Which context this is, in order of creation (clones share it): what tells two
    /// contexts on one adapter apart in an error.
    id: u64,
}

/// The id of the next context created.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

enum Inner {
    Gpu(Box<Gpu>),
    Cpu(DeviceInfo),
}

impl Drop for Inner {
    /// The last handle is gone: with `ENGINE_PROFILE` set, print the profile.
    fn drop(&mut self) {
        #[cfg(not(target_arch = "wasm32"))]
        if let Inner::Gpu(g) = self {
            g.report_profile_at_exit();
        }
    }
}

static NO_ADAPTER_WARNING: Once = Once::new();

impl Context {
    /// The context the environment asks for (`ENGINE_BACKEND`, `WGPU_ADAPTER_NAME`), blocking.
    ///
    /// With the backend left automatic and no adapter present, this is the CPU reference
    /// context, with one warning per process; `ENGINE_REQUIRE_GPU=1` makes that an error.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new() -> Result<Self> {
        pollster::block_on(Self::new_async())
    }

    /// As [`Context::new`], without blocking (the form to use on wasm).
    pub async fn new_async() -> Result<Self> {
        let choice = BackendChoice::from_env()?;
        // Checked whatever the context: a bad `ENGINE_TUNE` is an error on the CPU reference
        // as on a GPU (`from_adapter`), not ignored.
        crate::tune::TuneMode::from_env()?;
        let backends = match choice {
            BackendChoice::Cpu => return Ok(Self::cpu()),
            BackendChoice::Auto => wgpu::Backends::all(),
            BackendChoice::Only(b) => b,
        };
        let instance = adapter::instance(backends);
        let list = adapter::filter_by_name(adapter::adapters(&instance, backends).await)?;
        match list.first() {
            Some(a) => Self::from_adapter(a).await,
            None if choice == BackendChoice::Auto && !require_gpu() => {
                NO_ADAPTER_WARNING.call_once(|| {
                    log::warn!("no GPU adapter found; running every op on the CPU reference");
                    eprintln!("engine: no GPU adapter found; running every op on the CPU reference");
                });
                Ok(Self::cpu())
            }
            None => Err(Error::NoAdapter(format!(
                "no adapter for ENGINE_BACKEND={:?}",
                std::env::var("ENGINE_BACKEND").unwrap_or_default()
            ))),
        }
    }

    /// One context per adapter present (all backends), for tests that run on every adapter.
    /// `WGPU_ADAPTER_NAME` and `ENGINE_BACKEND` narrow the list as they narrow [`Context::new`].
    pub async fn each_adapter() -> Result<Vec<Self>> {
        let backends = match BackendChoice::from_env()? {
            BackendChoice::Cpu => return Ok(vec![]),
            BackendChoice::Auto => wgpu::Backends::all(),
            BackendChoice::Only(b) => b,
        };
        let instance = adapter::instance(backends);
        let mut out = vec![];
        for a in adapter::filter_by_name(adapter::adapters(&instance, backends).await)? {
            out.push(Self::from_adapter(&a).await?);
        }
        Ok(out)
    }

    /// Opens a device on `adapter` with its real limits and the optional features it has.
    pub async fn from_adapter(adapter: &wgpu::Adapter) -> Result<Self> {
        pool::idle_bound_from_env()?;
        crate::tune::TuneMode::from_env()?;
        let (device, queue) = adapter::open(adapter).await?;
        let info = DeviceInfo::from_device(&adapter.get_info(), device.features(), &device.limits());
        Ok(Self::from_gpu(Gpu::new(device, queue, info)))
    }

    /// A context over a device the application already owns (a renderer sharing its device).
    /// The engine uses the features and limits the device was created with, and knows the
    /// adapter it was created from as the device reports it (`wgpu::Device::adapter_info`,
    /// the record the tuner's cache identity reads too): on a software adapter (lavapipe,
    /// llvmpipe) long walks stay under Mesa's loop limit as they do on a [`Context::new`]
    /// context. An adapter that does not say what it is ([`DeviceKind::Unknown`]) gets the
    /// software adapters' conservative limits.
    pub fn from_wgpu(device: wgpu::Device, queue: wgpu::Queue) -> Self {
        let info = DeviceInfo::from_device(&device.adapter_info(), device.features(), &device.limits());
        Self::from_gpu(Gpu::new(device, queue, info))
    }

    /// The CPU reference context: every op runs its `ndarray` implementation.
    pub fn cpu() -> Self {
        Context {
            inner: Arc::new(Inner::Cpu(DeviceInfo::cpu())),
            id: next_id(),
        }
    }

    fn from_gpu(gpu: Gpu) -> Self {
        Context {
            inner: Arc::new(Inner::Gpu(Box::new(gpu))),
            id: next_id(),
        }
    }

    /// What this context runs on: adapter, backend, features, limits.
    pub fn info(&self) -> &DeviceInfo {
        match &*self.inner {
            Inner::Gpu(g) => &g.info,
            Inner::Cpu(i) => i,
        }
    }

    /// True when ops run on a GPU device.
    pub fn is_gpu(&self) -> bool {
        matches!(&*self.inner, Inner::Gpu(_))
    }

    /// This context's id: distinct for every context the process creates (in order of
    /// creation, from 1), shared by its clones. Errors that mix contexts print it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// True when both handles are the same context.
    pub fn same(&self, other: &Context) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The GPU half, or `None` on the CPU reference context.
    pub(crate) fn gpu(&self) -> Option<&Gpu> {
        match &*self.inner {
            Inner::Gpu(g) => Some(g),
            Inner::Cpu(_) => None,
        }
    }

    /// The GPU half, failing with a clear error on the CPU context.
    pub(crate) fn require_gpu(&self, op: &'static str) -> Result<&Gpu> {
        self.gpu().ok_or_else(|| Error::Unsupported {
            op,
            message: "needs a GPU context; this is the CPU reference context".into(),
        })
    }

    /// Submits every recorded op to the device without waiting.
    pub fn submit(&self) {
        if let Some(g) = self.gpu() {
            g.submit();
        }
    }

    /// Blocks until every recorded op has finished (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn synchronize(&self) -> Result<()> {
        match self.gpu() {
            Some(g) => g.wait(),
            None => Ok(()),
        }
    }

    /// Bytes the buffer pool has allocated now and at its peak (0 on the CPU context).
    pub fn pool_stats(&self) -> PoolStats {
        self.gpu().map(|g| g.pool.stats()).unwrap_or_default()
    }

    /// Fills every fresh op output with `value` before the op runs (e.g. `f32::NAN`), so a
    /// kernel that leaves an element unwritten fails its test. `None` turns it off.
    pub fn set_poison(&self, value: Option<f32>) {
        if let Some(g) = self.gpu() {
            g.set_poison(value);
        }
    }

    /// How many pipelines this context has built (each is built once, then cached).
    pub fn pipelines_built(&self) -> usize {
        self.gpu().map(|g| g.kernels.len()).unwrap_or(0)
    }

    /// Kernel dispatches recorded on this context so far, eager and captured (0 on the CPU
    /// context): the difference around a piece of work counts its ops.
    pub fn dispatch_count(&self) -> usize {
        self.gpu()
            .map_or(0, |g| g.dispatched.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Releases the idle buffers the pool keeps for reuse.
    pub fn trim_pool(&self) {
        if let Some(g) = self.gpu() {
            g.pool.trim();
        }
    }

    /// Resets the pool's peak to its current allocation, to measure one workload's peak.
    pub fn reset_pool_peak(&self) {
        if let Some(g) = self.gpu() {
            g.pool.reset_peak();
        }
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Context #{} ({} / {:?})",
            self.id,
            self.info().name,
            self.info().backend
        )
    }
}

/// `ENGINE_REQUIRE_GPU=1`: a missing adapter is an error, not a CPU fallback or a skipped test.
pub fn require_gpu() -> bool {
    matches!(
        std::env::var("ENGINE_REQUIRE_GPU").as_deref(),
        Ok("1") | Ok("true") | Ok("yes")
    )
}
