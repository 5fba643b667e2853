//! The tuning seam: where an op with several correct paths asks which one to run.
//!
//! [`Context::choose`] takes the hand rule's candidate, the other candidates and a run of
//! the op on each; it answers from the context's tuner (`crate::tune`) when the key is
//! known, else warms every candidate up, times them on the device ([`Context::time`]: GPU
//! timestamps where the adapter has them inside encoders, else the wall clock around a full
//! wait; `crate::tune::measure` says how many runs), keeps the fastest and remembers it.
//! What the runs return is dropped at once, so their outputs go back to the pool and no
//! allocation outlives the tuning.
//!
//! A first call that tunes says so on stderr (`engine: tuning matmul [key] on <adapter> ...`)
//! and, when it is done, for how long (`engine: tuned matmul [key] in 412 ms: ...`).
//!
//! The call waits for the hand rule's pipelines only ([`Context::tune_background`], on by
//! default on hardware adapters other than GL). The other candidates warm up on threads of
//! their own, and a pipeline they lack builds in the background
//! (`kernel::cache::DeferBuilds`); a candidate still building is not timed, and the key's
//! entry is provisional ([`TuneEntry::pending`], memory only) until the first call after the
//! builds end, which times the key again. [`Context::tune`] waits for the builds itself;
//! [`Context::finish_tuning`] lets an application do so. On GL the warm-ups run one after
//! another and build everything at once (see `warm_up`).
//!
//! The hand rule runs instead, untimed, when:
//! - the mode is `off` (`ENGINE_TUNE=off`, [`Context::set_tune_mode`]);
//! - this thread is capturing a plan: a plan records the path the context knows, or the
//!   hand rule's, and a replay never tunes (the capture's `choices` say which);
//! - this thread is already timing a candidate (an op inside a candidate's run, such as the
//!   slice products of a split-K matmul, uses what is known and never tunes in the middle
//!   of another measurement);
//! - in a browser, where the timing's waits would block.

use std::cell::Cell;

use super::Context;
use crate::error::Result;
use crate::tune::{Family, Identity, MaybeSync, TuneEntry, TuneMode, TuneTime};

thread_local! {
    /// True while this thread runs a candidate for the tuner.
    static TIMING: Cell<bool> = const { Cell::new(false) };
}

/// The tuner's identity of the adapter behind `device`: what a cache file must match to be
/// used. Read from the device itself, so a device the application made
/// ([`Context::from_wgpu`]) is told apart from another as well as the engine's own.
pub(crate) fn identity(device: &wgpu::Device) -> Identity {
    let a = device.adapter_info();
    Identity {
        adapter: a.name.clone(),
        vendor: a.vendor,
        device: a.device,
        driver: format!("{} {}", a.driver, a.driver_info).trim().to_string(),
        backend: format!("{:?}", a.backend),
        engine: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// One line on stderr (and the log) about tuning in progress.
#[cfg(not(target_arch = "wasm32"))]
fn note(message: &str) {
    log::info!("{message}");
    eprintln!("engine: {message}");
}

/// A [`TuneItem`]'s run: the op once on inputs of the item's shape.
type Run = Box<dyn Fn(&Context) -> Result<()> + Send + Sync>;

/// One op and shape to tune ahead of use ([`Context::tune`]), made by the op's layer:
/// [`crate::ops::tune_matmul`], [`crate::scan::tune_linear_scan`].
pub struct TuneItem {
    family: Family,
    what: String,
    run: Run,
}

impl TuneItem {
    /// An item of `family` described by `what` (e.g. `matmul [64, 768] @ [768, 3072] F32`)
    /// whose `run` calls the op once on inputs of the shape, on the context it is given.
    pub(crate) fn new(
        family: Family,
        what: String,
        run: impl Fn(&Context) -> Result<()> + Send + Sync + 'static,
    ) -> Self {
        TuneItem {
            family,
            what,
            run: Box::new(run),
        }
    }

    /// The family it tunes.
    pub fn family(&self) -> Family {
        self.family
    }

    /// What it runs, for reports.
    pub fn what(&self) -> &str {
        &self.what
    }
}

impl std::fmt::Debug for TuneItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TuneItem({}: {})", self.family, self.what)
    }
}

