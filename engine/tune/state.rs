//! A context's tuner: its mode, its entries, the time it spent, and (natively) its file.
//!
//! The entries live in memory for the context's life. In [`TuneMode::Cached`] the cache file
//! is read once, at the first lookup; each newly tuned key is written back at once (merged
//! over what the file holds by then, so two contexts or processes on one adapter add to it
//! rather than erase each other; the file keeps a section per adapter, so another adapter's
//! entries are kept beside this one's, `file`). A file that cannot be used is ignored with
//! one warning and rewritten by the next tuned key; a file that cannot be written costs a warning, never
//! the process. A path that names something other than a regular file (a device, a FIFO) is
//! neither read nor replaced: one warning, and the entries stay in memory.

// In a browser nothing is tuned (the measurement's waits would block): the recording half is
// unused there.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use super::{file, Family, Identity, TuneMode};

/// One tuned key: what was chosen, what the hand rule would have run, and the timings.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneEntry {
    /// The op family.
    pub family: Family,
    /// The bucketed shape key, e.g. `b1 m128 n64 k512 mod4 m0 n0 k0 f32 f32 vec_a vec_b`.
    pub key: String,
    /// The candidate the tuner chose.
    pub chosen: String,
    /// The hand rule's candidate (candidate 0, what `ENGINE_TUNE=off` runs).
    pub hand: String,
    /// Every candidate in order with its fastest timed run in milliseconds (`None`: its run
    /// failed or refused the shape).
    pub times_ms: Vec<(String, Option<f64>)>,
    /// How the times were measured: `timestamps` (GPU timestamps around the run) or
    /// `wall clock` (host time around the run with a full wait on both sides).
    pub clock: String,
    /// Milliseconds the tuning of this key took in all (warm-ups and pipeline builds too).
    pub cost_ms: f64,
    /// Candidates not timed yet because their pipelines were still building in the background
    /// (empty: every candidate was timed). Such an entry is provisional: it lives in memory
    /// only, and the first call after the builds end times the key again.
    pub pending: Vec<String>,
}

/// Time a context spent tuning one family.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TuneTime {
    /// The family.
    pub family: Family,
    /// Keys tuned.
    pub keys: usize,
    /// Milliseconds spent, warm-ups and pipeline builds included.
    pub ms: f64,
    /// Of [`TuneTime::ms`], the milliseconds of the hand rule's own first runs (host time of
    /// its warm-up: its pipelines built, its outputs allocated, the run), which these calls
    /// would have cost with tuning off too; `ms - first_run_ms` is what tuning added to the
    /// calls. (The candidates' pipelines build on background threads meanwhile:
    /// `Context::tune_background_ms`.)
    pub first_run_ms: f64,
}

#[derive(Default)]
struct Inner {
    mode: TuneMode,
    path: Option<std::path::PathBuf>,
    /// The file has been read (or was not to be read) for the current path.
    loaded: bool,
    /// The current path names something other than a regular file: warned once, and the
    /// entries stay in memory (never read from or written to it).
    refused: bool,
    entries: BTreeMap<(Family, String), TuneEntry>,
    /// The measured choice of each key pinned by [`Tuner::pin`]: what the file keeps.
    pinned: BTreeMap<(Family, String), String>,
    /// Per family: keys, milliseconds, of which the hand rule's first runs.
    spent: BTreeMap<Family, (usize, f64, f64)>,
    /// The candidates other than the hand rule build their missing pipelines in the
    /// background (`Context::set_tune_background`).
    background: bool,
}

/// The tuner state of one GPU context.
pub(crate) struct Tuner {
    identity: Identity,
    inner: Mutex<Inner>,
    /// Held while a key is tuned: one tuning at a time per context, so two threads calling
    /// with one new key tune it once (the second re-checks under this lock) and no tuning
    /// run is timed against another.
    tuning: Mutex<()>,
}

