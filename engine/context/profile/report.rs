//! What the profiler returns: per-kernel totals ([`KernelTime`]), every dispatch
//! ([`Event`]), and the [`Profile`] that holds them, printed as a table or written as a
//! Chrome trace.

use std::fmt;

use crate::context::Clock;
use crate::error::Result;

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
        std::fs::write(path, self.chrome_trace()).map_err(|e| crate::error::Error::Io {
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
