//! The one recurrence launch: how every recurrence kernel (the four scans, the mixers'
//! angle-fused scans, generated element scans) walks T on the GPU. A new scan kernel's
//! launch is a [`Launch`] with its [`Passes`]; it plans nothing of its own.
//!
//! A launch is `lanes` independent walks of `t` steps in one direction. It plans the
//! [`Strategy`] ([`strategy::walk`]: lane walks, or chunked passes) and the segments (a lane
//! walk is split into dispatches of at most [`strategy::max_segment`] steps on the adapters
//! that cap a shader's loops), writes the one uniform header every recurrence kernel's
//! `Params` opens with (`struct Launch` in `shaders/recurrence/launch.wgsl`, the shared prelude
//! that also holds the invocation index and the chunk bounds), and records the dispatches:
//!
//! | pass | invocations | header |
//! | --- | --- | --- |
//! | [`Pass::Lanes`] | lanes x `walk`, once per segment in scan order | `t_begin`, `t_end` of the segment |
//! | [`Pass::ChunkReduce`] | lanes x chunks x `reduce` | `chunk`, `chunks` |
//! | [`Pass::Carries`] | lanes x `walk` | `chunk`, `chunks` |
//! | [`Pass::ChunkFixup`] | lanes x chunks x `walk` | `chunk`, `chunks` |
//! | [`Pass::LookBackClear`] | the `side` words | `chunk`, `chunks` |
//! | [`Pass::LookBack`] | lanes (rounded up to workgroups) x chunks | `chunk`, `chunks` |
//!
//! `walk` and `reduce` ([`Columns`]) are the invocations a kernel spends per lane: one per
//! value column for the affine scans, K + 1 product columns for a chunk reduce, and so on;
//! nothing here assumes one element per invocation. What a kernel keeps between segments
//! or chunks (its `side` scratch) and its own uniform words after the header are its own.
//!
//! The walk plans are `super::strategy`'s and the look-back's `super::lookback`'s; this file
//! imports them, never the reverse.

use std::sync::Arc;

use super::lookback;
use super::strategy::{self, Cost, Strategy, Walk};
use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::{groups_1d, Kernel, KernelDef, Params};

/// The shared prelude of the recurrence kernels (`shaders/recurrence/launch.wgsl`).
pub(crate) const PRELUDE: &str = include_str!("../../shaders/recurrence/launch.wgsl");

/// Invocations per workgroup of every recurrence entry point: `WG` in [`PRELUDE`], read from
/// there at compile time so the WGSL is the one place it is written.
pub(crate) const WORKGROUP: usize = const_u32(PRELUDE.as_bytes(), b"const WG: u32 = ");

/// The value `<n>` of the line `<key><n>u;` in the WGSL `src`, e.g. `const WG: u32 = 64u;` (a
/// compile error when absent or not positive).
pub(crate) const fn const_u32(src: &[u8], key: &[u8]) -> usize {
    let mut i = 0;
    while i + key.len() <= src.len() {
        let mut j = 0;
        while j < key.len() && src[i + j] == key[j] {
            j += 1;
        }
        if j == key.len() {
            let mut k = i + j;
            let mut n = 0;
            while k < src.len() && src[k].is_ascii_digit() {
                n = n * 10 + (src[k] - b'0') as usize;
                k += 1;
            }
            assert!(n > 0, "a WGSL constant read at compile time is not a positive integer");
            return n;
        }
        i += 1;
    }
    panic!("a WGSL constant read at compile time is not declared")
}

/// Workgroups for `invocations` invocations of a recurrence (or mixer gate) entry point.
pub(crate) fn groups(invocations: usize) -> [u32; 3] {
    groups_1d(invocations.div_ceil(WORKGROUP) as u32)
}

/// Invocations per lane: in the walking passes (lanes, carries, fix-up) and in the chunk
/// reduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Columns {
    pub walk: usize,
    pub reduce: usize,
}

/// One dispatch kind of a launch; the caller maps each to its kernel's entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Pass {
    /// One invocation per (lane, column) walks a segment of T.
    Lanes,
    /// Chunked pass 1: each chunk's transition and local state from zero.
    ChunkReduce,
    /// Chunked pass 2: one walk over the chunk carries per (lane, column).
    Carries,
    /// Chunked pass 3: each chunk rerun from its incoming carry, writing the output.
    ChunkFixup,
    /// Look-back pass 1: zeroes the ticket and flag words in `side`.
    LookBackClear,
    /// Look-back pass 2: every chunk of every lane in one pass.
    LookBack,
}

/// `lanes` walks of `t` steps in one direction, planned for one device.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Launch {
    pub lanes: usize,
    pub t: usize,
    pub reverse: bool,
    pub columns: Columns,
    pub walk: Walk,
}

impl Launch {
    /// Plans `lanes` walks of `t` steps costing `cost` loop trips on `gpu`'s adapter.
    pub fn new(
        gpu: &Gpu,
        strategy: Strategy,
        lanes: usize,
        t: usize,
        reverse: bool,
        columns: Columns,
        cost: Cost,
    ) -> Self {
        let walk = strategy::walk(strategy, lanes * columns.walk, t, cost, &gpu.info);
        Launch {
            lanes,
            t,
            reverse,
            columns,
            walk,
        }
    }

    /// The look-back launch of `lanes` walks of `t` steps, each `width` channels wide, when
    /// `strategy` (or `Auto`) picks one on `gpu`'s adapter ([`lookback::lookback`]); for
    /// kernels that have the passes.
    pub fn lookback(
        gpu: &Gpu,
        strategy: Strategy,
        lanes: usize,
        width: usize,
        t: usize,
        reverse: bool,
    ) -> Option<Self> {
        let walk = lookback::lookback(strategy, lanes, width, t, &gpu.info)?;
        Some(Launch {
            lanes,
            t,
            reverse,
            columns: Columns { walk: 1, reduce: 1 },
            walk,
        })
    }

