//! The GPU half of a context: device, queue, pending commands, health, kernels, buffers.
//!
//! Ops record into one pending command encoder; the encoder is submitted when a result is
//! read back, when a host upload must be ordered after it, or every `SUBMIT_EVERY`
//! dispatches so the device starts early on long op chains. The dispatches' uniform
//! parameters go into a shared arena buffer ([`Arena`]) instead of a buffer each.

use std::sync::{Arc, Mutex};

use wgpu::util::DeviceExt;

use crate::context::info::DeviceInfo;
use crate::error::{Error, Result};
use crate::kernel::cache::KernelCache;
use crate::tensor::pool::BufferPool;

/// Dispatches recorded before the pending encoder is submitted anyway.
const SUBMIT_EVERY: usize = 64;

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

pub(crate) struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: DeviceInfo,
    pub kernels: KernelCache,
    pub pool: BufferPool,
    health: Arc<Health>,
    recorder: Mutex<Recorder>,
    poison: Mutex<Option<f32>>,
    /// Bytes per arena slot: 256, or the adapter's uniform offset alignment if larger.
    uniform_stride: u64,
    pub(crate) profiler: crate::context::profile::Profiler,
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
        Gpu {
            device,
            queue,
            info,
            kernels: KernelCache::default(),
            pool,
            health,
            recorder: Mutex::default(),
            poison: Mutex::default(),
            uniform_stride,
            profiler: crate::context::profile::Profiler::from_env(),
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
        let mut rec = self.recorder.lock().unwrap_or_else(|p| p.into_inner());
        Self::submit_locked(&self.queue, &mut rec);
    }

    fn submit_locked(queue: &wgpu::Queue, rec: &mut Recorder) {
        Self::flush_arena(queue, rec);
        if let Some(encoder) = rec.encoder.take() {
            queue.submit([encoder.finish()]);
        }
        rec.dispatches = 0;
    }

    /// Writes host data into a buffer, ordered after every op recorded so far.
    ///
    /// Why submit first: `queue.write_buffer` lands before the *next* submission, so writing
    /// a pooled buffer that a pending (unsubmitted) op still reads would change that op's input.
    pub fn write(&self, buffer: &wgpu::Buffer, offset: u64, bytes: &[u8]) {
        self.submit();
        self.queue.write_buffer(buffer, offset, bytes);
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
