//! The GPU half of a context: device, queue, pending commands, health, kernels, buffers.
//!
//! Ops record into one pending command encoder; the encoder is submitted when a result is
//! read back, when a host upload must be ordered after it, or every `SUBMIT_EVERY`
//! dispatches so the device starts early on long op chains. The dispatches' uniform
//! parameters go into a shared arena buffer ([`Arena`]) instead of a buffer each.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use wgpu::util::DeviceExt;

use crate::context::info::DeviceInfo;
use crate::context::pool::{BufferPool, PooledBuffer};
use crate::error::{Error, Result};
use crate::kernel::cache::{Kernel, KernelCache};

/// Dispatches recorded before the pending encoder is submitted anyway.
const SUBMIT_EVERY: usize = 64;
/// Bytes of host data staged per `write_buffer` by [`Gpu::write`].
const WRITE_PIECE: usize = 16 << 20;

/// Errors the device reported outside any error scope, and whether it was lost.
#[derive(Default)]
pub(crate) struct Health {
    lost: Mutex<Option<String>>,
    uncaptured: Mutex<Option<String>>,
}

/// Commands recorded but not yet submitted.
#[derive(Default)]
struct Recorder {
    encoder: Option<wgpu::CommandEncoder>,
    dispatches: usize,
    arena: Option<Arena>,
}

/// Uniform parameters of recent dispatches, one aligned slot each, in one buffer.
///
/// Why: a uniform buffer per dispatch is a device allocation per dispatch, a large part of
/// the host cost of short kernels (GPT-2 decode, training steps). The slots' bytes collect on
/// the host and reach the buffer in ONE queue write issued just before the submit that first
/// uses them (queue writes land before the next submission). A slot is written once and never
/// reused, so no pending dispatch can see another's parameters; a full arena is flushed and
/// replaced, and wgpu keeps it alive while recorded commands still bind it.
struct Arena {
    buffer: wgpu::Buffer,
    bytes: Vec<u8>,
}

/// Slots per arena buffer.
const ARENA_SLOTS: u64 = SUBMIT_EVERY as u64;

/// Dispatches recorded into a plan instead of the pending encoder (see `crate::plan`).
///
/// Only the thread that started the capture records into it; ops of other threads sharing
/// the context run eagerly as usual. Tensors the captured ops allocate come from the
/// capture's own pool, so a buffer freed by one captured op is reused by a later one (reuse
/// by liveness) and none of them is ever handed to an eager op.
pub(crate) struct Capture {
    pub thread: ThreadId,
    pub pool: BufferPool,
    /// Every buffer `pool` created, to tell the plan's own buffers from outside ones.
    pub owned: Vec<wgpu::Buffer>,
    pub dispatches: Vec<CapturedDispatch>,
    /// The first thing the captured work did that a replay could not repeat.
    pub error: Option<String>,
    /// The tuner's choices the captured ops made, one line each (`Plan::dump` lists them).
    pub choices: Vec<String>,
    /// Set by the plan's first replay: until then its buffers hold nothing it computed, and
    /// reading one back is an error (`PooledBuffer::awaiting_replay`).
    pub replayed: Arc<std::sync::atomic::AtomicBool>,
}

/// One captured dispatch: its kernel, uniform bytes, storage buffers and grid.
pub(crate) struct CapturedDispatch {
    pub kernel: Arc<Kernel>,
    pub params: Option<Vec<u8>>,
    pub buffers: Vec<wgpu::Buffer>,
    pub groups: [u32; 3],
    /// What an elementwise dispatch computes, kept by the layer that made it for the plan's
    /// fusion pass (`crate::fused::fuse_captured`); `None` for every other kernel.
    pub fusible: Option<Fusible>,
}

/// A captured dispatch's payload for the fusion pass: `Send` natively, where contexts are
/// shared between threads; in a browser wgpu's handles are not `Send`, nor is anything else.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type Fusible = Box<dyn std::any::Any + Send>;
#[cfg(target_arch = "wasm32")]
pub(crate) type Fusible = Box<dyn std::any::Any>;

pub(crate) struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: DeviceInfo,
    pub kernels: KernelCache,
    pub pool: BufferPool,
    health: Arc<Health>,
    recorder: Mutex<Recorder>,
    poison: Mutex<Option<f32>>,
    /// Captures in progress, at most one per thread.
    captures: Mutex<Vec<Capture>>,
    /// Dispatches made through [`Gpu::dispatch`] so far, captured ones included (op counts).
    pub dispatched: std::sync::atomic::AtomicUsize,
    /// Bytes per arena slot: 256, or the adapter's uniform offset alignment if larger.
    uniform_stride: u64,
    pub(crate) profiler: crate::context::profile::Profiler,
    /// The measured choices between the ops' correct paths (`crate::tune`).
    pub(crate) tuner: crate::tune::Tuner,
}

