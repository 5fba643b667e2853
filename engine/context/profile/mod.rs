//! A per-kernel profiler: how long each dispatch ran on the device, summed by kernel.
//!
//! Where the adapter has `TIMESTAMP_QUERY`, every dispatch's compute pass writes a GPU
//! timestamp at its beginning and end (each dispatch has a pass of its own), so the figure is
//! device time only; the timestamps are resolved and read back every 2048 dispatches and when
//! the profile is read. A compiled plan replays its dispatches in one pass (or a few): with
//! `TIMESTAMP_QUERY_INSIDE_PASSES` each of them is bracketed by timestamps inside the pass and
//! counted under its kernel; otherwise the whole replay is one row, `plan (one pass)`. Elsewhere (`Clock::WallClock`) each dispatch is bracketed by a full
//! wait for the device, which serialises the work and adds the submit cost: the shares stay
//! meaningful, the totals are upper bounds. Native only (the reads block).
//!
//! Turn it on with `ENGINE_PROFILE=1` (the table goes to stderr when the context is dropped;
//! `ENGINE_PROFILE=trace.json` also writes a Chrome trace there) or with
//! [`Context::set_profiling`], then read it with [`Context::profile`]:
//!
//! ```no_run
//! let ctx = wgsl_compute::Context::new()?;
//! ctx.set_profiling(true);
//! let x = wgsl_compute::Tensor::from_slice(&ctx, &[4], &[1.0, 2.0, 3.0, 4.0])?;
//! let _ = wgsl_compute::ops::sum_last(&wgsl_compute::ops::mul(&x, &x)?)?.to_vec()?;
//! let profile = ctx.profile()?;
//! println!("{profile}"); // kernel, calls, total, mean, share
//! std::fs::write("trace.json", profile.chrome_trace()).unwrap(); // chrome://tracing, Perfetto
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

// In a browser the profiler stays off (its reads would block), so most of it is unused there.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Instant;

use super::{Clock, Context, Gpu};
use crate::error::Result;

/// Dispatches whose timestamps one query set holds (wgpu allows 4096 queries per set).
const PASSES: u32 = wgpu::QUERY_SET_MAX_QUERIES / 2;

/// Trace events kept; later dispatches still count in the table.
const MAX_EVENTS: usize = 1 << 20;

/// One kernel's line of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTime {
    /// The kernel's name (its pipeline label).
    pub name: String,
    /// Dispatches recorded.
    pub calls: u64,
    /// Device seconds over all calls.
    pub seconds: f64,
}

/// One dispatch in the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Index into [`Profile::kernels`].
    pub kernel: usize,
    /// Seconds from the first profiled dispatch to this one's start.
    pub start: f64,
    /// Seconds it ran.
    pub seconds: f64,
}

/// What the profiler collected: per-kernel totals, largest first, and every dispatch.
#[derive(Clone, Debug)]
pub struct Profile {
    /// How the times were measured.
    pub clock: Clock,
    /// The adapter's name.
    pub adapter: String,
    /// One line per kernel that ran, by total time (largest first).
    pub kernels: Vec<KernelTime>,
    /// Every dispatch in order (up to about a million; see `events_dropped`).
    pub events: Vec<Event>,
    /// Dispatches counted in the table but left out of `events`.
    pub events_dropped: usize,
}

impl Profile {
    /// Device seconds over every kernel.
    pub fn total_seconds(&self) -> f64 {
        self.kernels.iter().map(|k| k.seconds).sum()
    }

    /// The kernel named `name`, if it ran.
    pub fn kernel(&self, name: &str) -> Option<&KernelTime> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The trace in Chrome's trace-event JSON format (chrome://tracing, ui.perfetto.dev): one
    /// complete (`"ph": "X"`) event per dispatch, times in microseconds.
    pub fn chrome_trace(&self) -> String {
        let events: Vec<serde_json::Value> = self
            .events
            .iter()
            .map(|e| {
                serde_json::json!({
                    "name": self.kernels[e.kernel].name,
                    "cat": "kernel",
                    "ph": "X",
                    "ts": e.start * 1e6,
                    "dur": e.seconds * 1e6,
                    "pid": 0,
                    "tid": 0,
                })
            })
            .collect();
        serde_json::json!({
            "traceEvents": events,
            "displayTimeUnit": "ns",
            "otherData": {
                "adapter": self.adapter,
                "clock": format!("{:?}", self.clock),
                "events_dropped": self.events_dropped,
            },
        })
        .to_string()
    }

