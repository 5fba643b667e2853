//! A kernel's uniform parameters and workgroup grid: what a launch hands the device's
//! dispatch (`context::Gpu::dispatch`).

use crate::error::{Error, Result};
use crate::shape::MAX_RANK;

/// A kernel's uniform block, built field by field as 32-bit words.
///
/// Keep the WGSL struct to scalar `u32`/`i32`/`f32` fields (or `vec4<u32>` rows) in the same
/// order; the block is padded to 16 bytes as uniform layout requires.
#[derive(Clone, Debug, Default)]
pub(crate) struct Params {
    words: Vec<u32>,
}

impl Params {
    pub fn new() -> Self {
        Params::default()
    }
    pub fn u32(mut self, v: u32) -> Self {
        self.words.push(v);
        self
    }
    /// A size, stride or offset of a checked tensor (`usize` -> `u32`). Tensors hold at most
    /// [`crate::shape::MAX_ELEMENTS`] (2^32 - 1) elements and views stay in their buffer, so
    /// these fit; a value that does not saturates (never wraps) and fails a debug assertion.
    /// Arguments a caller chooses freely (a position, an offset) go through [`Params::checked`].
    pub fn usize(self, v: usize) -> Self {
        debug_assert!(u32::try_from(v).is_ok(), "kernel parameter {v} does not fit u32");
        self.u32(u32::try_from(v).unwrap_or(u32::MAX))
    }
    /// A `usize` argument of `op` that must fit the kernel's u32, or an error naming it.
    pub fn checked(self, op: &'static str, arg: &'static str, v: usize) -> Result<Self> {
        let w = u32::try_from(v).map_err(|_| Error::value(op, arg, format!("at most {} (u32)", u32::MAX), v))?;
        Ok(self.u32(w))
    }
    /// These words followed by `more`'s.
    pub fn extend(mut self, more: &Params) -> Self {
        self.words.extend_from_slice(&more.words);
        self
    }
    /// A `vec4<u32>` field: zero words first up to its 16-byte alignment (as WGSL lays the
    /// struct out), then the four values.
    pub fn vec4(mut self, v: [usize; 4]) -> Self {
        while !self.words.len().is_multiple_of(4) {
            self.words.push(0);
        }
        v.iter().fold(self, |p, &x| p.usize(x))
    }
    pub fn i32(self, v: i32) -> Self {
        self.u32(v as u32)
    }
    pub fn f32(self, v: f32) -> Self {
        self.u32(v.to_bits())
    }
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut w = self.words.clone();
        w.resize(w.len().div_ceil(4).max(1) * 4, 0);
        bytemuck::cast_slice(&w).to_vec()
    }
}

/// Appends an `array<vec4<u32>, 2>` holding up to [`MAX_RANK`] values (a shape or strides
/// row of a strided kernel's uniform).
pub(crate) fn push_dims(mut p: Params, v: &[usize]) -> Params {
    for i in 0..MAX_RANK {
        p = p.usize(v.get(i).copied().unwrap_or(0));
    }
    p
}

/// Workgroup counts for `n` workgroups along one logical axis, folded into x and y so no
/// dimension exceeds the 65535 limit. Kernels recover the index as `id.x + id.y * nwg.x`.
pub(crate) fn groups_1d(n: u32) -> [u32; 3] {
    const MAX: u32 = 65535;
    if n <= MAX {
        [n.max(1), 1, 1]
    } else {
        [MAX, n.div_ceil(MAX), 1]
    }
}
