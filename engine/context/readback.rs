//! Reading device buffers back to the host.
//!
//! The only synchronisation point of the engine. One async path serves both targets: a
//! staging copy, `map_async` whose callback fires a oneshot channel, then the channel is
//! awaited. Natively the device is polled to completion first, so `pollster::block_on` over
//! it never spins; in a browser the callback fires from the event loop and nothing blocks.

use super::Gpu;
use crate::error::{Error, Result};

/// Copies `bytes` bytes from `offset` of `buffer` to the host.
pub(crate) async fn read_bytes(gpu: &Gpu, buffer: &wgpu::Buffer, offset: u64, bytes: u64) -> Result<Vec<u8>> {
    gpu.check("readback")?;
    if gpu.capturing() {
        return Err(Error::Unsupported {
            op: "Plan::capture",
            message: "an op reads a result back to the host inside a plan capture; a plan only records GPU work".into(),
        });
    }
    if bytes == 0 {
        return Ok(vec![]);
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
    gpu.submit();

    let (tx, rx) = futures_intrusive::channel::shared::oneshot_channel();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    // A device lost while waiting reports as such (the map fails as a consequence).
    #[cfg(not(target_arch = "wasm32"))]
    if let Err(e) = gpu.device.poll(wgpu::PollType::wait_indefinitely()) {
        gpu.check("readback")?;
        return Err(Error::Map(format!("waiting for the device: {e}")));
    }
    match rx.receive().await {
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
    let skip = (offset - start) as usize;
    let out = view[skip..skip + bytes as usize].to_vec();
    drop(view);
    staging.unmap();
    Ok(out)
}