    /// Writes [`Profile::chrome_trace`] to `path`.
    pub fn write_chrome_trace(&self, path: &std::path::Path) -> Result<()> {
        std::fs::write(path, self.chrome_trace()).map_err(|e| crate::Error::Io {
            what: path.display().to_string(),
            message: e.to_string(),
        })
    }
}

impl fmt::Display for Profile {
    /// The table: kernel, calls, total, mean, share; then the total and the clock.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.total_seconds();
        let width = self.kernels.iter().map(|k| k.name.len()).max().unwrap_or(0).max(6);
        writeln!(
            f,
            "{:<width$}  {:>8}  {:>12}  {:>10}  {:>6}",
            "kernel", "calls", "total ms", "mean us", "share"
        )?;
        for k in &self.kernels {
            writeln!(
                f,
                "{:<width$}  {:>8}  {:>12.3}  {:>10.2}  {:>5.1}%",
                k.name,
                k.calls,
                k.seconds * 1e3,
                k.seconds * 1e6 / k.calls.max(1) as f64,
                100.0 * k.seconds / total.max(f64::MIN_POSITIVE)
            )?;
        }
        let calls: u64 = self.kernels.iter().map(|k| k.calls).sum();
        writeln!(f, "{:<width$}  {calls:>8}  {:>12.3}", "total", total * 1e3)?;
        write!(
            f,
            "on {}; {}",
            self.adapter,
            match self.clock {
                Clock::Timestamps => "GPU timestamps around every dispatch (its pass, or inside a plan's)",
                Clock::WallClock => "wall clock with a full wait around each dispatch (upper bounds)",
            }
        )
    }
}

/// The profiler's state, one per GPU context.
#[derive(Default)]
pub(crate) struct Profiler {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    enabled: bool,
    /// Wall clock asked for, even where timestamps exist.
    wall: bool,
    queries: Option<Queries>,
    /// Kernel index of each pass whose timestamps are not read yet; pass i wrote 2i and 2i+1.
    pending: Vec<usize>,
    names: Vec<String>,
    index: HashMap<String, usize>,
    /// (calls, seconds) per kernel index.
    totals: Vec<(u64, f64)>,
    events: Vec<Event>,
    events_dropped: usize,
    /// The first timestamp (ticks) or instant seen: the trace's zero.
    first_tick: Option<u64>,
    first_instant: Option<Instant>,
}

struct Queries {
    set: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    /// Nanoseconds per tick.
    period: f64,
}

/// A dispatch being profiled: where its pass writes its timestamps, or when it started.
pub(crate) enum ProfiledPass {
    Timestamps { set: wgpu::QuerySet, pass: u32 },
    WallClock { kernel: usize, start: Instant },
}

impl ProfiledPass {
    /// The `timestamp_writes` of the dispatch's compute pass.
    pub(crate) fn timestamp_writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        match self {
            ProfiledPass::Timestamps { set, pass } => Some(wgpu::ComputePassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: Some(2 * pass),
                end_of_pass_write_index: Some(2 * pass + 1),
            }),
            ProfiledPass::WallClock { .. } => None,
        }
    }
}

/// A compiled plan's pass being profiled.
pub(crate) enum ProfiledPlan {
    /// A timestamp before and after each dispatch inside the pass: dispatch i uses pass slot
    /// `first + i`.
    Dispatches { set: wgpu::QuerySet, first: u32 },
    /// The whole pass as one row.
    Whole(ProfiledPass),
}

