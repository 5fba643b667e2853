//! Compiled plans: a sequence of engine ops captured once and replayed with no host work
//! beyond recording its dispatches.
//!
//! [`Plan::capture`] runs a closure of ordinary engine ops with the context in capture mode:
//! every dispatch is recorded (kernel, uniform bytes, buffers, grid) instead of encoded, and
//! every tensor the ops allocate comes from a pool private to the plan, so a buffer freed by
//! one op is reused by a later one (a static assignment by liveness, decided by the op order)
//! and never handed to eager work. At the end the uniform bytes go into one buffer and every
//! bind group is built, once. [`Plan::replay`] then records all dispatches into ONE compute
//! pass of the context's pending commands: no allocation, no bind group, no parameter write.
//!
//! Before the bind groups are built, a fusion pass (`crate::fused::fuse_captured`) folds
//! chains of elementwise dispatches into one kernel each through the expression IR, where
//! nothing else can see the intermediate (`Plan::traced` counts the dispatches before it).
//!
//! Values that change between replays (token ids, positions) must live in device buffers the
//! kernels read, written before each replay ([`Tensor::write`] writes one in place); a host upload or a readback inside the capture
//! is an error naming what did it, as is a dispatch that binds a tensor the plan does not own
//! or hold (it could be freed and reused under the plan). The tensors the capture returns hold
//! nothing until the first replay: reading one back before it is an error, not zeros.
//!
//! ```no_run
//! use wgsl_compute::{ops, plan::Plan, Context, Tensor};
//! let ctx = Context::new()?;
//! let x = Tensor::from_slice(&ctx, &[4], &[1., 2., 3., 4.])?;
//! let (plan, y) = Plan::capture(&ctx, &[&x], || ops::add(&ops::exp(&x)?, &x))?;
//! plan.replay(&ctx)?;                                    // one dispatch: exp fused into the add
//! println!("{}", plan.dump());
//! let _ = y.to_vec()?;                                   // exp(x) + x
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::context::pool::BufferPool;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::tensor::Tensor;

/// One recorded dispatch with its bind group built.
struct Recorded {
    kernel: Arc<Kernel>,
    bind_group: wgpu::BindGroup,
    groups: [u32; 3],
    /// Bytes of the storage buffers it binds.
    bytes: u64,
}

/// A captured op sequence, replayable on the context it was captured on.
pub struct Plan {
    ctx: Context,
    recorded: Vec<Recorded>,
    /// The plan's own intermediates (kept alive and reserved for it).
    _pool: BufferPool,
    /// Every buffer the plan binds that it does not own (held so none is reused under it).
    _held: Vec<Tensor>,
    /// The uniform bytes of every dispatch, one aligned slot each.
    _params: Option<wgpu::Buffer>,
    peak_bytes: u64,
    /// Dispatches the captured ops made, before the fusion pass.
    traced: usize,
    /// The tuner's choices the captured ops made (`crate::context::tune`): the paths every
    /// replay runs, since a replay never tunes.
    choices: Vec<String>,
    /// Set by the first replay; until then reading a captured result is an error.
    replayed: Arc<AtomicBool>,
}

impl Plan {
    /// Runs `f` in capture mode on `ctx` and returns the plan of the dispatches it made and
    /// what `f` returned (its tensors live in the plan's buffers and hold each replay's
    /// result). `hold` lists the tensors made outside the capture that the ops read or write
    /// (weights, caches, input buffers); the plan keeps them alive.
    pub fn capture<R>(ctx: &Context, hold: &[&Tensor], f: impl FnOnce() -> Result<R>) -> Result<(Plan, R)> {
        Self::capture_as(ctx, "Plan::capture", "not in `hold`", hold, f)
    }