impl Tuner {
    /// A tuner for the adapter `identity` in `mode`, its file where `ENGINE_TUNE_CACHE` or the
    /// user's cache directory says (natively; never in a browser).
    pub fn new(identity: Identity, mode: TuneMode) -> Self {
        Tuner {
            identity,
            inner: Mutex::new(Inner {
                mode,
                path: file::default_path(),
                ..Inner::default()
            }),
            tuning: Mutex::new(()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn mode(&self) -> TuneMode {
        self.lock().mode
    }

    pub fn set_mode(&self, mode: TuneMode) {
        let mut st = self.lock();
        if st.mode != mode {
            st.mode = mode;
            st.loaded = false;
        }
    }

    pub fn background(&self) -> bool {
        self.lock().background
    }

    pub fn set_background(&self, on: bool) {
        self.lock().background = on;
    }

    pub fn path(&self) -> Option<std::path::PathBuf> {
        self.lock().path.clone()
    }

    /// Another cache file (`None`: memory only); read at the next lookup.
    pub fn set_path(&self, path: Option<std::path::PathBuf>) {
        let mut st = self.lock();
        st.path = path;
        st.loaded = false;
        st.refused = false;
    }

    /// The cache file's path, unless there is none or it names something other than a
    /// regular file (a device, a FIFO, a directory): then one warning per path, and tuning
    /// goes on in memory.
    fn file_path(st: &mut Inner) -> Option<std::path::PathBuf> {
        let path = st.path.clone().filter(|_| !st.refused)?;
        if let Some(why) = file::not_a_file(&path) {
            st.refused = true;
            warn(&format!(
                "not using the tune cache {}: {why}; tuned entries stay in memory",
                path.display()
            ));
            return None;
        }
        Some(path)
    }

    /// Reads the file into the entries once per path, in `Cached` mode; entries tuned in this
    /// context win over the file's.
    fn ensure_loaded(&self, st: &mut Inner) {
        if st.loaded {
            return;
        }
        st.loaded = true;
        if st.mode != TuneMode::Cached {
            return;
        }
        let Some(path) = Self::file_path(st) else { return };
        match file::load(&path, &self.identity) {
            Ok(list) => {
                for e in list {
                    st.entries.entry((e.family, e.key.clone())).or_insert(e);
                }
            }
            Err(reason) => warn(&format!(
                "ignoring the tune cache {}: {reason}; it will be rewritten",
                path.display()
            )),
        }
    }

    /// The entry of `key`, if this context or (in `Cached` mode) its file knows it.
    pub fn lookup(&self, family: Family, key: &str) -> Option<TuneEntry> {
        let mut st = self.lock();
        self.ensure_loaded(&mut st);
        st.entries.get(&(family, key.to_string())).cloned()
    }

    /// The provisional entries (some candidates' pipelines were still building).
    pub fn pending(&self) -> Vec<TuneEntry> {
        self.lock()
            .entries
            .values()
            .filter(|e| !e.pending.is_empty())
            .cloned()
            .collect()
    }

    /// Every known entry, by family then key.
    pub fn entries(&self) -> Vec<TuneEntry> {
        let mut st = self.lock();
        self.ensure_loaded(&mut st);
        st.entries.values().cloned().collect()
    }

    /// Makes `chosen` the choice of a known key, in memory; false when the key is unknown or
    /// `chosen` is not one of its candidates.
    pub fn pin(&self, family: Family, key: &str, chosen: &str) -> bool {
        let mut st = self.lock();
        self.ensure_loaded(&mut st);
        let k = (family, key.to_string());
        let Some(e) = st
            .entries
            .get_mut(&k)
            .filter(|e| e.times_ms.iter().any(|(n, _)| n == chosen))
        else {
            return false;
        };
        let measured = std::mem::replace(&mut e.chosen, chosen.to_string());
        st.pinned.entry(k).or_insert(measured);
        true
    }

    /// Time spent tuning per family in this context (families never tuned are left out).
    pub fn spent(&self) -> Vec<TuneTime> {
        self.lock()
            .spent
            .iter()
            .map(|(&family, &(keys, ms, first_run_ms))| TuneTime {
                family,
                keys,
                ms,
                first_run_ms,
            })
            .collect()
    }

    /// Held while tuning one key.
    pub fn one_at_a_time(&self) -> MutexGuard<'_, ()> {
        self.tuning.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps a newly tuned entry, counts its cost (`first_run_ms` of it the hand rule's first
    /// run), and writes the file (natively).
    pub fn record(&self, entry: TuneEntry, first_run_ms: f64) {
        let mut st = self.lock();
        // A key timed again once its candidates' pipelines were built counts once (a complete
        // entry is only timed again when its choice names no candidate: a new key).
        let new_key = st
            .entries
            .get(&(entry.family, entry.key.clone()))
            .is_none_or(|e| e.pending.is_empty());
        let spent = st.spent.entry(entry.family).or_default();
        spent.0 += usize::from(new_key);
        spent.1 += entry.cost_ms;
        spent.2 += first_run_ms;
        st.pinned.remove(&(entry.family, entry.key.clone()));
        st.entries.insert((entry.family, entry.key.clone()), entry);
        let Some(path) = Self::file_path(&mut st) else { return };
        // Merge over the file as it is now: what other contexts added since it was read stays.
        let mut merged: BTreeMap<(Family, String), TuneEntry> = file::load(&path, &self.identity)
            .unwrap_or_default()
            .into_iter()
            .map(|e| ((e.family, e.key.clone()), e))
            .collect();
        // A provisional entry stays in memory: the file keeps only fully timed keys.
        merged.extend(st.entries.iter().filter(|(_, e)| e.pending.is_empty()).map(|(k, e)| {
            let chosen = st.pinned.get(k).unwrap_or(&e.chosen).clone();
            (k.clone(), TuneEntry { chosen, ..e.clone() })
        }));
        let list: Vec<TuneEntry> = merged.into_values().collect();
        if let Err(e) = file::save(&path, &self.identity, &list) {
            warn(&format!("could not write the tune cache {}: {e}", path.display()));
        }
    }
}

/// One line on stderr (and the log).
fn warn(message: &str) {
    log::warn!("{message}");
    eprintln!("engine: {message}");
}
