//! The pipeline cache: (shader, entry point, specialization) -> compute pipeline.
//!
//! A pipeline is built once even when two threads ask for it at the same moment: the map
//! hands out one slot per key under a short lock, and the slot's own mutex serialises the
//! build, so the second thread waits for the first and then finds the pipeline. A failed
//! build leaves the slot empty and returns the error (with kernel name, message and WGSL).
//!
//! Natively a thread may also ask for background builds ([`DeferBuilds`]): the tuner's warm-ups
//! of candidates other than the hand rule. A miss then starts the build on a thread of its own
//! and fails at once ([`DeferBuilds::deferred`] says so), so a call that tunes never waits for
//! a candidate's compile: a driver takes up to 3x longer on a wide candidate than on the hand
//! rule's kernel, and that wait was all of what tuning added. The tuner times the candidate
//! once its pipelines are built ([`KernelCache::building`] is 0).
//!
//! The cache owns those threads: dropping it (the context's last handle) cancels the builds
//! not yet begun and waits for the ones inside the driver's compiler. Why: a process that
//! ended while a detached build was inside NVIDIA's pipeline compiler died with SIGSEGV at
//! exit (3 runs of 33 on an H200, driver 580). A program that ends with
//! `std::process::exit` skips every drop: it drops its contexts first.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{Binding, KernelKey, KernelSource};
use crate::error::{Error, Result};

/// A compiled compute pipeline and the layout of its bindings.
pub struct Kernel {
    pub(crate) name: String,
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) layout: wgpu::BindGroupLayout,
    pub(crate) bindings: Vec<Binding>,
    /// The entry point's `@workgroup_size`, read from the WGSL by naga: the one place a
    /// kernel's workgroup size is written. Launches derive their workgroup counts from it.
    pub(crate) workgroup_size: [u32; 3],
}

type Slot = Arc<Mutex<Option<Arc<Kernel>>>>;

thread_local! {
    /// True while this thread's misses build in the background ([`DeferBuilds`]).
    static DEFER: Cell<bool> = const { Cell::new(false) };
    /// True once a miss of this thread was deferred since its [`DeferBuilds`] began.
    static DEFERRED: Cell<bool> = const { Cell::new(false) };
}

/// While alive, a pipeline this thread asks for and the cache lacks is built on a thread of
/// its own, and the request fails at once (`Error::Unsupported`, "still building"). For runs
/// whose result is dropped: the tuner's warm-ups. Never in a browser (nothing is tuned there).
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
pub(crate) struct DeferBuilds;

#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
impl DeferBuilds {
    pub fn start() -> Self {
        DEFER.with(|d| d.set(true));
        DEFERRED.with(|d| d.set(false));
        DeferBuilds
    }

    /// Whether a request of this thread was deferred since [`DeferBuilds::start`].
    pub fn deferred(&self) -> bool {
        DEFERRED.with(Cell::get)
    }
}

impl Drop for DeferBuilds {
    fn drop(&mut self) {
        DEFER.with(|d| d.set(false));
    }
}

/// Background builds in flight, and the keys whose background build failed (a later
/// deferred request fails at once rather than build it again; a plain request builds it and
/// returns the error).
#[derive(Default)]
struct Background {
    building: AtomicUsize,
    /// Set when the cache is dropped: a build thread that has not begun its build skips it.
    closing: std::sync::atomic::AtomicBool,
    /// The build threads, joined when the cache is dropped.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// Microseconds of build time spent on background threads, in all.
    micros: AtomicUsize,
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    failed: Mutex<HashSet<KernelKey>>,
}

pub(crate) struct KernelCache {
    slots: Mutex<HashMap<KernelKey, Slot>>,
    /// Whether pipelines zero their workgroup memory before the kernel runs (see `new`).
    zero_workgroup_memory: bool,
    background: Arc<Background>,
}

impl KernelCache {
    /// A cache for one device. `zero_workgroup_memory` false skips the zero fill of workgroup
    /// variables that WGSL promises: on the GL backend naga writes it as one array constructor
    /// of every element, which llvmpipe compiles for minutes (a cold first token on
    /// llvmpipe GL took 250 s, 134 s of it the decode attention's 3072 workgroup floats, 62 s
    /// the head's 3648, 34 s the sampler's). Every kernel writes each workgroup element
    /// before it reads it (the tests check the results on GL), so nothing depends on the fill.
    pub fn new(zero_workgroup_memory: bool) -> KernelCache {
        KernelCache {
            slots: Mutex::default(),
            zero_workgroup_memory,
            background: Arc::default(),
        }
    }

