//! Timing a region of recorded ops on the device, for benchmarks (never for tests).
//!
//! With `TIMESTAMP_QUERY_INSIDE_ENCODERS` the region is bracketed by two timestamps written
//! into the command stream, so the figure is device time only. Otherwise (browsers, some
//! drivers) it is wall-clock time around the region with a full wait on both sides.

#[cfg(not(target_arch = "wasm32"))]
use super::readback::read_bytes;
use super::Context;
#[cfg(not(target_arch = "wasm32"))]
use crate::error::Result;

/// How a [`Timed`] figure was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// GPU timestamp queries around the region.
    Timestamps,
    /// Host wall clock around the region, after waiting for the device on both sides.
    WallClock,
}

/// A measured region.
#[derive(Clone, Copy, Debug)]
pub struct Timed {
    /// Duration of the region in seconds.
    pub seconds: f64,
    /// How it was measured.
    pub clock: Clock,
}

impl Context {
    /// Runs `f` (which records ops), waits for it, and returns its result and duration.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn time<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<(R, Timed)> {
        let Some(gpu) = self.gpu().filter(|g| {
            g.device
                .features()
                .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
        }) else {
            self.synchronize()?;
            let start = std::time::Instant::now();
            let r = f()?;
            self.synchronize()?;
            return Ok((
                r,
                Timed {
                    seconds: start.elapsed().as_secs_f64(),
                    clock: Clock::WallClock,
                },
            ));
        };
        let queries = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("region timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolved = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("region timestamps resolved"),
            size: wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        gpu.wait()?;
        gpu.record(|e| e.write_timestamp(&queries, 0));
        let r = f()?;
        gpu.record(|e| {
            e.write_timestamp(&queries, 1);
            e.resolve_query_set(&queries, 0..2, &resolved, 0);
        });
        let bytes = pollster::block_on(read_bytes(gpu, &resolved, 0, 16))?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
        let ns = ticks[1].saturating_sub(ticks[0]) as f64 * gpu.queue.get_timestamp_period() as f64;
        Ok((
            r,
            Timed {
                seconds: ns * 1e-9,
                clock: Clock::Timestamps,
            },
        ))
    }
}