impl Gpu {
    pub fn new(device: wgpu::Device, queue: wgpu::Queue, info: DeviceInfo) -> Self {
        let health = Arc::new(Health::default());
        let lost = health.clone();
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut slot) = lost.lost.lock() {
                slot.get_or_insert(format!("{reason:?}: {message}"));
            }
        });
        // wgpu's default handler panics; keep the first error and report it from the next call.
        let uncaptured = health.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut slot) = uncaptured.uncaptured.lock() {
                slot.get_or_insert(e.to_string());
            }
        }));
        let pool = BufferPool::new(device.clone(), info.max_buffer_size);
        let uniform_stride = u64::from(device.limits().min_uniform_buffer_offset_alignment).max(256);
        let kernels = KernelCache::new(info.backend != wgpu::Backend::Gl);
        // Contexts check `ENGINE_TUNE` before they get here (`Context::from_adapter` fails on a
        // bad value); a device handed over by the application warns instead.
        let mode = crate::tune::TuneMode::from_env().unwrap_or_else(|e| {
            log::warn!("{e}; tuning as `cached`");
            eprintln!("engine: {e}; tuning as `cached`");
            crate::tune::TuneMode::Cached
        });
        let tuner = crate::tune::Tuner::new(crate::context::tune::identity(&device), mode);
        // Background builds pay on a GPU, whose compiles take host cores the device does not
        // need. On a software adapter a compile takes the cores the candidates are timed on,
        // and GL builds on its one context.
        tuner.set_background(!info.is_software() && info.backend != wgpu::Backend::Gl);
        Gpu {
            device,
            queue,
            info,
            kernels,
            pool,
            health,
            recorder: Mutex::default(),
            poison: Mutex::default(),
            captures: Mutex::default(),
            dispatched: Default::default(),
            uniform_stride,
            profiler: crate::context::profile::Profiler::from_env(),
            tuner,
        }
    }

    /// A uniform binding holding `params`: a slot of the current arena, or a buffer of its
    /// own when the parameters do not fit a slot.
    pub(crate) fn uniform(&self, params: &[u8]) -> (wgpu::Buffer, u64, u64) {
        let stride = self.uniform_stride;
        if params.len() as u64 > stride {
            let buffer = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("params"),
                contents: params,
                usage: wgpu::BufferUsages::UNIFORM,
            });
            return (buffer, 0, params.len() as u64);
        }
        let mut rec = self.recorder.lock().unwrap_or_else(|p| p.into_inner());
        if rec
            .arena
            .as_ref()
            .is_some_and(|a| a.bytes.len() as u64 + stride > a.buffer.size())
        {
            Self::flush_arena(&self.queue, &mut rec);
        }
        let arena = rec.arena.get_or_insert_with(|| Arena {
            buffer: self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("params arena"),
                size: stride * ARENA_SLOTS,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            bytes: Vec::with_capacity((stride * ARENA_SLOTS) as usize),
        });
        let offset = arena.bytes.len() as u64;
        arena.bytes.extend_from_slice(params);
        arena.bytes.resize((offset + stride) as usize, 0);
        (arena.buffer.clone(), offset, stride)
    }

    /// Queues the arena's bytes (they land before the next submission) and retires it.
    fn flush_arena(queue: &wgpu::Queue, rec: &mut Recorder) {
        if let Some(arena) = rec.arena.take() {
            queue.write_buffer(&arena.buffer, 0, &arena.bytes);
        }
    }

    /// Runs `f` on this thread's capture in progress, if there is one.
    pub(crate) fn with_capture<R>(&self, f: impl FnOnce(&mut Capture) -> R) -> Option<R> {
        let mut captures = self.captures.lock().unwrap_or_else(|p| p.into_inner());
        let here = std::thread::current().id();
        captures.iter_mut().find(|c| c.thread == here).map(f)
    }

    /// True while this thread captures a plan.
    pub(crate) fn capturing(&self) -> bool {
        self.with_capture(|_| ()).is_some()
    }

    /// Starts capturing this thread's dispatches; fails if this thread already captures
    /// (other threads may capture their own plans at the same time).
    pub(crate) fn begin_capture(&self) -> Result<()> {
        let mut captures = self.captures.lock().unwrap_or_else(|p| p.into_inner());
        let here = std::thread::current().id();
        if captures.iter().any(|c| c.thread == here) {
            return Err(Error::Unsupported {
                op: "Plan::capture",
                message: "a plan capture cannot start inside another one".into(),
            });
        }
        captures.push(Capture {
            thread: here,
            pool: BufferPool::unbounded(self.device.clone(), self.info.max_buffer_size),
            owned: Vec::new(),
            dispatches: Vec::new(),
            error: None,
            choices: Vec::new(),
            replayed: Arc::default(),
        });
        Ok(())
    }

    /// Ends this thread's capture and returns what it recorded.
    pub(crate) fn end_capture(&self) -> Option<Capture> {
        let mut captures = self.captures.lock().unwrap_or_else(|p| p.into_inner());
        let here = std::thread::current().id();
        let i = captures.iter().position(|c| c.thread == here)?;
        Some(captures.swap_remove(i))
    }

    /// A storage buffer of at least `bytes` bytes: from the capture's pool while this thread
    /// captures a plan, else from the context's pool.
    pub(crate) fn acquire(&self, bytes: u64) -> PooledBuffer {
        let captured = self.with_capture(|c| {
            let b = c.pool.acquire(bytes).for_plan(c.replayed.clone());
            if !c.owned.contains(b.buffer()) {
                c.owned.push(b.buffer().clone());
            }
            b
        });
        captured.unwrap_or_else(|| self.pool.acquire(bytes))
    }

    /// Fails if the device was lost or reported an error nobody caught since the last check.
    pub fn check(&self, context: &str) -> Result<()> {
        if let Some(msg) = self.health.lost.lock().ok().and_then(|s| s.clone()) {
            return Err(Error::DeviceLost(msg));
        }
        if let Some(message) = self.health.uncaptured.lock().ok().and_then(|mut s| s.take()) {
            return Err(Error::Gpu {
                context: context.to_string(),
                message,
            });
        }
        Ok(())
    }

    /// The value fresh outputs are filled with, if poisoning is on (tests).
    pub fn poison(&self) -> Option<f32> {
        *self.poison.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_poison(&self, value: Option<f32>) {
        *self.poison.lock().unwrap_or_else(|p| p.into_inner()) = value;
    }

    /// Records commands into the pending encoder.
    pub fn record<R>(&self, f: impl FnOnce(&mut wgpu::CommandEncoder) -> R) -> R {
        let mut rec = self.recorder.lock().unwrap_or_else(|p| p.into_inner());
        let encoder = rec.encoder.get_or_insert_with(|| {
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("engine ops"),
            })
        });
        let out = f(encoder);
        rec.dispatches += 1;
        if rec.dispatches >= SUBMIT_EVERY {
            Self::submit_locked(&self.queue, &mut rec);
        }
        out
    }

    /// Submits whatever is pending. Host writes issued after this are ordered after it.
    pub fn submit(&self) {
        self.submit_index();
    }

    /// Submits whatever is pending and returns the index of that submission, if any.
    pub fn submit_index(&self) -> Option<wgpu::SubmissionIndex> {
        let mut rec = self.recorder.lock().unwrap_or_else(|p| p.into_inner());
        Self::submit_locked(&self.queue, &mut rec)
    }

    fn submit_locked(queue: &wgpu::Queue, rec: &mut Recorder) -> Option<wgpu::SubmissionIndex> {
        Self::flush_arena(queue, rec);
        rec.dispatches = 0;
        rec.encoder.take().map(|encoder| queue.submit([encoder.finish()]))
    }

    /// Writes host data into a buffer, ordered after every op recorded so far.
    ///
    /// Why submit first: `queue.write_buffer` lands before the *next* submission, so writing
    /// a pooled buffer that a pending (unsubmitted) op still reads would change that op's input.
    ///
    /// Inside a plan capture an upload cannot be replayed, so it fails the capture.
    pub fn write(&self, buffer: &wgpu::Buffer, offset: u64, bytes: &[u8]) {
        self.with_capture(|c| {
            let after = c
                .dispatches
                .last()
                .map_or("the start".to_string(), |a| format!("kernel `{}`", a.kernel.name));
            let who = super::op_scope::describe().unwrap_or_else(|| "an op".to_string());
            c.error.get_or_insert(format!(
                "{who} uploads host data ({} bytes, after {after}); a replay could not repeat it: \
                 pass such data in as a tensor written before each replay",
                bytes.len()
            ));
        });
        self.submit();
        // A large write in pieces, each submitted before the next is staged: one write of a
        // whole tensor stages all of it at once (a second 1 GiB on the device for a 1 GiB
        // tensor).
        let mut pieces = bytes.chunks(WRITE_PIECE).enumerate().peekable();
        while let Some((k, piece)) = pieces.next() {
            self.queue
                .write_buffer(buffer, offset + (k * WRITE_PIECE) as u64, piece);
            if pieces.peek().is_some() {
                self.queue.submit([]);
            }
        }
    }

    /// Blocks until the device has finished everything submitted (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn wait(&self) -> Result<()> {
        self.submit();
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Gpu {
                context: "wait".into(),
                message: e.to_string(),
            })?;
        self.check("wait")
    }
}