    /// The pipeline for `key`, built from `source()` on the first request.
    pub fn get(
        &self,
        device: &wgpu::Device,
        key: &KernelKey,
        source: impl FnOnce() -> Result<KernelSource>,
    ) -> Result<Arc<Kernel>> {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            slots.entry(key.clone()).or_default().clone()
        };
        #[cfg(not(target_arch = "wasm32"))]
        if DEFER.with(Cell::get) {
            return self.get_or_defer(device, key, slot, source);
        }
        let mut built = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = &*built {
            return Ok(k.clone());
        }
        let kernel = Arc::new(build(device, key, &source()?, self.zero_workgroup_memory)?);
        *built = Some(kernel.clone());
        Ok(kernel)
    }

    /// [`KernelCache::get`] for a thread inside [`DeferBuilds`]: the pipeline if built, else
    /// its build started on a thread of its own (unless one is under way) and an error.
    #[cfg(not(target_arch = "wasm32"))]
    fn get_or_defer(
        &self,
        device: &wgpu::Device,
        key: &KernelKey,
        slot: Slot,
        source: impl FnOnce() -> Result<KernelSource>,
    ) -> Result<Arc<Kernel>> {
        let still_building = || {
            DEFERRED.with(|d| d.set(true));
            Err(Error::Unsupported {
                op: "tuner warm-up",
                message: format!(
                    "pipeline {}::{} is still building in the background",
                    key.name, key.entry
                ),
            })
        };
        let built = match slot.try_lock() {
            Ok(b) => b,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return still_building(),
        };
        if let Some(k) = &*built {
            return Ok(k.clone());
        }
        drop(built);
        let lock_failed = |p: std::sync::PoisonError<_>| p.into_inner();
        if self.background.failed.lock().unwrap_or_else(lock_failed).contains(key) {
            return Err(Error::Unsupported {
                op: "tuner warm-up",
                message: format!("pipeline {}::{} failed to build", key.name, key.entry),
            });
        }
        let src = source()?;
        let (device, key, zero) = (device.clone(), key.clone(), self.zero_workgroup_memory);
        let background = self.background.clone();
        background.building.fetch_add(1, Ordering::SeqCst);
        let spawned = std::thread::Builder::new()
            .name("engine-pipeline-build".into())
            .spawn(move || {
                let mut built = slot.lock().unwrap_or_else(|p| p.into_inner());
                if built.is_none() && !background.closing.load(Ordering::SeqCst) {
                    let began = std::time::Instant::now();
                    match build(&device, &key, &src, zero) {
                        Ok(k) => *built = Some(Arc::new(k)),
                        Err(_) => {
                            background.failed.lock().unwrap_or_else(|p| p.into_inner()).insert(key);
                        }
                    }
                    let micros = began.elapsed().as_micros().min(usize::MAX as u128) as usize;
                    background.micros.fetch_add(micros, Ordering::SeqCst);
                }
                drop(built);
                background.building.fetch_sub(1, Ordering::SeqCst);
            });
        match spawned {
            Ok(handle) => {
                let mut threads = self.background.threads.lock().unwrap_or_else(|p| p.into_inner());
                threads.retain(|t| !t.is_finished());
                threads.push(handle);
            }
            Err(_) => {
                self.background.building.fetch_sub(1, Ordering::SeqCst);
            }
        }
        still_building()
    }

    /// Background builds still under way.
    pub fn building(&self) -> usize {
        self.background.building.load(Ordering::SeqCst)
    }

    /// Milliseconds of build time spent on background threads so far.
    pub fn background_ms(&self) -> f64 {
        self.background.micros.load(Ordering::SeqCst) as f64 / 1e3
    }

    /// Waits until no background build is under way.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn wait_background(&self) {
        while self.building() > 0 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// How many pipelines have been built.
    pub fn len(&self) -> usize {
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots
            .values()
            .filter(|s| s.lock().map(|k| k.is_some()).unwrap_or(false))
            .count()
    }
}

impl Drop for KernelCache {
    /// No build thread outlives the cache: those not yet building skip their build, the
    /// others are waited for (see the module doc).
    fn drop(&mut self) {
        self.background.closing.store(true, Ordering::SeqCst);
        let threads = std::mem::take(&mut *self.background.threads.lock().unwrap_or_else(|p| p.into_inner()));
        for t in threads {
            // A build thread that panicked has nothing left to wait for.
            let _ = t.join();
        }
    }
}

