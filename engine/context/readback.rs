//! Reading device buffers back to the host.
//!
//! The only synchronisation point of the engine. One async path serves both targets: a
//! staging copy, `map_async` whose callback fires a oneshot channel, then the channel is
//! awaited. Natively the device is polled first (to completion for [`read_bytes`], until the
//! copy's own submission has finished for a [`PendingRead`]), so `pollster::block_on` over it never spins; in a browser the callback fires from
//! the event loop and nothing blocks.
//!
//! [`read_bytes`] starts a read and awaits it at once; a [`PendingRead`] splits the two, so a
//! caller keeps several reads in flight while the device runs ahead (compiled generation
//! reads each chunk's ids back while the next chunk runs).

use super::Gpu;
use crate::error::{Error, Result};

type MapDone = futures_intrusive::channel::shared::OneshotReceiver<std::result::Result<(), wgpu::BufferAsyncError>>;

/// Copies `bytes` bytes from `offset` of `buffer` to the host.
pub(crate) async fn read_bytes(gpu: &Gpu, buffer: &wgpu::Buffer, offset: u64, bytes: u64) -> Result<Vec<u8>> {
    let mut read = PendingRead::start(gpu, buffer, offset, bytes)?;
    // Waits for the whole device, as a blocking read always has: a device lost meanwhile
    // then reports as such.
    read.submission = None;
    read.finish(gpu).await
}

/// A read of a buffer range on its way to the host: the copy is recorded and submitted, and
/// its staging buffer is being mapped.
pub(crate) struct PendingRead {
    /// None for an empty read.
    staging: Option<wgpu::Buffer>,
    /// Bytes of the 4-byte aligned copy before the range read.
    skip: usize,
    bytes: usize,
    /// The copy's submission (None: wait for the whole device).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    submission: Option<wgpu::SubmissionIndex>,
    done: Option<MapDone>,
}

impl PendingRead {
    /// Copies `bytes` bytes from `offset` of `buffer` behind every op recorded so far,
    /// submits, and starts mapping them. Fails inside a plan capture (a plan only records GPU
    /// work).
    pub(crate) fn start(gpu: &Gpu, buffer: &wgpu::Buffer, offset: u64, bytes: u64) -> Result<PendingRead> {
        gpu.check("readback")?;
        if gpu.capturing() {
            return Err(Error::Unsupported {
                op: "Plan::capture",
                message: "an op reads a result back to the host inside a plan capture; a plan only records GPU work"
                    .into(),
            });
        }
        if bytes == 0 {
            return Ok(PendingRead {
                staging: None,
                skip: 0,
                bytes: 0,
                submission: None,
                done: None,
            });
        }
        // copy_buffer_to_buffer needs 4-byte aligned offsets and sizes.
        let start = offset & !3;
        let size = (offset + bytes).next_multiple_of(4) - start;
        let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback staging"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        gpu.record(|enc| enc.copy_buffer_to_buffer(buffer, start, &staging, 0, size));
        let submission = gpu.submit_index();
        let (tx, done) = futures_intrusive::channel::shared::oneshot_channel();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        Ok(PendingRead {
            staging: Some(staging),
            skip: (offset - start) as usize,
            bytes: bytes as usize,
            submission,
            done: Some(done),
        })
    }

    /// Waits for this read (natively: for its own submission only; in a browser the map
    /// callback fires from the event loop) and returns its bytes.
    pub(crate) async fn finish(self, gpu: &Gpu) -> Result<Vec<u8>> {
        let (Some(staging), Some(done)) = (self.staging, self.done) else {
            return Ok(vec![]);
        };
        // A device lost while waiting reports as such (the map fails as a consequence).
        #[cfg(not(target_arch = "wasm32"))]
        {
            let wait = match self.submission {
                Some(index) => wgpu::PollType::Wait {
                    submission_index: Some(index),
                    timeout: None,
                },
                None => wgpu::PollType::wait_indefinitely(),
            };
            if let Err(e) = gpu.device.poll(wait) {
                gpu.check("readback")?;
                return Err(Error::Map(format!("waiting for the device: {e}")));
            }
        }
        match done.receive().await {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                gpu.check("readback")?;
                return Err(Error::Map(e.to_string()));
            }
            None => {
                gpu.check("readback")?;
                return Err(Error::Map("the map callback was dropped (device lost?)".into()));
            }
        }
        gpu.check("readback")?;
        let view = staging.get_mapped_range(..).map_err(|e| Error::Map(e.to_string()))?;
        let out = view[self.skip..self.skip + self.bytes].to_vec();
        drop(view);
        staging.unmap();
        Ok(out)
    }
}