/// Milliseconds to the nearest 0.1 us: short decimals that survive the cache file's JSON
/// round trip exactly, finer than any timer's noise.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
fn round_ms(ms: f64) -> f64 {
    (ms * 1e4).round() / 1e4
}

/// Resets [`TIMING`] when a candidate's run ends, however it ends.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
struct Timing;

#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
impl Timing {
    fn start() -> Self {
        TIMING.with(|t| t.set(true));
        Timing
    }
}

impl Drop for Timing {
    fn drop(&mut self) {
        TIMING.with(|t| t.set(false));
    }
}

impl Context {
    /// The tuner's mode on this context (`Off` on the CPU reference context): read from
    /// `ENGINE_TUNE` when the context was made.
    pub fn tune_mode(&self) -> TuneMode {
        self.gpu().map_or(TuneMode::Off, |g| g.tuner.mode())
    }

    /// Sets the tuner's mode on this context (no-op on the CPU reference context). Entries
    /// already tuned stay known; `Cached` reads the cache file again at the next lookup.
    pub fn set_tune_mode(&self, mode: TuneMode) {
        if let Some(g) = self.gpu() {
            g.tuner.set_mode(mode);
        }
    }

    /// The cache file this context reads and writes (`None`: memory only).
    pub fn tune_cache_path(&self) -> Option<std::path::PathBuf> {
        self.gpu().and_then(|g| g.tuner.path())
    }

    /// Points this context at another cache file (`None`: memory only), read at the next
    /// lookup; `ENGINE_TUNE_CACHE` does this for every context of a process. No-op in a
    /// browser, which has no file.
    pub fn set_tune_cache(&self, path: Option<std::path::PathBuf>) {
        if let Some(g) = self.gpu() {
            g.tuner.set_path(path.filter(|_| cfg!(not(target_arch = "wasm32"))));
        }
    }

    /// Every tuned entry this context knows, its own and (in `Cached` mode) its file's, by
    /// family then key.
    pub fn tune_entries(&self) -> Vec<TuneEntry> {
        self.gpu().map_or_else(Vec::new, |g| g.tuner.entries())
    }

    /// Makes `candidate` the choice of the known `key` of `family` in this context (memory
    /// only; the file keeps the measured choice): for tests that run every candidate through
    /// the op's own call, and for benchmarks. Fails when the key is unknown here or
    /// `candidate` is not one of its candidates ([`TuneEntry::times_ms`] lists them).
    pub fn set_tune_choice(&self, family: Family, key: &str, candidate: &str) -> Result<()> {
        let pinned = self.gpu().is_some_and(|g| g.tuner.pin(family, key, candidate));
        if pinned {
            return Ok(());
        }
        Err(crate::error::Error::value(
            "Context::set_tune_choice",
            "candidate",
            format!("a candidate of a {family} key this context knows (key {key:?})"),
            candidate,
        ))
    }

    /// Time this context spent tuning, per family (only the families it tuned).
    pub fn tune_time(&self) -> Vec<TuneTime> {
        self.gpu().map_or_else(Vec::new, |g| g.tuner.spent())
    }

    /// Whether the candidates other than the hand rule build their missing pipelines in the
    /// background, so a tuning call waits only for the hand rule's compile (the module doc).
    /// On by default on hardware adapters other than GL; off on software adapters, whose
    /// compiles would take the cores the candidates are timed on, and on GL, which builds on
    /// its one context.
    pub fn tune_background(&self) -> bool {
        self.gpu().is_some_and(|g| g.tuner.background())
    }

    /// Sets [`Context::tune_background`] (no-op on the CPU reference context; GL warms its
    /// candidates up one after another either way).
    pub fn set_tune_background(&self, on: bool) {
        if let Some(g) = self.gpu() {
            g.tuner.set_background(on);
        }
    }

    /// Keys whose entry is provisional: some of their candidates' pipelines were still
    /// building in the background when they were timed.
    pub fn tune_pending(&self) -> usize {
        self.gpu().map_or(0, |g| g.tuner.pending().len())
    }

