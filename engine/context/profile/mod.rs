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
//!
//! This file holds the switches on the context; `recorder` the per-context state and the
//! hooks the dispatch path calls around each dispatch and each plan replay, `passes` the
//! timestamp writes of a profiled compute pass, `report` what a read returns (the table and
//! the Chrome trace).

// In a browser the profiler stays off (its reads would block), so most of it is unused there.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

mod passes;
mod recorder;
mod report;

pub(crate) use recorder::Profiler;
pub use report::{Event, KernelTime, Profile};

use super::{Clock, Context};
#[cfg(not(target_arch = "wasm32"))]
use crate::error::Result;

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
            st.forget();
        }
        Ok(())
    }
}
