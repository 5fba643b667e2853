//! The fastest context for a workload on a machine whose adapters all run on the CPU.
//!
//! There, the CPU reference context can beat the software adapters that run the shaders
//! (measured with the shipped GPT-2 on a 2-core machine: 33 tokens/s on the CPU reference,
//! 28 on lavapipe, a few on llvmpipe GL), and which wins depends on the workload and the
//! machine. [`Context::fastest_for`] keeps a context unless it is a software adapter chosen
//! by default; then it runs the caller's timing of its workload once on every software
//! adapter present and on the CPU reference, keeps the fastest, and records the choice in
//! the tune cache (family [`Family::Context`], the workload's name as its key, in the
//! default adapter's section), so later runs take it without timing. The candidates compute
//! the same ops in different precisions (the CPU reference sums in f64), so a program asks
//! for this by calling it, as a scan asks for `Strategy::Tuned`.
//!
//! Left as it is: a hardware adapter; a backend or adapter the environment names
//! (`ENGINE_BACKEND`, `WGPU_ADAPTER_NAME`); tuning off (`ENGINE_TUNE=off`). With
//! `ENGINE_REQUIRE_GPU=1` the CPU reference is no candidate.

#[cfg(not(target_arch = "wasm32"))]
use super::adapter::{self, BackendChoice};
#[cfg(not(target_arch = "wasm32"))]
use super::{require_gpu, Context, DeviceKind};
#[cfg(not(target_arch = "wasm32"))]
use crate::error::Result;
use crate::tune::TuneEntry;
#[cfg(not(target_arch = "wasm32"))]
use crate::tune::{Family, TuneMode};

/// A candidate's name in the cache: `cpu`, or the adapter's backend in lower case.
#[cfg(not(target_arch = "wasm32"))]
fn name_of(ctx: &Context) -> String {
    if ctx.is_gpu() {
        format!("{:?}", ctx.info().backend).to_lowercase()
    } else {
        "cpu".into()
    }
}

/// Which context ran the workload, and why.
#[derive(Clone, Debug, PartialEq)]
pub enum Picked {
    /// The context given: not a default software adapter, or tuning is off.
    Kept,
    /// The cache's choice for this workload.
    Cached(TuneEntry),
    /// Measured now (and recorded): every candidate's seconds.
    Measured(TuneEntry),
}

impl Picked {
    /// One line for a user: what was chosen and the seconds each candidate took.
    pub fn describe(&self) -> Option<String> {
        let (how, e) = match self {
            Picked::Kept => return None,
            Picked::Cached(e) => ("cached choice", e),
            Picked::Measured(e) => ("measured now", e),
        };
        let times: Vec<String> = e
            .times_ms
            .iter()
            .map(|(n, t)| match t {
                Some(t) => format!("{n} {:.2} s", t / 1e3),
                None => format!("{n} failed"),
            })
            .collect();
        Some(format!(
            "every adapter here runs on the CPU: running on {} for {:?} ({how}: {}; ENGINE_BACKEND picks one)",
            e.chosen,
            e.key,
            times.join(", ")
        ))
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Context {
    /// This context, or where it is a software adapter picked by default, the fastest of the
    /// software adapters and the CPU reference for `workload` (the module doc): `time` runs
    /// the workload on a context and returns its seconds. A candidate whose timing fails is
    /// skipped; if every one fails, this context is kept. Natively only (the browser has one
    /// adapter and its page offers the CPU reference itself).
    pub fn fastest_for(
        self,
        workload: &str,
        mut time: impl FnMut(&Context) -> Result<f64>,
    ) -> Result<(Context, Picked)> {
        let chosen_by_env =
            BackendChoice::from_env()? != BackendChoice::Auto || std::env::var_os("WGPU_ADAPTER_NAME").is_some();
        let Some(gpu) = self.gpu() else {
            return Ok((self, Picked::Kept));
        };
        if !self.info().is_software() || chosen_by_env || self.tune_mode() == TuneMode::Off {
            return Ok((self, Picked::Kept));
        }
        if let Some(e) = gpu.tuner.lookup(Family::Context, workload) {
            // Only the chosen candidate is opened: a cached run pays for no other device.
            if let Some(ctx) = self.candidates(Some(&e.chosen)).into_iter().next() {
                return Ok((ctx, Picked::Cached(e)));
            }
        }
        let mut times = vec![];
        let mut best: Option<(f64, Context)> = None;
        for ctx in self.candidates(None) {
            let t = time(&ctx).ok().filter(|t| t.is_finite());
            times.push((name_of(&ctx), t.map(|t| t * 1e3)));
            if let Some(t) = t {
                if best.as_ref().is_none_or(|(b, _)| t < *b) {
                    best = Some((t, ctx));
                }
            }
        }
        let Some((_, ctx)) = best else {
            return Ok((self, Picked::Kept));
        };
        let entry = TuneEntry {
            family: Family::Context,
            key: workload.to_string(),
            chosen: name_of(&ctx),
            hand: name_of(&self),
            cost_ms: times.iter().filter_map(|t| t.1).sum(),
            times_ms: times,
            clock: "wall".into(),
            pending: vec![],
        };
        gpu.tuner.record(entry.clone(), 0.0);
        Ok((ctx, Picked::Measured(entry)))
    }

    /// This context, a context on the first software adapter of every other backend, and
    /// the CPU reference (unless a GPU is required); with `only`, just the one of that name.
    /// An adapter whose device does not open is no candidate.
    fn candidates(&self, only: Option<&str>) -> Vec<Context> {
        let wanted = |name: &str| only.is_none_or(|o| o == name);
        let mut out: Vec<Context> = vec![self.clone()].into_iter().filter(|c| wanted(&name_of(c))).collect();
        let mut seen = vec![name_of(self)];
        let all = wgpu::Backends::all();
        let instance = adapter::instance(all);
        for a in pollster::block_on(adapter::adapters(&instance, all)) {
            let info = a.get_info();
            let backend = format!("{:?}", info.backend).to_lowercase();
            let software = DeviceKind::of(info.device_type, &info.name) == DeviceKind::Software;
            if software && !seen.contains(&backend) {
                seen.push(backend.clone());
                if wanted(&backend) {
                    out.extend(pollster::block_on(Context::from_adapter(&a)).ok());
                }
            }
        }
        if !require_gpu() && wanted("cpu") {
            out.push(Context::cpu());
        }
        out
    }
}