/// With `ENGINE_LOG_PIPELINES=1` (read once), one stderr line per pipeline built: its name,
/// override constants, build time (naga, the driver's compile) and when it ended (ms since the
/// first build began), to find the kernels a driver takes long to compile (llvmpipe GL with a
/// cold shader cache) and whether builds on several threads overlap.
#[cfg(not(target_arch = "wasm32"))]
fn log_build(name: &str, constants: &[(std::borrow::Cow<'static, str>, u64)], took: std::time::Duration) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var("ENGINE_LOG_PIPELINES").is_ok_and(|v| v == "1")) {
        let c: Vec<String> = constants
            .iter()
            .map(|(n, v)| format!("{n}={}", f64::from_bits(*v)))
            .collect();
        static T0: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        let t0 = *T0.get_or_init(|| std::time::Instant::now() - took);
        eprintln!(
            "pipeline {name} [{}] built in {:.1} ms, ended at {:.1} ms",
            c.join(","),
            took.as_secs_f64() * 1e3,
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
}

/// Validates the WGSL with naga (a synchronous error on every platform, wasm included),
/// then builds the module and pipeline inside a validation error scope.
fn build(device: &wgpu::Device, key: &KernelKey, src: &KernelSource, zero_workgroup_memory: bool) -> Result<Kernel> {
    #[cfg(not(target_arch = "wasm32"))]
    let started = std::time::Instant::now();
    let name = format!("{}::{}", key.name, key.entry);
    let shader_error = |message: String| Error::Shader {
        kernel: name.clone(),
        message,
        wgsl: src.wgsl.to_string(),
    };
    let (workgroup_size, declared) = reflect(&src.wgsl, &key.entry).map_err(shader_error)?;
    let bindings = if src.bindings.is_empty() {
        declared
    } else {
        src.bindings.clone()
    };

    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(&name),
        source: wgpu::ShaderSource::Wgsl(super::for_the_adapter(device, &src.wgsl)),
    });
    let entries: Vec<_> = bindings
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match b {
                    Binding::Uniform => wgpu::BufferBindingType::Uniform,
                    Binding::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    Binding::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(&name),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&name),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let constants: Vec<(&str, f64)> = key
        .constants
        .iter()
        .map(|(n, v)| (n.as_ref(), f64::from_bits(*v)))
        .collect();
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(&name),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some(&key.entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &constants,
            zero_initialize_workgroup_memory: zero_workgroup_memory,
        },
        cache: None,
    });
    // Natively the scope resolves at once; in a browser it resolves later, so there the
    // naga validation above is the synchronous check and later errors reach `Gpu::check`.
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(shader_error(e.to_string()));
    }
    #[cfg(target_arch = "wasm32")]
    drop(scope);
    #[cfg(not(target_arch = "wasm32"))]
    log_build(&name, &key.constants, started.elapsed());
    Ok(Kernel {
        name,
        pipeline,
        layout,
        bindings,
        workgroup_size,
    })
}

/// Validates `wgsl` with naga and reads what the WGSL already says: the `@workgroup_size` of
/// the entry point `entry` (a size set by an `override` reads as 0; launches of such kernels
/// size their grids themselves) and the module's `@group(0)` bindings in binding order
/// (`var<uniform>`, `var<storage, read>`, `var<storage, read_write>`).
fn reflect(wgsl: &str, entry: &str) -> std::result::Result<([u32; 3], Vec<Binding>), String> {
    let module = parse_and_validate(wgsl)?;
    let ep = module
        .entry_points
        .iter()
        .find(|e| e.name == entry)
        .ok_or_else(|| format!("no entry point `{entry}`"))?;
    let workgroup_size = if ep.workgroup_size_overrides.is_some() {
        [0; 3]
    } else {
        ep.workgroup_size
    };
    let mut slots: Vec<(u32, Binding)> = vec![];
    for (_, var) in module.global_variables.iter() {
        let Some(rb) = &var.binding else { continue };
        if rb.group != 0 {
            return Err(format!(
                "binding {} is in group {}; kernels bind group 0 only",
                rb.binding, rb.group
            ));
        }
        let kind = match var.space {
            naga::AddressSpace::Uniform => Binding::Uniform,
            naga::AddressSpace::Storage { access } if access.contains(naga::StorageAccess::STORE) => Binding::ReadWrite,
            naga::AddressSpace::Storage { .. } => Binding::Read,
            other => {
                return Err(format!(
                    "binding {}: address space {other:?} is not a buffer",
                    rb.binding
                ))
            }
        };
        slots.push((rb.binding, kind));
    }
    slots.sort_by_key(|(i, _)| *i);
    if slots.iter().enumerate().any(|(i, (b, _))| *b as usize != i) {
        return Err(format!(
            "bindings {:?}: kernels number their bindings 0, 1, 2, ...",
            slots.iter().map(|(b, _)| b).collect::<Vec<_>>()
        ));
    }
    Ok((workgroup_size, slots.into_iter().map(|(_, k)| k).collect()))
}

/// Parses and validates WGSL with naga; the message names the line and the problem.
pub(crate) fn validate_wgsl(wgsl: &str) -> std::result::Result<(), String> {
    parse_and_validate(wgsl).map(|_| ())
}

fn parse_and_validate(wgsl: &str) -> std::result::Result<naga::Module, String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let mut validator =
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
    validator.validate(&module).map_err(|e| e.emit_to_string(wgsl))?;
    Ok(module)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// Dropping the cache waits for its build threads (issue #41: a build inside the driver
    /// when the process ended crashed it on NVIDIA), and tells those not yet building to skip.
    #[test]
    fn dropping_the_cache_joins_its_build_threads() {
        let cache = KernelCache::new(true);
        let finished = Arc::new(AtomicBool::new(false));
        let (done, background) = (finished.clone(), cache.background.clone());
        let thread = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            // What a build thread checks before it begins: the cache is being dropped.
            assert!(background.closing.load(Ordering::SeqCst));
            done.store(true, Ordering::SeqCst);
        });
        cache.background.threads.lock().unwrap().push(thread);
        drop(cache);
        assert!(
            finished.load(Ordering::SeqCst),
            "the drop returned before its build thread ended"
        );
    }
}