    /// [`Plan::capture`] for a caller built on it (`train::CompiledStep`): its errors name
    /// `op`, and a buffer the capture does not know is said to be `unknown` (the caller's
    /// words for "not in `hold`").
    pub(crate) fn capture_as<R>(
        ctx: &Context,
        op: &'static str,
        unknown: &str,
        hold: &[&Tensor],
        f: impl FnOnce() -> Result<R>,
    ) -> Result<(Plan, R)> {
        let gpu = ctx.require_gpu(op)?;
        for t in hold {
            t.expect_context(ctx, op, "hold")?;
        }
        gpu.begin_capture()?;
        // Ends the capture even if `f` panics, so the context keeps working.
        struct End<'a>(&'a crate::context::Gpu);
        impl Drop for End<'_> {
            fn drop(&mut self) {
                self.0.end_capture();
            }
        }
        let end = End(gpu);
        let out = f();
        let capture = gpu.end_capture().ok_or_else(|| Error::Gpu {
            context: op.into(),
            message: "the capture ended while it was running".into(),
        })?;
        drop(end);
        let out = out?;
        let mut capture = capture;
        if let Some(message) = capture.error.take() {
            return Err(Error::Unsupported { op, message });
        }
        // Chains of elementwise ops become one kernel each, then the tensors the pass kept
        // go back to the plan's pool.
        let traced = capture.dispatches.len();
        crate::fused::fuse_captured(gpu, &mut capture.dispatches)?;
        for a in &mut capture.dispatches {
            a.fusible = None;
        }
        let known = |b: &wgpu::Buffer| capture.owned.contains(b) || hold.iter().any(|t| t.buffer() == Some(b));
        for a in &capture.dispatches {
            if let Some(b) = a.buffers.iter().find(|b| !known(b)) {
                return Err(Error::Unsupported {
                    op,
                    message: format!(
                        "kernel `{}` binds a {}-byte buffer made outside the capture that is {unknown}",
                        a.kernel.name,
                        b.size()
                    ),
                });
            }
        }
        // One uniform buffer for every dispatch's parameters, a slot of `stride` bytes each.
        let stride = u64::from(gpu.device.limits().min_uniform_buffer_offset_alignment).max(256);
        let slot = |bytes: &[u8]| (bytes.len() as u64).next_multiple_of(stride);
        let total: u64 = capture
            .dispatches
            .iter()
            .filter_map(|a| a.params.as_deref())
            .map(slot)
            .sum();
        let params = (total > 0).then(|| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("plan params"),
                size: total,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        let mut offset = 0;
        let mut recorded = Vec::with_capacity(capture.dispatches.len());
        for a in &capture.dispatches {
            let uniform = match (&a.params, &params) {
                (Some(bytes), Some(buffer)) => {
                    gpu.queue.write_buffer(buffer, offset, bytes);
                    let u = (buffer.clone(), offset, bytes.len() as u64);
                    offset += slot(bytes);
                    Some(u)
                }
                _ => None,
            };
            recorded.push(Recorded {
                kernel: a.kernel.clone(),
                bind_group: gpu.bind_group(&a.kernel, uniform.as_ref(), &a.buffers),
                groups: a.groups,
                bytes: a.buffers.iter().map(|b| b.size()).sum(),
            });
        }
        gpu.check(op)?;
        let peak_bytes = capture.pool.stats().peak_in_use;
        let plan = Plan {
            ctx: ctx.clone(),
            recorded,
            _pool: capture.pool,
            _held: hold.iter().map(|t| (*t).clone()).collect(),
            _params: params,
            peak_bytes,
            traced,
            choices: std::mem::take(&mut capture.choices),
            replayed: capture.replayed.clone(),
        };
        Ok((plan, out))
    }

    /// The most dispatches [`Plan::dispatch_floor`] records (a decode step is ~100-1000).
    pub const MAX_FLOOR_DISPATCHES: usize = 1 << 16;

    /// The floor under a plan's dispatches: a plan of `dispatches` dependent one-element row
    /// sums (one workgroup each, no memory traffic to speak of). Its replay time is what that
    /// many dispatches cost on the adapter, the part of any plan's time that no kernel can cut
    /// (the benchmark and the browser runner report it per dispatch). Returns the plan and its
    /// one-element result, read back to wait for a replay where there is no blocking wait.
    ///
    /// Errors: `dispatches` 0 or above [`Plan::MAX_FLOOR_DISPATCHES`] (each dispatch is held
    /// by the plan: a count from a caller must not grow it without bound).
    pub fn dispatch_floor(ctx: &Context, dispatches: usize) -> Result<(Plan, Tensor)> {
        if dispatches == 0 || dispatches > Self::MAX_FLOOR_DISPATCHES {
            return Err(Error::value(
                "Plan::dispatch_floor",
                "dispatches",
                format!("1..={}", Self::MAX_FLOOR_DISPATCHES),
                dispatches,
            ));
        }
        let x = Tensor::from_slice(ctx, &[1, 1], &[1.0])?;
        Plan::capture(ctx, &[&x], || {
            let mut y = x.clone();
            for _ in 0..dispatches {
                y = crate::ops::sum_last(&y)?.reshape(&[1, 1])?;
            }
            Ok(y)
        })
    }

    /// Records every dispatch of the plan, in order, into one compute pass of `ctx`'s pending
    /// commands (ordered after the ops recorded before it). Fails on another context.
    pub fn replay(&self, ctx: &Context) -> Result<()> {
        self.replay_in_parts(ctx, 1)
    }

    /// [`Plan::replay`] as `parts` passes, submitting each but the last as soon as it is
    /// recorded, so the device starts on a long plan while the host records the rest. The
    /// parts double in size (113 dispatches in 5 parts: 4, 8, 16, 32 and the last 53): the
    /// device starts after a few dispatches are recorded and submitted, and recording runs
    /// ahead of the device from then on (on the H200 a prefill dispatch takes ~14 us on the
    /// device and ~6 us of host time to record and submit). Equal parts kept the device idle
    /// while the first quarter was recorded and submitted.
    pub fn replay_in_parts(&self, ctx: &Context, parts: usize) -> Result<()> {
        if !ctx.same(&self.ctx) {
            return Err(Error::WrongContext {
                op: "Plan::replay",
                arg: "ctx",
                expected: format!("{:?}", self.ctx),
                actual: format!("{ctx:?}"),
            });
        }
        let gpu = ctx.require_gpu("Plan::replay")?;
        gpu.check("Plan::replay")?;
        if gpu.capturing() {
            return Err(Error::Unsupported {
                op: "Plan::replay",
                message: "a plan cannot be replayed inside another capture".into(),
            });
        }
        let profiled = gpu.profile_plan_begin(self.recorded.iter().map(|a| a.kernel.name.as_str()))?;
        // The first part's size: parts of first, 2 first, 4 first, ... cover every recorded dispatch.
        let parts = parts.clamp(1, 16);
        let first = self.recorded.len().div_ceil((1 << parts) - 1).max(1);
        let mut chunks = vec![];
        let (mut at, mut size) = (0, first);
        while at < self.recorded.len() {
            let end = if chunks.len() + 1 == parts {
                self.recorded.len()
            } else {
                (at + size).min(self.recorded.len())
            };
            chunks.push(at..end);
            at = end;
            size *= 2;
        }
        let mut chunks = chunks.into_iter().peekable();
        while let Some(range) = chunks.next() {
            let last = chunks.peek().is_none();
            let start = range.start;
            let chunk = &self.recorded[range];
            gpu.record(|encoder| {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("plan"),
                    timestamp_writes: profiled.as_ref().and_then(|p| p.timestamp_writes(start == 0, last)),
                });
                for (j, a) in chunk.iter().enumerate() {
                    profiled.iter().for_each(|p| p.before(&mut pass, start + j));
                    pass.set_pipeline(&a.kernel.pipeline);
                    pass.set_bind_group(0, &a.bind_group, &[]);
                    pass.dispatch_workgroups(a.groups[0], a.groups[1], a.groups[2]);
                    profiled.iter().for_each(|p| p.after(&mut pass, start + j));
                }
            });
            if !last {
                gpu.submit();
            }
        }
        // Any readback of a result now submits and waits for these dispatches first.
        self.replayed.store(true, Ordering::Release);
        gpu.profile_plan_end(profiled)
    }

    /// Dispatches per replay.
    pub fn dispatches(&self) -> usize {
        self.recorded.len()
    }

    /// Dispatches the captured ops made, before chains of elementwise ops were fused.
    pub fn traced(&self) -> usize {
        self.traced
    }

    /// The largest number of bytes the plan's own intermediates held at once (after reuse).
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes
    }

    /// The tuner's choices the captured ops made, one line each: family, shape key, the
    /// path chosen, whether it was known or the hand rule's (a capture never tunes), and the
    /// hand rule's path.
    pub fn choices(&self) -> &[String] {
        &self.choices
    }

    /// The op list: one line per dispatch (kernel, workgroups, bytes bound), the tuner's
    /// choices ([`Plan::choices`]), then the totals.
    pub fn dump(&self) -> String {
        let mut s = String::new();
        for (i, a) in self.recorded.iter().enumerate() {
            let [x, y, z] = a.groups;
            s += &format!("{i:4}  {:<36} groups {x}x{y}x{z}  binds {} B\n", a.kernel.name, a.bytes);
        }
        for c in &self.choices {
            s += &format!("chosen: {c}\n");
        }
        s += &format!(
            "{} dispatches traced -> {} after fusion, {} distinct kernels, intermediates peak {} B\n",
            self.traced,
            self.recorded.len(),
            self.recorded
                .iter()
                .map(|a| a.kernel.name.as_str())
                .collect::<HashSet<_>>()
                .len(),
            self.peak_bytes
        );
        s
    }
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Plan({} dispatches on {:?})", self.recorded.len(), self.ctx)
    }
}