impl ProfiledPlan {
    /// The `timestamp_writes` of one of the plan's compute passes (a plan may replay in
    /// several): the whole-plan row begins with the first pass and ends with the last.
    pub(crate) fn timestamp_writes(&self, first: bool, last: bool) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        match self {
            ProfiledPlan::Whole(ProfiledPass::Timestamps { set, pass }) if first || last => {
                Some(wgpu::ComputePassTimestampWrites {
                    query_set: set,
                    beginning_of_pass_write_index: first.then_some(2 * pass),
                    end_of_pass_write_index: last.then_some(2 * pass + 1),
                })
            }
            _ => None,
        }
    }

    /// Called just before the plan's dispatch `i` is recorded into `pass`.
    pub(crate) fn before(&self, pass: &mut wgpu::ComputePass<'_>, i: usize) {
        if let ProfiledPlan::Dispatches { set, first } = self {
            pass.write_timestamp(set, 2 * (first + i as u32));
        }
    }

    /// Called just after the plan's dispatch `i` is recorded into `pass`.
    pub(crate) fn after(&self, pass: &mut wgpu::ComputePass<'_>, i: usize) {
        if let ProfiledPlan::Dispatches { set, first } = self {
            pass.write_timestamp(set, 2 * (first + i as u32) + 1);
        }
    }
}

/// The row of a plan's pass timed as a whole.
const PLAN_ROW: &str = "plan (one pass)";

impl Profiler {
    /// On when `ENGINE_PROFILE` is set to anything but `0` (native only).
    pub(crate) fn from_env() -> Self {
        let p = Profiler::default();
        if cfg!(not(target_arch = "wasm32")) && profile_env().is_some() {
            p.lock().enabled = true;
        }
        p
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `ENGINE_PROFILE`, unless unset, empty or `0`.
fn profile_env() -> Option<String> {
    std::env::var("ENGINE_PROFILE")
        .ok()
        .filter(|v| !v.is_empty() && v != "0")
}

impl State {
    fn kernel_index(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len();
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        self.totals.push((0, 0.0));
        i
    }

    fn add(&mut self, kernel: usize, start: f64, seconds: f64) {
        let t = &mut self.totals[kernel];
        t.0 += 1;
        t.1 += seconds;
        if self.events.len() < MAX_EVENTS {
            self.events.push(Event { kernel, start, seconds });
        } else {
            self.events_dropped += 1;
        }
    }
}

impl Gpu {
    fn timestamps_supported(&self) -> bool {
        self.device.features().contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Called before recording a dispatch of `kernel`: `None` unless profiling.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn profile_begin(&self, kernel: &str) -> Result<Option<ProfiledPass>> {
        let mut st = self.profiler.lock();
        if !st.enabled {
            return Ok(None);
        }
        let k = st.kernel_index(kernel);
        if st.wall || !self.timestamps_supported() {
            drop(st);
            self.wait()?;
            return Ok(Some(ProfiledPass::WallClock {
                kernel: k,
                start: Instant::now(),
            }));
        }
        if st.pending.len() as u32 == PASSES {
            self.read_timestamps(&mut st)?;
        }
        let set = self.query_set(&mut st);
        let pass = st.pending.len() as u32;
        st.pending.push(k);
        Ok(Some(ProfiledPass::Timestamps { set, pass }))
    }

    /// The profiler's query set, made on first use.
    #[cfg(not(target_arch = "wasm32"))]
    fn query_set(&self, st: &mut State) -> wgpu::QuerySet {
        let queries = st.queries.get_or_insert_with(|| Queries {
            set: self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("profiler timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * PASSES,
            }),
            resolved: self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("profiler timestamps resolved"),
                size: 2 * PASSES as u64 * wgpu::QUERY_SIZE as u64,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            period: self.queue.get_timestamp_period() as f64,
        });
        queries.set.clone()
    }

    /// Called before recording a plan's pass of dispatches of `kernels`: `None` unless
    /// profiling.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn profile_plan_begin<'a>(
        &self,
        kernels: impl Iterator<Item = &'a str>,
    ) -> Result<Option<ProfiledPlan>> {
        let mut st = self.profiler.lock();
        if !st.enabled {
            return Ok(None);
        }
        let names: Vec<&str> = kernels.collect();
        let inside = !st.wall
            && self.timestamps_supported()
            && self
                .device
                .features()
                .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
            && names.len() as u32 <= PASSES;
        if !inside {
            drop(st);
            return Ok(self.profile_begin(PLAN_ROW)?.map(ProfiledPlan::Whole));
        }
        if st.pending.len() + names.len() > PASSES as usize {
            self.read_timestamps(&mut st)?;
        }
        let set = self.query_set(&mut st);
        let first = st.pending.len() as u32;
        for name in names {
            let k = st.kernel_index(name);
            st.pending.push(k);
        }
        Ok(Some(ProfiledPlan::Dispatches { set, first }))
    }

    /// Called after recording the plan's pass that [`Gpu::profile_plan_begin`] announced.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn profile_plan_end(&self, plan: Option<ProfiledPlan>) -> Result<()> {
        match plan {
            Some(ProfiledPlan::Whole(pass)) => self.profile_end(Some(pass)),
            _ => Ok(()),
        }
    }

