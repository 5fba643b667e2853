//! The channel scans' plans (`linear_scan` at k = v = 1, `parallel_scan_log`): how many
//! adjacent channels an invocation carries (four, two or one: `F` = `vec4`, `vec2` or `f32`
//! in `shaders/scan/linear_walk.wgsl` / `log_walk.wgsl` and the look-back kernels), their
//! kernels by width ([`ChannelKernels`]; `build.rs` generates a scan's six from its one
//! `.widths` description, `shaders/scan/linear.widths`), the tuner's choice of width and walk, the `side`
//! scratch a plan needs, and the dispatches, recorded through the recurrence launch
//! (`crate::recurrence::launch`).

use super::route::ScanOptions;
use crate::context::Gpu;
use crate::error::Result;
use crate::kernel::Params;
use crate::recurrence::launch::{pass_def, Columns, Launch, Pass, Passes};
use crate::recurrence::lookback::{self, LookBacks};
use crate::recurrence::strategy::{Cost, Strategy};
use crate::tensor::Tensor;

/// Channel walks (B x channels) from which a channel-wise scan carries four channels per
/// invocation: four times the lane count from which a walk runs lane-sequential on a GPU
/// (`recurrence::strategy`), so the vec4 walks alone still fill the device.
///
/// Why four: what keeps HBM busy is the bytes each invocation has in flight. On the H200
/// (`dev/src/bin/walk_probe.rs`, B16 T4096 D4096 f32, fresh random data) one channel per
/// invocation moved 40% of the vec4 copy however many steps it loaded ahead (8 or 16) and
/// whatever the workgroup size; four channels per invocation (vec4 loads, 16384 invocations,
/// four warps an SM) with 16 steps ahead moved 101-105%.
pub(crate) const VEC4_WALKS: usize = 4 * 8192;

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

// `channel_kernels!("scan/NAME.widths")`: a scan's `ChannelKernels`, written by `build.rs`
// from the description (its six kernels and its `inputs:` / `outputs:` slots).
include!(concat!(env!("OUT_DIR"), "/channel_kernels.rs"));
pub(crate) use channel_kernels;

/// A channel scan's kernels by width (`dtype_width`: four, two or one channel an invocation),
/// its look-back passes by width ([`LookBacks`]) and its dtype slots: the inputs (every
/// width) and the outputs (the widths that write whole packed words; the one-channel kernels
/// write f32): what its `.widths` description generates (`build.rs`), made by
/// [`channel_kernels!`] from that description alone.
pub(crate) struct ChannelKernels {
    pub vec4: Passes,
    pub vec2: Passes,
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

/// One channel scan call: the device, the op (named in the tuner's keys), the storage dtype,
/// `dims` = (channels, walks = B x channels, T) and the direction.
#[derive(Clone, Copy)]
pub(crate) struct ChannelCall<'a> {
    pub gpu: &'a Gpu,
    pub op: &'static str,
    pub dtype: crate::shape::DType,
    pub dims: (usize, usize, usize),
    pub reverse: bool,
}

/// A planned channel scan: the launch, the channels an invocation carries and the storage dtype.
pub(crate) struct ChannelPlan {
    pub launch: Launch,
    pub w: usize,
    pub dtype: crate::shape::DType,
}