    /// `(chunk length, chunk count)` of a chunked walk.
    pub fn chunks(&self) -> Option<(usize, usize)> {
        match self.walk {
            Walk::Chunked { len, count } => Some((len, count)),
            Walk::Lanes { .. } | Walk::LookBack { .. } => None,
        }
    }

    /// The `side` words of a look-back walk ([`lookback::lookback_words`]).
    pub fn lookback_words(&self) -> Option<usize> {
        match self.walk {
            Walk::LookBack { count, width, .. } => Some(lookback::lookback_words(self.lanes * width, count)),
            _ => None,
        }
    }

    /// Whether a lane walk runs in more than one segment.
    pub fn segmented(&self) -> bool {
        matches!(self.walk, Walk::Lanes { segment } if segment < self.t)
    }

    /// The uniform header (`struct Launch` of the prelude) for one dispatch.
    fn header(&self, begin: usize, end: usize) -> Params {
        let (chunk, chunks) = match self.walk {
            Walk::LookBack { len, count, .. } => (len, count),
            _ => self.chunks().unwrap_or((self.t, 1)),
        };
        Params::new()
            .usize(self.lanes)
            .usize(self.t)
            .usize(begin)
            .usize(end)
            .usize(chunk)
            .usize(chunks)
            .u32(0)
            .u32(0)
    }

    /// Records the walk's dispatches: `kernel(pass)` is the pipeline of each pass, `tail` the
    /// kernel's own uniform words after the header, `buffers` its storage bindings.
    pub fn run(
        &self,
        gpu: &Gpu,
        kernel: impl Fn(Pass) -> Result<Arc<Kernel>>,
        tail: &Params,
        buffers: &[&wgpu::Buffer],
    ) -> Result<()> {
        let walk = self.lanes * self.columns.walk;
        match self.walk {
            Walk::Lanes { segment } => {
                let lanes = kernel(Pass::Lanes)?;
                for (begin, end) in strategy::segments(self.t, segment, self.reverse) {
                    gpu.dispatch(&lanes, &self.header(begin, end).extend(tail), buffers, groups(walk))?;
                }
            }
            Walk::Chunked { count, .. } => {
                let params = self.header(0, self.t).extend(tail);
                let per_chunk = self.lanes * count;
                let passes = [
                    (Pass::ChunkReduce, per_chunk * self.columns.reduce),
                    (Pass::Carries, walk),
                    (Pass::ChunkFixup, per_chunk * self.columns.walk),
                ];
                for (pass, invocations) in passes {
                    gpu.dispatch(&kernel(pass)?, &params, buffers, groups(invocations))?;
                }
            }
            Walk::LookBack { count, width, .. } => {
                let params = self.header(0, self.t).extend(tail);
                let words = lookback::lookback_words(self.lanes * width, count);
                let tickets = walk.div_ceil(WORKGROUP) * WORKGROUP * count;
                gpu.dispatch(&kernel(Pass::LookBackClear)?, &params, buffers, groups(words))?;
                gpu.dispatch(&kernel(Pass::LookBack)?, &params, buffers, groups(tickets))?;
            }
        }
        Ok(())
    }
}

/// A hand-written recurrence kernel's entry points, indexed by [`Pass`]: lanes, chunk
/// reduce, carries, fix-up.
pub(crate) type Passes = [KernelDef; 4];

/// The [`Passes`] of kernel `$name` in the shader `$file` (a path of the shader table: a file
/// under `shaders/`, or a width kernel generated from a `.widths` description) whose entry
/// points have the usual names `scan_lanes`, `scan_chunk_reduce`, `scan_carries`, `scan_chunk_fixup`.
macro_rules! passes {
    ($name:tt, $file:tt) => {
        [
            $crate::kernel::KernelDef::new($name, $crate::kernel::shader!($file), "scan_lanes"),
            $crate::kernel::KernelDef::new($name, $crate::kernel::shader!($file), "scan_chunk_reduce"),
            $crate::kernel::KernelDef::new($name, $crate::kernel::shader!($file), "scan_carries"),
            $crate::kernel::KernelDef::new($name, $crate::kernel::shader!($file), "scan_chunk_fixup"),
        ]
    };
}
pub(crate) use passes;

impl Launch {
    /// [`Launch::run`] over hand-written `passes` specialised by `constants`, their dtype
    /// slots (`kernel::dtype`) set to `dtypes` (none: a kernel without slots).
    pub fn run_passes(
        &self,
        gpu: &Gpu,
        passes: &Passes,
        dtypes: &[(&str, crate::shape::DType)],
        constants: &[(&'static str, f64)],
        tail: &Params,
        buffers: &[&wgpu::Buffer],
    ) -> Result<()> {
        let kernel = |pass| {
            let def = pass_def(passes, pass)?;
            if dtypes.is_empty() {
                gpu.kernel(def, constants)
            } else {
                gpu.typed_kernel(def, dtypes, constants)
            }
        };
        self.run(gpu, kernel, tail, buffers)
    }
}

/// The entry point of `pass` among `passes`: the four passes every hand-written kernel has
/// (a look-back plan is only made for kernels that bring their own look-back passes).
pub(crate) fn pass_def(passes: &Passes, pass: Pass) -> Result<&KernelDef> {
    passes.get(pass as usize).ok_or_else(|| crate::error::Error::Gpu {
        context: passes[0].name.to_string(),
        message: format!("{pass:?} is not one of this kernel's passes"),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_workgroup_size_comes_from_the_prelude() {
        assert!(super::PRELUDE.contains(&format!("const WG: u32 = {}u;", super::WORKGROUP)));
    }
}