    /// Called after recording the dispatch that [`Gpu::profile_begin`] announced.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn profile_end(&self, pass: Option<ProfiledPass>) -> Result<()> {
        if let Some(ProfiledPass::WallClock { kernel, start }) = pass {
            self.wait()?;
            let seconds = start.elapsed().as_secs_f64();
            let mut st = self.profiler.lock();
            let zero = *st.first_instant.get_or_insert(start);
            st.add(kernel, start.duration_since(zero).as_secs_f64(), seconds);
        }
        Ok(())
    }

    /// Never profiles in a browser: reading timestamps back would block.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn profile_begin(&self, _kernel: &str) -> Result<Option<ProfiledPass>> {
        Ok(None)
    }

    #[cfg(target_arch = "wasm32")]
    pub(crate) fn profile_end(&self, _pass: Option<ProfiledPass>) -> Result<()> {
        Ok(())
    }

    #[cfg(target_arch = "wasm32")]
    pub(crate) fn profile_plan_begin<'a>(
        &self,
        _kernels: impl Iterator<Item = &'a str>,
    ) -> Result<Option<ProfiledPlan>> {
        Ok(None)
    }

    #[cfg(target_arch = "wasm32")]
    pub(crate) fn profile_plan_end(&self, _plan: Option<ProfiledPlan>) -> Result<()> {
        Ok(())
    }

    /// Resolves and reads the pending passes' timestamps into the totals and events.
    #[cfg(not(target_arch = "wasm32"))]
    fn read_timestamps(&self, st: &mut State) -> Result<()> {
        let n = st.pending.len() as u32;
        let Some(q) = &st.queries else {
            return Ok(());
        };
        if n == 0 {
            return Ok(());
        }
        let (set, resolved, period) = (q.set.clone(), q.resolved.clone(), q.period);
        self.record(|e| e.resolve_query_set(&set, 0..2 * n, &resolved, 0));
        let bytes = pollster::block_on(super::readback::read_bytes(
            self,
            &resolved,
            0,
            2 * n as u64 * wgpu::QUERY_SIZE as u64,
        ))?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
        let pending = std::mem::take(&mut st.pending);
        let zero = *st.first_tick.get_or_insert(ticks[0]);
        for (i, &k) in pending.iter().enumerate() {
            let (begin, end) = (ticks[2 * i], ticks[2 * i + 1]);
            let start = begin.saturating_sub(zero) as f64 * period * 1e-9;
            let seconds = end.saturating_sub(begin) as f64 * period * 1e-9;
            st.add(k, start, seconds);
        }
        Ok(())
    }

    /// The profile so far (reads pending timestamps first).
    #[cfg(not(target_arch = "wasm32"))]
    fn profile(&self) -> Result<Profile> {
        let mut st = self.profiler.lock();
        self.read_timestamps(&mut st)?;
        let mut kernels: Vec<KernelTime> = st
            .names
            .iter()
            .zip(&st.totals)
            .filter(|(_, t)| t.0 > 0)
            .map(|(name, t)| KernelTime {
                name: name.clone(),
                calls: t.0,
                seconds: t.1,
            })
            .collect();
        kernels.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then(a.name.cmp(&b.name)));
        // Events refer to kernels by their new position.
        let position: HashMap<&str, usize> = kernels.iter().enumerate().map(|(i, k)| (k.name.as_str(), i)).collect();
        let events = st
            .events
            .iter()
            .map(|e| Event {
                kernel: position[st.names[e.kernel].as_str()],
                ..e.clone()
            })
            .collect();
        Ok(Profile {
            clock: if st.wall || !self.timestamps_supported() {
                Clock::WallClock
            } else {
                Clock::Timestamps
            },
            adapter: self.info.name.clone(),
            kernels,
            events,
            events_dropped: st.events_dropped,
        })
    }

    /// With `ENGINE_PROFILE` set: prints the table (and writes the trace when the variable
    /// names a `.json` file). Called when the context is dropped.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn report_profile_at_exit(&self) {
        let Some(var) = profile_env() else {
            return;
        };
        if !self.profiler.lock().enabled {
            return;
        }
        // The tuner's measurements ran through the same dispatches; say what they cost.
        for t in self.tuner.spent() {
            eprintln!(
                "engine tuning (ENGINE_TUNE): {} keys of {} in {:.1} ms ({:.1} ms of them the hand rule's own first runs)",
                t.keys, t.family, t.ms, t.first_run_ms
            );
        }
        match self.profile() {
            Ok(p) if p.kernels.is_empty() => {}
            Ok(p) => {
                eprintln!("engine profile (ENGINE_PROFILE):\n{p}");
                if var.ends_with(".json") {
                    match p.write_chrome_trace(std::path::Path::new(&var)) {
                        Ok(()) => eprintln!("wrote the trace to {var}"),
                        Err(e) => eprintln!("engine profile: {e}"),
                    }
                }
            }
            Err(e) => eprintln!("engine profile: {e}"),
        }
    }
}