    /// Runs `run` (calls of ops) once, then, while it leaves keys provisional, waits for their
    /// candidates' background builds ([`Context::finish_tuning`]) and runs it again, so every
    /// key it tunes ends fully timed. A candidate stops at each pipeline it lacks, so a key of
    /// several kernels may take a few rounds; and a key is timed again only when no build is
    /// under way, so the first provisional key a round reaches is timed and may start builds
    /// that hold the others back to a later round. Every round after the builds end times at
    /// least one key, so the rounds are at most the candidates' pipelines (capped at 64). It
    /// stops when a round changes no provisional entry: those left belong to paths `run` no
    /// longer takes (a walk it tuned away from), which stay in memory only.
    pub fn tune_settled(&self, mut run: impl FnMut() -> Result<()>) -> Result<()> {
        run()?;
        let pending = |ctx: &Context| ctx.gpu().map_or_else(Vec::new, |g| g.tuner.pending());
        let mut before = pending(self);
        for _ in 0..64 {
            if before.is_empty() {
                break;
            }
            self.finish_tuning();
            run()?;
            let now = pending(self);
            if now == before {
                break;
            }
            before = now;
        }
        Ok(())
    }

    /// Milliseconds the candidates' pipelines took to build on background threads (time the
    /// tuning calls did not wait for; [`TuneTime`] counts what they did).
    pub fn tune_background_ms(&self) -> f64 {
        self.gpu().map_or(0.0, |g| g.kernels.background_ms())
    }

    /// Waits until the candidates' pipelines building in the background are built (natively;
    /// at once in a browser, where nothing builds in the background). The next call of each
    /// [provisional](Context::tune_pending) key then times every candidate.
    pub fn finish_tuning(&self) {
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(g) = self.gpu() {
            g.kernels.wait_background();
        }
    }

    /// Tunes `items` now (their ops run under [`Context::tune_settled`], so every candidate of
    /// their keys is timed; keys already known are not timed again), for an application that
    /// wants no first-call cost later. Does nothing with tuning off
    /// or on the CPU reference context. Fails on the first item whose op fails, and inside a
    /// plan capture (a plan records paths, it never tunes).
    ///
    /// ```no_run
    /// use wgsl_compute::{ops, scan, Context, DType};
    /// let ctx = Context::new()?;
    /// ctx.tune(&[
    ///     ops::tune_matmul(&[64, 768], &[768, 3072], DType::F32),
    ///     scan::tune_linear_scan(&[4, 1024, 256], DType::F32),
    /// ])?;
    /// for t in ctx.tune_time() {
    ///     println!("{}: {} keys in {:.1} ms", t.family, t.keys, t.ms);
    /// }
    /// # Ok::<(), wgsl_compute::Error>(())
    /// ```
    pub fn tune(&self, items: &[TuneItem]) -> Result<()> {
        let Some(gpu) = self.gpu().filter(|_| self.tune_mode() != TuneMode::Off) else {
            return Ok(());
        };
        if gpu.capturing() {
            return Err(crate::error::Error::Unsupported {
                op: "Context::tune",
                message: "cannot tune inside a plan capture: tune before Plan::capture".into(),
            });
        }
        self.tune_settled(|| items.iter().try_for_each(|item| (item.run)(self)))
    }

