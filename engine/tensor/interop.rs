//! Sharing a tensor's device buffer with an application's own wgpu work (a renderer that
//! binds the result as a storage buffer or copies it into a texture).

use super::{Storage, Tensor};
use crate::error::{Error, Result};

impl Tensor {
    /// The device buffer behind this dense tensor and the byte range its elements occupy, in
    /// row-major order (f32, little-endian; F16 and BF16 packed two per 32-bit word, so a
    /// half view must start at an even element).
    ///
    /// For a [`crate::Context::from_wgpu`] context whose device the application also uses.
    /// Call [`crate::Context::submit`] before submitting commands that read the buffer (the
    /// engine's recorded ops are not submitted until then), and keep the tensor alive while
    /// they run: a dropped tensor's buffer goes back to the engine's pool and is reused.
    /// Errors on the CPU context and for non-dense views (call `contiguous()` first).
    pub fn wgpu_buffer(&self) -> Result<(&wgpu::Buffer, std::ops::Range<u64>)> {
        let op = "Tensor::wgpu_buffer";
        if !self.layout.is_dense() {
            return Err(Error::shape(
                op,
                "tensor",
                "a dense view (call contiguous() first)",
                self.shape(),
            ));
        }
        let Storage::Gpu(b) = &self.storage else {
            return Err(Error::Unsupported {
                op,
                message: "the tensor is on the CPU reference context".into(),
            });
        };
        let size = self.dtype.size();
        if size == 2 && self.layout.offset % 2 == 1 {
            return Err(Error::value(
                op,
                "tensor",
                "a half view starting at an even element (a word boundary)",
                format!("offset {}", self.layout.offset),
            ));
        }
        let start = (self.layout.offset * size) as u64;
        Ok((b.buffer(), start..start + (self.len() * size) as u64))
    }
}