impl Context {
    /// Starts (or stops) collecting per-kernel device time for every dispatch on this context,
    /// with GPU timestamps where the adapter has them, else the wall clock.
    /// A no-op on the CPU reference context and in a browser.
    pub fn set_profiling(&self, on: bool) {
        self.set_profiling_with(on, Clock::Timestamps);
    }

    /// [`Context::set_profiling`] with the clock chosen: `Clock::WallClock` waits for the
    /// device around every dispatch even where timestamps exist (to compare the two).
    pub fn set_profiling_with(&self, on: bool, clock: Clock) {
        if let Some(g) = self.gpu() {
            let mut st = g.profiler.lock();
            st.enabled = on && cfg!(not(target_arch = "wasm32"));
            st.wall = clock == Clock::WallClock;
        }
    }

    /// True while dispatches are being profiled.
    pub fn profiling(&self) -> bool {
        self.gpu().is_some_and(|g| g.profiler.lock().enabled)
    }

    /// What the profiler has collected since it was turned on or reset: per-kernel calls and
    /// device time, and every dispatch for a trace. Waits for the device natively. Empty on
    /// the CPU reference context.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn profile(&self) -> Result<Profile> {
        match self.gpu() {
            Some(g) => g.profile(),
            None => Ok(Profile {
                clock: Clock::WallClock,
                adapter: self.info().name.clone(),
                kernels: vec![],
                events: vec![],
                events_dropped: 0,
            }),
        }
    }

    /// Forgets what the profiler has collected (it stays on or off).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn reset_profile(&self) -> Result<()> {
        if let Some(g) = self.gpu() {
            let mut st = g.profiler.lock();
            // Read what is in flight so no later read mixes old passes in.
            g.read_timestamps(&mut st)?;
            let (enabled, wall) = (st.enabled, st.wall);
            *st = State {
                enabled,
                wall,
                queries: st.queries.take(),
                ..State::default()
            };
        }
        Ok(())
    }
}