impl ChannelKernels {
    /// Plans `call`'s `walks` = B x `channels` channel walks of `t` steps over its dtype: one
    /// look-back pass when `strategy` (or `Auto`) picks it, at the width [`lookback_width`]
    /// gives; else lane walks or chunked passes at the width [`dtype_width`] gives.
    ///
    /// `width` (a candidate of [`ChannelKernels::widths`]) replaces the hand rule's width of
    /// a lane or chunked plan and keeps its plan: the same segments or chunks, so every
    /// channel walks the same steps in the same order, a quarter or half as many invocations.
    pub fn plan(&self, call: &ChannelCall<'_>, strategy: Strategy, width: Option<usize>) -> ChannelPlan {
        let ChannelCall {
            gpu, dtype, reverse, ..
        } = *call;
        let (channels, walks, t) = call.dims;
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
    pub fn widths(&self, call: &ChannelCall<'_>, strategy: Strategy) -> Option<(usize, Vec<usize>)> {
        let (gpu, dtype, (channels, walks, t)) = (call.gpu, call.dtype, call.dims);
        let lw = lookback_width(channels);
        if lookback::lookback(strategy, walks / lw, lw, t, &gpu.info).is_some() {
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
    pub fn choose_width(
        &self,
        ctx: &crate::Context,
        call: &ChannelCall<'_>,
        strategy: Strategy,
        run: impl Fn(usize) -> Result<()> + crate::tune::MaybeSync,
    ) -> Option<usize> {
        let (hand, others) = self.widths(call, strategy)?;
        let key = || {
            let kind = self.plan(call, strategy, None).launch.walk.kind();
            let labels = [&call.dtype.to_string(), &strategy.to_string(), kind];
            channel_key(call.op, call.dims, call.reverse, &labels)
        };
        Some(ctx.choose(crate::tune::Family::ChannelScan, key, hand, &others, width_name, run))
    }

    /// The strategy a channel scan runs: `strategy` itself unless it is [`Strategy::Tuned`],
    /// whose walk the tuner picks (`crate::tune::Family::ScanWalk`) among `Auto` (the hand
    /// rule) and the other walks that plan differently here (`LookBack` where the adapter
    /// runs it, `Lanes`, `Chunked`), `run` being the op under a forced strategy. The key
    /// names the op, direction and dtype, with B x channels, channels and T bucketed.
    pub fn choose_strategy(
        &self,
        ctx: &crate::Context,
        call: &ChannelCall<'_>,
        strategy: Strategy,
        run: impl Fn(Strategy) -> Result<()> + crate::tune::MaybeSync,
    ) -> Strategy {
        if strategy != Strategy::Tuned {
            return strategy;
        }
        let kind = |s: Strategy| self.plan(call, s, None).launch.walk.kind();
        let hand = kind(Strategy::Auto);
        let others: Vec<Strategy> = [Strategy::LookBack, Strategy::Lanes, Strategy::Chunked { chunk: None }]
            .into_iter()
            .filter(|&s| kind(s) != hand)
            .collect();
        let key = || channel_key(call.op, call.dims, call.reverse, &[&call.dtype.to_string()]);
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
            2 => (&self.vec2, &self.lookback[1]),
            _ => (&self.scalar, &self.lookback[2]),
        };
        let outputs = if plan.w == 1 { &[][..] } else { self.outputs };
        let slots: Vec<_> = self.inputs.iter().chain(outputs).map(|&s| (s, plan.dtype)).collect();
        // The look-back passes also take SPIN and WITHHOLD (built only when the plan is a
        // look-back).
        let with_spin = || -> Vec<(&'static str, f64)> {
            let spin = ("SPIN", f64::from(lookback::lookback_spin(&gpu.info)));
            let withhold = ("WITHHOLD", f64::from(u8::from(lookback::lookback_withheld())));
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

/// What one channel scan binds, in binding order: the inputs (bindings 1-4: the first always
/// bound, an absent one bound to the first again, a read-only alias the kernel ignores), the
/// outputs (bindings 5 and 6, then 8 on: `side` is binding 7) by shape, `None` where the
/// direction writes nothing there (a scratch of one F value is bound), and the kernel's
/// uniform words after the launch header for a width.
pub(crate) struct ChannelBindings<'a> {
    pub first: &'a Tensor,
    pub inputs: [Option<&'a Tensor>; 3],
    pub outputs: &'a [Option<Vec<usize>>],
    pub tail: &'a dyn Fn(usize) -> Params,
}

impl ChannelKernels {
    /// The one launch of every channel scan: picks the walk and the width (the tuner's,
    /// `rerun` being the whole op under a forced strategy or width, or the hand rule's),
    /// binds `bind`'s tensors (made contiguous) with fresh outputs and the plan's `side`,
    /// records the plan's dispatches with `REVERSE` set from the call, and returns the
    /// outputs in `bind.outputs` order. An output the one-channel kernel wrote in f32 for a
    /// half call is narrowed to the call's dtype (each value rounded once).
    pub fn launch<R>(
        &self,
        call: &ChannelCall<'_>,
        bind: &ChannelBindings<'_>,
        opts: &ScanOptions,
        width: Option<usize>,
        rerun: &R,
    ) -> Result<Vec<Tensor>>
    where
        R: Fn(&ScanOptions, Option<usize>) -> Result<()> + crate::tune::MaybeSync,
    {
        let (ctx, op, gpu) = (bind.first.context(), call.op, call.gpu);
        let strategy = self.choose_strategy(ctx, call, opts.strategy, |s| rerun(&opts.with_strategy(s), width));
        let opts = &opts.with_strategy(strategy);
        let width = width.or_else(|| self.choose_width(ctx, call, opts.strategy, |w| rerun(opts, Some(w))));
        let first = bind.first.contiguous()?;
        let inputs = bind
            .inputs
            .iter()
            .map(|t| t.map(Tensor::contiguous).transpose())
            .collect::<Result<Vec<_>>>()?;
        let plan = self.plan(call, opts.strategy, width);
        let w = plan.w;
        // The kernel's output dtype: the inputs' at the vec2 and vec4 widths, else f32.
        let out_dtype = if w == 1 { crate::DType::F32 } else { call.dtype };
        let outputs = bind
            .outputs
            .iter()
            .map(|shape| match shape {
                Some(shape) => Tensor::uninit_dtype(ctx, shape, out_dtype, op),
                None => Tensor::uninit(ctx, &[w], op),
            })
            .collect::<Result<Vec<_>>>()?;
        let side = plan.side(ctx, op)?;
        let first_buf = first.typed_buffer(op)?;
        let mut buffers = vec![first_buf];
        for input in &inputs {
            buffers.push(match input {
                Some(t) => t.typed_buffer(op)?,
                None => first_buf,
            });
        }
        for out in &outputs {
            buffers.push(out.typed_buffer(op)?);
        }
        // `side` is binding 7: after the four inputs and the first two outputs.
        buffers.insert(6, side.gpu_buffer(op)?);
        let constants = [("REVERSE", if call.reverse { 1.0 } else { 0.0 })];
        self.run(gpu, &plan, &constants, &(bind.tail)(w), &buffers)?;
        outputs
            .into_iter()
            .zip(bind.outputs)
            .map(|(t, shape)| match shape {
                Some(_) if out_dtype != call.dtype => t.to_dtype(call.dtype),
                _ => Ok(t),
            })
            .collect()
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
        4 => "vec4",
        2 => "vec2",
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