    /// The candidate to run for `key` of `family`: `hand` (the hand rule, what tuning off
    /// runs) or one of `others`, each of which must give the same result bit for bit.
    /// `name` names a candidate in the cache; `run` runs the op once on a candidate, its
    /// outputs dropped. Never fails: a candidate whose run fails is skipped, and an
    /// unusable answer is the hand rule.
    pub(crate) fn choose<C: Copy + Send + Sync>(
        &self,
        family: Family,
        key: impl FnOnce() -> String,
        hand: C,
        others: &[C],
        name: impl Fn(C) -> &'static str,
        run: impl Fn(C) -> Result<()> + MaybeSync,
    ) -> C {
        let Some(gpu) = self.gpu() else { return hand };
        if others.is_empty() {
            return hand;
        }
        let capturing = gpu.capturing();
        let off = gpu.tuner.mode() == TuneMode::Off;
        if off && !capturing {
            return hand;
        }
        let key = key();
        let find = |n: &str| {
            std::iter::once(hand)
                .chain(others.iter().copied())
                .find(|&c| name(c) == n)
        };
        let known = if off { None } else { gpu.tuner.lookup(family, &key) };
        let inside = capturing || TIMING.with(Cell::get);
        // A provisional entry whose candidates' pipelines have all been built is timed again.
        let known = known.filter(|e| e.pending.is_empty() || inside || gpu.kernels.building() > 0);
        // A choice no candidate of this version answers to (a cache written before a rename)
        // is tuned again, not read as the hand rule for good.
        let known = known.and_then(|e| find(&e.chosen));
        let (chosen, how) = match known {
            None if off => (hand, "tuning off"),
            Some(c) => (c, "known"),
            None if inside || cfg!(target_arch = "wasm32") => (hand, "hand rule, not tuned"),
            None => (
                self.tune_key(family, &key, hand, others, &name, &run).unwrap_or(hand),
                "tuned",
            ),
        };
        if capturing {
            // Once per key: a model's layers repeat the same shapes.
            let line = format!("{family} [{key}]: {} ({how}; hand rule {})", name(chosen), name(hand));
            gpu.with_capture(|c| {
                if !c.choices.contains(&line) {
                    c.choices.push(line);
                }
            });
        }
        chosen
    }

    /// Times every candidate of `key` and records the entry; `None` only when another thread
    /// recorded the key meanwhile and its choice is not among these candidates.
    #[cfg(not(target_arch = "wasm32"))]
    fn tune_key<C: Copy + Send + Sync>(
        &self,
        family: Family,
        key: &str,
        hand: C,
        others: &[C],
        name: &impl Fn(C) -> &'static str,
        run: &(impl Fn(C) -> Result<()> + MaybeSync),
    ) -> Option<C> {
        let gpu = self.gpu()?;
        let candidates: Vec<C> = std::iter::once(hand).chain(others.iter().copied()).collect();
        let _one = gpu.tuner.one_at_a_time();
        // Another thread may have tuned this key while this one waited. An entry whose choice
        // no candidate answers to (written before a rename) is as good as none.
        let earlier = gpu
            .tuner
            .lookup(family, key)
            .filter(|e| candidates.iter().any(|&c| name(c) == e.chosen));
        if let Some(e) = earlier.as_ref().filter(|e| e.pending.is_empty()) {
            return candidates.iter().copied().find(|&c| name(c) == e.chosen);
        }
        // A first call of a shape pays for the tuning: said on stderr, and for how long at
        // the end (a key timed again once its builds are done says nothing).
        let first = earlier.is_none();
        if first {
            note(&format!(
                "tuning {family} [{key}] on {} (a first call of this shape; the cache keeps the choice, ENGINE_TUNE=off skips tuning)",
                self.info().name
            ));
        }
        let start = std::time::Instant::now();
        let mut clock = super::Clock::WallClock;
        let timing = Timing::start();
        let (warmed, building, first_run_s) = self.warm_up(&candidates, run);
        // A key timed again after its builds: its hand rule's first run was counted before.
        let first_run_s = if earlier.is_some() { 0.0 } else { first_run_s };
        let outcome = crate::tune::measure::measure_warm(&warmed, |i| {
            let ((), t) = self.time(|| run(candidates[i]))?;
            clock = t.clock;
            Ok(t.seconds)
        });
        drop(timing);
        gpu.tuner.record(
            TuneEntry {
                family,
                key: key.to_string(),
                chosen: name(candidates[outcome.chosen]).to_string(),
                hand: name(hand).to_string(),
                times_ms: candidates
                    .iter()
                    .zip(&outcome.seconds)
                    .map(|(&c, s)| (name(c).to_string(), s.map(|s| round_ms(s * 1e3))))
                    .collect(),
                clock: match clock {
                    super::Clock::Timestamps => "timestamps",
                    super::Clock::WallClock => "wall clock",
                }
                .to_string(),
                cost_ms: round_ms(start.elapsed().as_secs_f64() * 1e3),
                pending: candidates
                    .iter()
                    .zip(&building)
                    .filter(|(_, &b)| b)
                    .map(|(&c, _)| name(c).to_string())
                    .collect(),
            },
            first_run_s * 1e3,
        );
        if first {
            let (keys, ms) = gpu
                .tuner
                .spent()
                .iter()
                .fold((0, 0.0), |(k, m), t| (k + t.keys, m + t.ms));
            note(&format!(
                "tuned {family} [{key}] in {:.0} ms: {} (hand rule {}); {keys} keys, {ms:.0} ms of tuning in this context so far",
                start.elapsed().as_secs_f64() * 1e3,
                name(candidates[outcome.chosen]),
                name(hand)
            ));
        }
        Some(candidates[outcome.chosen])
    }

