//! The one recurrence launch: how every recurrence kernel (the four scans, the mixers'
//! angle-fused scans, generated element scans) walks T on the GPU.
//!
//! A launch is `lanes` independent walks of `t` steps in one direction. It plans the
//! [`Strategy`] ([`strategy::walk`]: lane walks, or chunked passes) and the segments (a lane
//! walk is split into dispatches of at most [`strategy::max_segment`] steps on the adapters
//! that cap a shader's loops), writes the one uniform header every recurrence kernel's
//! `Params` opens with (`struct Launch` in `shaders/scan/launch.wgsl`, the shared prelude
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
//! Long (past the 500 lines a file gets elsewhere) because every pass of the table above is
//! planned and recorded here; the recurrence layer of issue #30 item 2 will restructure it,
//! so it is kept whole until then.

use std::sync::Arc;

use super::strategy::{self, Walk};
pub(crate) use super::strategy::{Cost, Strategy};
use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::{groups_1d, Kernel, KernelDef, Params};

/// The shared prelude of the recurrence kernels (`shaders/scan/launch.wgsl`).
pub(crate) const PRELUDE: &str = include_str!("../../shaders/scan/launch.wgsl");

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
    /// `strategy` (or `Auto`) picks one on `gpu`'s adapter ([`strategy::lookback`]); for
    /// kernels that have the passes.
    pub fn lookback(
        gpu: &Gpu,
        strategy: Strategy,
        lanes: usize,
        width: usize,
        t: usize,
        reverse: bool,
    ) -> Option<Self> {
        let walk = strategy::lookback(strategy, lanes, width, t, &gpu.info)?;
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

    /// The `side` words of a look-back walk ([`strategy::lookback_words`]).
    pub fn lookback_words(&self) -> Option<usize> {
        match self.walk {
            Walk::LookBack { count, width, .. } => Some(strategy::lookback_words(self.lanes * width, count)),
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
                let words = strategy::lookback_words(self.lanes * width, count);
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

/// The [`Passes`] of kernel `$name` in the shader file `$file` whose entry points have the
/// usual names `scan_lanes`, `scan_chunk_reduce`, `scan_carries`, `scan_chunk_fixup`.
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

/// A channel scan's look-back passes (clear, then the one pass) by width: four, two and one
/// channel an invocation.
pub(crate) type LookBacks = [[KernelDef; 2]; 3];

/// The [`LookBacks`] of the look-back kernels in the shader files `$quad`, `$pair` and
/// `$scalar` (entry points `scan_lookback_clear` and `scan_lookback`).
macro_rules! lookbacks {
    ($quad:tt, $pair:tt, $scalar:tt) => {
        [
            $crate::scan::launch::lookbacks!(@one $quad),
            $crate::scan::launch::lookbacks!(@one $pair),
            $crate::scan::launch::lookbacks!(@one $scalar),
        ]
    };
    (@one $file:tt) => {
        [
            $crate::kernel::KernelDef::new($file, $crate::kernel::shader!($file), "scan_lookback_clear"),
            $crate::kernel::KernelDef::new($file, $crate::kernel::shader!($file), "scan_lookback"),
        ]
    };
}
pub(crate) use lookbacks;

/// Channel walks (B x channels) from which a channel-wise scan carries four channels per
/// invocation: the vec4 walks alone must still number 65536, about 16 warps on each of the
/// H200's 132 SMs.
///
/// Why: the bytes in flight are the same either way (a vec4 invocation issues a quarter as
/// many walks' loads, each four times as wide), but hiding HBM latency takes warps to switch
/// between. At B16 D4096 (65536 walks) on the H200, four channels per invocation (four warps
/// per SM, eight steps' loads ahead) measured 4.07 ms (0.79 TB/s), and one channel per
/// invocation 2.07 ms. (An earlier probe's 0.97 ms for one channel per invocation read buffers
/// that were never written, which the H200 serves far faster than data: the bench's walk
/// peers fill theirs first.)
pub(crate) const VEC4_WALKS: usize = 4 * 65_536;

/// Channels one invocation of a channel-wise scan carries, for `walks` = B x `channels`
/// independent channel walks of `channels` adjacent channels per time step: 4 (one
/// `vec4<f32>` load per input and step) when they divide into fours and there are at least
/// [`VEC4_WALKS`] walks, else 1. The kernels index in these units, so the rows of
/// (B, T, channels) stay aligned.
pub(crate) fn vector_width(channels: usize, walks: usize) -> usize {
    if channels.is_multiple_of(4) && walks >= VEC4_WALKS {
        4
    } else {
        1
    }
}

impl Launch {
    /// [`Launch::run`] over hand-written `passes` specialised by `constants`.
    pub fn run_passes(
        &self,
        gpu: &Gpu,
        passes: &Passes,
        constants: &[(&'static str, f64)],
        tail: &Params,
        buffers: &[&wgpu::Buffer],
    ) -> Result<()> {
        self.run(
            gpu,
            |pass| gpu.kernel(pass_def(passes, pass)?, constants),
            tail,
            buffers,
        )
    }

    /// [`Launch::run_passes`] over passes with dtype slots (`kernel::dtype`) set to `dtypes`.
    pub fn run_typed_passes(
        &self,
        gpu: &Gpu,
        passes: &Passes,
        dtypes: &[(&str, crate::shape::DType)],
        constants: &[(&'static str, f64)],
        tail: &Params,
        buffers: &[&wgpu::Buffer],
    ) -> Result<()> {
        self.run(
            gpu,
            |pass| gpu.typed_kernel(pass_def(passes, pass)?, dtypes, constants),
            tail,
            buffers,
        )
    }
}

/// The entry point of `pass` among `passes`: the four passes every hand-written kernel has
/// (a look-back plan is only made for kernels that bring their own look-back passes).
fn pass_def(passes: &Passes, pass: Pass) -> Result<&KernelDef> {
    passes.get(pass as usize).ok_or_else(|| crate::error::Error::Gpu {
        context: passes[0].name.to_string(),
        message: format!("{pass:?} is not one of this kernel's passes"),
    })
}

/// A channel scan's kernels by width (`dtype_width`: four, two or one channel an invocation),
/// its look-back passes by width ([`LookBacks`]) and its dtype slots: the inputs (every
/// width) and the outputs (the widths that write whole packed words; the one-channel kernels
/// write f32).
pub(crate) struct ChannelKernels {
    pub vec4: Passes,
    pub pair: Passes,
    pub scalar: Passes,
    pub lookback: LookBacks,
    pub inputs: &'static [&'static str],
    pub outputs: &'static [&'static str],
}

/// A channel scan's tuner key: B x channels, channels and T bucketed, then the op, the
/// direction and `labels`.
fn channel_key(op: &str, (channels, walks, t): (usize, usize, usize), reverse: bool, labels: &[&str]) -> String {
    let mut all = vec![op, if reverse { "reverse" } else { "" }];
    all.extend_from_slice(labels);
    crate::tune::key::shape_key(&[("walks", walks), ("c", channels), ("t", t)], &[("c", channels)], &all)
}

/// A planned channel scan: the launch, the channels an invocation carries and the storage dtype.
pub(crate) struct ChannelPlan {
    pub launch: Launch,
    pub w: usize,
    pub dtype: crate::shape::DType,
}

impl ChannelKernels {
    /// Plans `walks` = B x `channels` channel walks of `t` steps over `dtype` storage: one
    /// look-back pass when `strategy` (or `Auto`) picks it, at the width [`lookback_width`]
    /// gives; else lane walks or chunked passes at the width [`dtype_width`] gives.
    ///
    /// `width` (a candidate of [`ChannelKernels::widths`]) replaces the hand rule's width of
    /// a lane or chunked plan and keeps its plan: the same segments or chunks, so every
    /// channel walks the same steps in the same order, a quarter or half as many invocations.
    pub fn plan(
        &self,
        gpu: &Gpu,
        strategy: Strategy,
        dtype: crate::shape::DType,
        (channels, walks, t): (usize, usize, usize),
        reverse: bool,
        width: Option<usize>,
    ) -> ChannelPlan {
        let w = lookback_width(channels);
        if let Some(launch) = Launch::lookback(gpu, strategy, walks / w, w, t, reverse) {
            return ChannelPlan { launch, w, dtype };
        }
        let w = dtype_width(dtype, channels, walks);
        let columns = Columns { walk: 1, reduce: 1 };
        let mut launch = Launch::new(gpu, strategy, walks / w, t, reverse, columns, Cost::block(1));
        match width {
            Some(other) if other != w && channels.is_multiple_of(other) => {
                launch.lanes = walks / other;
                ChannelPlan {
                    launch,
                    w: other,
                    dtype,
                }
            }
            _ => ChannelPlan { launch, w, dtype },
        }
    }

    /// The tuner's candidates for the width of a channel scan: the hand rule's width first,
    /// then the others the channels divide into (four, two, one); `None` for a look-back
    /// plan, whose width is its own. Every width walks each channel through the same
    /// `linear_walk.wgsl` / `log_walk.wgsl` steps over `F` = `vec4`, `vec2` or `f32`
    /// componentwise: the same bits. A half dtype keeps to the widths that write whole packed
    /// words (four, two): its one-channel kernel writes f32 and narrows after, another path.
    pub fn widths(
        &self,
        gpu: &Gpu,
        strategy: Strategy,
        dtype: crate::shape::DType,
        (channels, walks, t): (usize, usize, usize),
    ) -> Option<(usize, Vec<usize>)> {
        let lw = lookback_width(channels);
        if strategy::lookback(strategy, walks / lw, lw, t, &gpu.info).is_some() {
            return None;
        }
        let hand = dtype_width(dtype, channels, walks);
        let others = [4, 2, 1]
            .into_iter()
            .filter(|&w| w != hand && channels.is_multiple_of(w) && !(dtype.is_half() && w == 1))
            .collect();
        Some((hand, others))
    }

    /// The width the tuner picks for this channel scan (`crate::tune::Family::ChannelScan`)
    /// among [`ChannelKernels::widths`], `run` being the op at a forced width; `None` for a
    /// look-back plan. The key names the op, direction, dtype, strategy and the hand plan's
    /// kind, with B x channels, channels and T bucketed.
    #[allow(clippy::too_many_arguments)]
    pub fn choose_width(
        &self,
        ctx: &crate::Context,
        gpu: &Gpu,
        op: &'static str,
        strategy: Strategy,
        dtype: crate::shape::DType,
        dims: (usize, usize, usize),
        reverse: bool,
        run: impl Fn(usize) -> Result<()> + crate::tune::MaybeSync,
    ) -> Option<usize> {
        let (hand, others) = self.widths(gpu, strategy, dtype, dims)?;
        let key = || {
            let kind = self.plan(gpu, strategy, dtype, dims, reverse, None).launch.walk.kind();
            channel_key(op, dims, reverse, &[&dtype.to_string(), &strategy.to_string(), kind])
        };
        Some(ctx.choose(crate::tune::Family::ChannelScan, key, hand, &others, width_name, run))
    }

    /// The strategy a channel scan runs: `strategy` itself unless it is [`Strategy::Tuned`],
    /// whose walk the tuner picks (`crate::tune::Family::ScanWalk`) among `Auto` (the hand
    /// rule) and the other walks that plan differently here (`LookBack` where the adapter
    /// runs it, `Lanes`, `Chunked`), `run` being the op under a forced strategy. The key
    /// names the op, direction and dtype, with B x channels, channels and T bucketed.
    #[allow(clippy::too_many_arguments)]
    pub fn choose_strategy(
        &self,
        ctx: &crate::Context,
        gpu: &Gpu,
        op: &'static str,
        strategy: Strategy,
        dtype: crate::shape::DType,
        dims: (usize, usize, usize),
        reverse: bool,
        run: impl Fn(Strategy) -> Result<()> + crate::tune::MaybeSync,
    ) -> Strategy {
        if strategy != Strategy::Tuned {
            return strategy;
        }
        let kind = |s: Strategy| self.plan(gpu, s, dtype, dims, reverse, None).launch.walk.kind();
        let hand = kind(Strategy::Auto);
        let others: Vec<Strategy> = [Strategy::LookBack, Strategy::Lanes, Strategy::Chunked { chunk: None }]
            .into_iter()
            .filter(|&s| kind(s) != hand)
            .collect();
        let key = || channel_key(op, dims, reverse, &[&dtype.to_string()]);
        let name = |s: Strategy| match s {
            Strategy::LookBack => "lookback",
            Strategy::Lanes => "lanes",
            Strategy::Chunked { .. } => "chunked",
            _ => "auto",
        };
        ctx.choose(crate::tune::Family::ScanWalk, key, Strategy::Auto, &others, name, run)
    }

    /// Records `plan`'s dispatches, the kernels specialised by `constants`.
    pub fn run(
        &self,
        gpu: &Gpu,
        plan: &ChannelPlan,
        constants: &[(&'static str, f64)],
        tail: &Params,
        buffers: &[&wgpu::Buffer],
    ) -> Result<()> {
        let (passes, lookback) = match plan.w {
            4 => (&self.vec4, &self.lookback[0]),
            2 => (&self.pair, &self.lookback[1]),
            _ => (&self.scalar, &self.lookback[2]),
        };
        let outputs = if plan.w == 1 { &[][..] } else { self.outputs };
        let slots: Vec<_> = self.inputs.iter().chain(outputs).map(|&s| (s, plan.dtype)).collect();
        // The look-back passes also take SPIN and WITHHOLD (built only when the plan is a
        // look-back).
        let with_spin = || -> Vec<(&'static str, f64)> {
            let spin = ("SPIN", f64::from(strategy::lookback_spin(&gpu.info)));
            let withhold = ("WITHHOLD", f64::from(u8::from(strategy::lookback_withheld())));
            constants.iter().copied().chain([spin, withhold]).collect()
        };
        let kernel = |pass: Pass| match pass {
            Pass::LookBackClear => gpu.typed_kernel(&lookback[0], &slots, &with_spin()),
            Pass::LookBack => gpu.typed_kernel(&lookback[1], &slots, &with_spin()),
            _ => gpu.typed_kernel(pass_def(passes, pass)?, &slots, constants),
        };
        plan.launch.run(gpu, kernel, tail, buffers)
    }
}

impl ChannelPlan {
    /// The kernels' `side` scratch (f32 words): the chunks' two values per lane, a segmented
    /// walk's state, the look-back's ticket and flag words, or one F value where unused.
    pub fn side(&self, ctx: &crate::Context, op: &'static str) -> Result<crate::tensor::Tensor> {
        let (launch, w) = (&self.launch, self.w);
        let words = match (launch.chunks(), launch.lookback_words()) {
            (Some((_, chunks)), _) => chunks * 2 * launch.lanes * w,
            (None, Some(words)) => words,
            (None, None) if launch.segmented() => launch.lanes * w,
            (None, None) => w,
        };
        crate::tensor::Tensor::uninit(ctx, &[words], op)
    }
}

/// A width's name in the tune cache and the plan dump (the WGSL's `width_*.wgsl` names).
fn width_name(width: usize) -> &'static str {
    match width {
        4 => "quad",
        2 => "pair",
        _ => "scalar",
    }
}

/// Channels one invocation of a look-back pass carries: four (vec4 loads) when the channels
/// divide into fours, else two when they are even, else one (whose outputs the kernel keeps
/// in f32 and a half caller narrows afterwards). The chunks give the parallelism, so unlike
/// the lane walks no walk count is needed for the wide loads.
pub(crate) fn lookback_width(channels: usize) -> usize {
    if channels.is_multiple_of(4) {
        4
    } else if channels.is_multiple_of(2) {
        2
    } else {
        1
    }
}

/// Channels one invocation of a channel-wise scan over `dtype` storage carries: f32 as
/// [`vector_width`] says; a half 4 or 2 (whole packed words per step, so no two invocations
/// write one word) when the channels divide so, else 1, whose outputs the kernel keeps in
/// f32 and the caller narrows afterwards (a word-owning conversion).
pub(crate) fn dtype_width(dtype: crate::shape::DType, channels: usize, walks: usize) -> usize {
    match vector_width(channels, walks) {
        1 if dtype.is_half() && channels.is_multiple_of(2) => 2,
        w => w,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_workgroup_size_comes_from_the_prelude() {
        assert!(super::PRELUDE.contains(&format!("const WG: u32 = {}u;", super::WORKGROUP)));
    }
}
