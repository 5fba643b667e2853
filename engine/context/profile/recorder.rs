//! The profiler's state, one per GPU context, and the hooks the dispatch path calls: before
//! and after each dispatch and each plan replay, timestamps or a full wait around the work;
//! timestamps resolved and read back in batches of `PASSES` dispatches and when the profile
//! is read.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use super::passes::{ProfiledPass, ProfiledPlan};
use super::report::Event;
#[cfg(not(target_arch = "wasm32"))]
use super::report::{KernelTime, Profile};
#[cfg(not(target_arch = "wasm32"))]
use crate::context::Clock;
use crate::context::Gpu;
use crate::error::Result;

/// Dispatches whose timestamps one query set holds (wgpu allows 4096 queries per set).
const PASSES: u32 = wgpu::QUERY_SET_MAX_QUERIES / 2;

/// Trace events kept; later dispatches still count in the table.
const MAX_EVENTS: usize = 1 << 20;

/// The profiler's state, one per GPU context.
#[derive(Default)]
pub(crate) struct Profiler {
    state: Mutex<State>,
}

/// What one context's profiler holds (behind [`Profiler`]'s lock).
#[derive(Default)]
pub(super) struct State {
    pub(super) enabled: bool,
    /// Wall clock asked for, even where timestamps exist.
    pub(super) wall: bool,
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

/// The query set the passes write their timestamps to, and the buffer it resolves into.
struct Queries {
    set: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    /// Nanoseconds per tick.
    period: f64,
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

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
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
    /// Everything collected forgotten; on or off, the clock and the query set kept.
    pub(super) fn forget(&mut self) {
        let (enabled, wall) = (self.enabled, self.wall);
        *self = State {
            enabled,
            wall,
            queries: self.queries.take(),
            ..State::default()
        };
    }

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
    pub(super) fn read_timestamps(&self, st: &mut State) -> Result<()> {
        let n = st.pending.len() as u32;
        let Some(q) = &st.queries else {
            return Ok(());
        };
        if n == 0 {
            return Ok(());
        }
        let (set, resolved, period) = (q.set.clone(), q.resolved.clone(), q.period);
        self.record(|e| e.resolve_query_set(&set, 0..2 * n, &resolved, 0));
        let bytes = pollster::block_on(crate::context::readback::read_bytes(
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
    pub(super) fn profile(&self) -> Result<Profile> {
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