    /// Runs every candidate once, the others each on a thread of its own beside the hand
    /// rule on this one. The others' missing pipelines build in the background
    /// (`kernel::cache::DeferBuilds`): such a candidate stops at its first missing pipeline
    /// and is timed at a later call, once the builds are done, so the call waits only for
    /// the hand rule's own compile. Returns whether each ran, whether each waits on a
    /// background build, and the host seconds of the hand rule's run: its pipelines built,
    /// its outputs allocated, its dispatches recorded, what the call costs untuned too.
    ///
    /// On GL one after another: every GL call of an adapter goes through its one context,
    /// so nothing would build in parallel, and wgpu's GL backend panics ("Could not lock
    /// adapter context") when a thread waits for that context longer than its timeout while
    /// another compiles a large shader (llvmpipe GL compiling the f16 scan kernels did).
    #[cfg(not(target_arch = "wasm32"))]
    fn warm_up<C: Copy + Send + Sync>(
        &self,
        candidates: &[C],
        run: &(impl Fn(C) -> Result<()> + MaybeSync),
    ) -> (Vec<bool>, Vec<bool>, f64) {
        let n = candidates.len();
        let serial = self
            .gpu()
            .is_none_or(|g| g.device.adapter_info().backend == wgpu::Backend::Gl);
        if serial {
            let began = std::time::Instant::now();
            let hand = run(candidates[0]).is_ok();
            let first_run = began.elapsed().as_secs_f64();
            let mut warmed = vec![hand];
            warmed.extend(candidates[1..].iter().map(|&c| run(c).is_ok()));
            let ok = self.synchronize().is_ok();
            return (warmed.into_iter().map(|w| w && ok).collect(), vec![false; n], first_run);
        }
        let background = self.tune_background();
        let (mut warmed, building, first_run) = std::thread::scope(|s| {
            let others: Vec<_> = candidates[1..]
                .iter()
                .map(|&c| {
                    s.spawn(move || {
                        // An op inside the candidate's run must not tune either.
                        let _timing = Timing::start();
                        let defer = background.then(crate::kernel::cache::DeferBuilds::start);
                        let ran = run(c).is_ok();
                        let building = defer.is_some_and(|d| d.deferred());
                        (ran && !building, building)
                    })
                })
                .collect();
            let began = std::time::Instant::now();
            let hand = run(candidates[0]).is_ok();
            let first_run = began.elapsed().as_secs_f64();
            let (mut warmed, mut building) = (vec![hand], vec![false]);
            for h in others {
                let (w, b) = h.join().unwrap_or((false, false));
                warmed.push(w);
                building.push(b);
            }
            (warmed, building, first_run)
        });
        if self.synchronize().is_err() {
            warmed.iter_mut().for_each(|w| *w = false);
        }
        (warmed, building, first_run)
    }

    #[cfg(target_arch = "wasm32")]
    fn tune_key<C: Copy + Send + Sync>(
        &self,
        _family: Family,
        _key: &str,
        hand: C,
        _others: &[C],
        _name: &impl Fn(C) -> &'static str,
        _run: &(impl Fn(C) -> Result<()> + MaybeSync),
    ) -> Option<C> {
        Some(hand)
    }
}
