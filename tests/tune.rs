//! The tuner (`engine/tune`, `engine/context/tune.rs`): every candidate it may pick gives
//! the hand rule's bits, the cache round trip, the three bad cache files, `ENGINE_TUNE=off`,
//! plans that record the chosen path, and no allocation left behind.
//!
//! Each test makes its own contexts (the shared ones run with tuning off, `common`), points
//! them at a cache file of its own or at none, and runs under `each_adapter_alone`, so no
//! other test's dispatches fall inside a tuning measurement.

use std::path::{Path, PathBuf};

use wgsl_compute::check::Rng;
use wgsl_compute::context::Picked;
use wgsl_compute::ops::{self, MatmulPath};
use wgsl_compute::plan::Plan;
use wgsl_compute::scan::{self, ScanOptions, Strategy};
use wgsl_compute::tune::{Family, TuneEntry, TuneMode};
use wgsl_compute::{Context, DType, Tensor};

use crate::common::each_adapter_alone;

/// Runs `f` on a fresh context of each adapter present: poisoned outputs, no cache file,
/// mode `cached`.
fn each_fresh(mut f: impl FnMut(&Context)) {
    each_adapter_alone(|shared| {
        let ctx = crate::common::fresh(shared);
        ctx.set_tune_cache(None);
        ctx.set_tune_mode(TuneMode::Cached);
        // The GPUs' default, so the tests here cover the background builds on lavapipe too.
        let default = ctx.tune_background();
        ctx.set_tune_background(true);
        f(&ctx);
        ctx.set_tune_background(default);
    });
}

/// A cache file path of its own for `test` on `ctx`'s adapter, removed first.
fn cache_file(ctx: &Context, test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wgsl-compute-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{test}-{:?}.json", ctx.info().backend));
    let _ = std::fs::remove_file(&path);
    path
}

/// A fresh context on `ctx`'s adapter reading `path` in `mode`.
fn another(ctx: &Context, path: &Path, mode: TuneMode) -> Context {
    let fresh = pollster::block_on(Context::each_adapter()).unwrap();
    let other = fresh
        .into_iter()
        .find(|c| c.info().name == ctx.info().name && c.info().backend == ctx.info().backend)
        .unwrap();
    other.set_tune_mode(mode);
    other.set_tune_cache(Some(path.to_path_buf()));
    other
}

fn random(ctx: &Context, rng: &mut Rng, shape: &[usize]) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_slice(ctx, shape, &rng.vec_range(n, -1.0, 1.0)).unwrap()
}

fn bits(t: &Tensor) -> Vec<u32> {
    match t.dtype() {
        DType::F32 => t.to_vec().unwrap().iter().map(|v| v.to_bits()).collect(),
        _ => t.to_halves().unwrap().iter().map(|&h| u32::from(h)).collect(),
    }
}

/// Runs `op` under `Context::tune_settled` (again after each round of the candidates'
/// background builds, until every key it tunes is fully timed). Every round's result.
fn settled<T>(ctx: &Context, op: impl Fn() -> T) -> Vec<T> {
    let mut out = vec![];
    ctx.tune_settled(|| {
        out.push(op());
        Ok(())
    })
    .unwrap();
    out
}

/// The entries of `family` that `ctx` learnt while running `f`.
fn learnt(ctx: &Context, family: Family, f: impl FnOnce()) -> Vec<TuneEntry> {
    let before = ctx.tune_entries();
    f();
    ctx.tune_entries()
        .into_iter()
        .filter(|e| e.family == family && !before.iter().any(|b| b.key == e.key && b.family == e.family))
        .collect()
}

/// Runs `op` with tuning off (the hand rule), then tuned, then with each candidate of every
/// key it tuned pinned, and asserts every run gives the hand rule's bits. Returns the keys.
fn assert_every_candidate_is_bit_identical(
    ctx: &Context,
    family: Family,
    case: &str,
    op: impl Fn() -> Vec<Vec<u32>>,
) -> Vec<TuneEntry> {
    ctx.set_tune_mode(TuneMode::Off);
    let hand = op();
    ctx.set_tune_mode(TuneMode::On);
    let mut tuned = vec![];
    let entries = learnt(ctx, family, || tuned = settled(ctx, &op));
    for (round, t) in tuned.iter().enumerate() {
        assert_eq!(
            t,
            &hand,
            "{case}: tuned (round {round}) vs hand rule on {}",
            ctx.info().name
        );
    }
    for e in &entries {
        assert!(
            e.times_ms.iter().filter(|(_, t)| t.is_some()).count() >= 2,
            "{case}: key {} timed fewer than two candidates: {e:?}",
            e.key
        );
        for (candidate, _) in &e.times_ms {
            ctx.set_tune_choice(family, &e.key, candidate).unwrap();
            assert_eq!(
                op(),
                hand,
                "{case}: candidate {candidate} of key {} vs the hand rule {} on {}",
                e.key,
                e.hand,
                ctx.info().name
            );
        }
    }
    entries
}

#[test]
fn tune_matmul_every_candidate_gives_the_hand_rules_bits() {
    each_fresh(|ctx| {
        let mut rng = Rng::new(29);
        // (batch, m, k, n): the hand rule's Tiled16 (M < 64), RegisterTiled, LargeTile
        // (256 tiles of 128), unaligned N and K (no vec4 loads), a batch.
        let cases = [
            (1, 33, 70, 45),
            (1, 64, 128, 64),
            (1, 130, 67, 257),
            (1, 2048, 16, 2048),
            (3, 100, 64, 96),
        ];
        let mut keys = 0;
        for (batch, m, k, n) in cases {
            let a = random(ctx, &mut rng, &[batch, m, k]);
            let b = random(ctx, &mut rng, &[batch, k, n]);
            let case = format!("matmul [{batch}, {m}, {k}] @ [{batch}, {k}, {n}]");
            let entries = assert_every_candidate_is_bit_identical(ctx, Family::Matmul, &case, || {
                vec![bits(&ops::matmul(&a, &b).unwrap())]
            });
            keys += entries.len();
            // The forced tile kernels agree with it too (the contract the candidates rest on).
            let hand = bits(&ops::matmul(&a, &b).unwrap());
            for path in MatmulPath::TILES {
                if let Ok(y) = ops::matmul_with(&a, &b, path) {
                    assert_eq!(bits(&y), hand, "{case} forced {path:?}");
                }
            }
        }
        assert_eq!(keys, cases.len(), "one key per case");
        // Through the fused epilogues and a transposed view.
        let x = random(ctx, &mut rng, &[70, 96]);
        let w = random(ctx, &mut rng, &[96, 80]);
        let bias = random(ctx, &mut rng, &[80]);
        let wt = random(ctx, &mut rng, &[80, 96]).transpose(0, 1).unwrap();
        assert_every_candidate_is_bit_identical(ctx, Family::Matmul, "linear, linear_gelu, x @ w^T", || {
            vec![
                bits(&ops::linear(&x, &w, Some(&bias)).unwrap()),
                bits(&ops::linear_gelu(&x, &w, Some(&bias)).unwrap()),
                bits(&ops::matmul(&x, &wt).unwrap()),
            ]
        });
    });
}

#[test]
fn tune_channel_scan_every_width_gives_the_hand_rules_bits() {
    each_fresh(|ctx| {
        let mut rng = Rng::new(2929);
        // (B, T, D): D % 4 = 0 with few walks (hand rule: one channel, candidates vec4, vec2),
        // D even, D odd (no choice, no key); the lane walks, the chunked passes (long T, few
        // lanes) and both strategies forced.
        let strategies = [Strategy::Auto, Strategy::Lanes, Strategy::Chunked { chunk: None }];
        for (b, t, d) in [(2, 77, 8), (1, 1500, 4), (3, 65, 6), (2, 33, 5)] {
            for strategy in strategies {
                let opts = ScanOptions::default().with_strategy(strategy);
                let a = Tensor::from_slice(ctx, &[b, t, d], &rng.vec_range(b * t * d, 0.5, 1.0)).unwrap();
                let x = random(ctx, &mut rng, &[b, t, d]);
                let h0 = random(ctx, &mut rng, &[b, d]);
                let g = random(ctx, &mut rng, &[b, t, d]);
                let lv = random(ctx, &mut rng, &[b, t + 1, d]);
                let lc = Tensor::from_slice(ctx, &[b, t, d], &rng.vec_range(b * t * d, -1.0, -0.01)).unwrap();
                let case = format!("channel scans ({b}, {t}, {d}) {strategy}");
                let entries = assert_every_candidate_is_bit_identical(ctx, Family::ChannelScan, &case, || {
                    let h = scan::linear_scan_with(&a, &x, Some(&h0), &opts).unwrap();
                    let gr = scan::linear_scan_backward_with(&a, Some(&h0), &h, &g, &opts).unwrap();
                    let lh = scan::parallel_scan_log_with(&lc, &lv, &opts).unwrap();
                    let lg = scan::parallel_scan_log_backward_with(&lc, &lv, &lh, &g, &opts).unwrap();
                    [&h, &gr.da, &gr.db, &gr.dh0, &lh, &lg.d_log_coeffs, &lg.d_log_values]
                        .map(bits)
                        .to_vec()
                });
                // Four ops, each a key of its own, wherever the channels offer a choice.
                let want = if d % 2 == 0 { 4 } else { 0 };
                assert_eq!(entries.len(), want, "{case}: {entries:?}");
            }
        }
        // Halves: the vec4 and vec2 widths.
        let (b, t, d) = (2, 50, 8);
        let half = |rng: &mut Rng, lo, hi| {
            Tensor::from_slice_as(ctx, &[b, t, d], &rng.vec_range(b * t * d, lo, hi), DType::F16).unwrap()
        };
        let (a, x) = (half(&mut rng, 0.5, 1.0), half(&mut rng, -1.0, 1.0));
        let entries = assert_every_candidate_is_bit_identical(ctx, Family::ChannelScan, "linear_scan f16", || {
            vec![bits(&scan::linear_scan(&a, &x, None).unwrap())]
        });
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].hand, "vec2");
    });
}

#[test]
fn tune_elementwise_every_form_gives_the_hand_rules_bits() {
    each_fresh(|ctx| {
        let mut rng = Rng::new(2930);
        // Sizes 1, a workgroup - 1, a multiple of 4, one past it (the tail done one element at
        // a time), larger than a workgroup's vec4s; every unary body, a broadcast binary, GELU.
        let mut keys = 0;
        for n in [1, 63, 256, 257, 4099] {
            let x = random(ctx, &mut rng, &[n]);
            let pos = Tensor::from_slice(ctx, &[n], &rng.vec_range(n, 0.1, 4.0)).unwrap();
            let case = format!("unary ops n = {n}");
            let entries = assert_every_candidate_is_bit_identical(ctx, Family::Elementwise, &case, || {
                wgsl_compute::Unary::ALL
                    .into_iter()
                    .map(|op| {
                        let arg = if matches!(op, wgsl_compute::Unary::Log | wgsl_compute::Unary::Sqrt) {
                            &pos
                        } else {
                            &x
                        };
                        bits(&ops::unary(op, arg).unwrap())
                    })
                    .chain([bits(&ops::gelu(&x).unwrap())])
                    .collect()
            });
            assert!(entries.iter().all(|e| e.hand == "vec4"), "{case}: {entries:?}");
            keys += entries.len();
        }
        assert!(
            keys >= wgsl_compute::Unary::ALL.len(),
            "every body tuned at some size: {keys}"
        );
        // A row broadcast along the columns (read as one vec4 per group) and a column
        // broadcast (a splat per group).
        // Positive operands: `pow` of a negative base is undefined in WGSL.
        let mut positive = |shape: &[usize]| {
            let n = shape.iter().product();
            Tensor::from_slice(ctx, shape, &rng.vec_range(n, 0.1, 4.0)).unwrap()
        };
        let (a, row, col) = (positive(&[6, 40]), positive(&[40]), positive(&[6, 1]));
        let entries = assert_every_candidate_is_bit_identical(ctx, Family::Elementwise, "broadcast binary", || {
            wgsl_compute::Binary::ALL
                .into_iter()
                .flat_map(|op| {
                    [
                        bits(&ops::binary(op, &a, &row).unwrap()),
                        bits(&ops::binary(op, &a, &col).unwrap()),
                    ]
                })
                .collect()
        });
        assert!(!entries.is_empty());
        // A transposed view has no vec4 form: no choice, no key.
        let t = a.transpose(0, 1).unwrap();
        let known = ctx.tune_entries().len();
        ops::unary(wgsl_compute::Unary::Exp, &t).unwrap();
        assert_eq!(ctx.tune_entries().len(), known, "the scalar-only layout made a key");
    });
}

#[test]
fn tune_cache_round_trip_a_new_context_reads_it_and_does_not_retune() {
    each_fresh(|ctx| {
        let path = cache_file(ctx, "round-trip");
        ctx.set_tune_cache(Some(path.clone()));
        let mut rng = Rng::new(7);
        let a = random(ctx, &mut rng, &[96, 64]);
        let b = random(ctx, &mut rng, &[64, 80]);
        let want = settled(ctx, || bits(&ops::matmul(&a, &b).unwrap())).pop().unwrap();
        let tuned = ctx.tune_entries();
        assert_eq!(tuned.len(), 1, "{tuned:?}");
        assert_eq!(ctx.tune_time().len(), 1);
        assert_eq!(ctx.tune_time()[0].keys, 1);
        let text = std::fs::read_to_string(&path).expect("the cache file was written");
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let section = &doc["adapters"][0];
        assert_eq!(section["adapter"], ctx.info().name.as_str());
        assert_eq!(section["engine"], env!("CARGO_PKG_VERSION"));
        assert_eq!(section["entries"][0]["key"], tuned[0].key.as_str());

        let next = another(ctx, &path, TuneMode::Cached);
        assert_eq!(next.tune_entries(), tuned, "the new context reads the file");
        let (a2, b2) = (
            Tensor::from_slice(&next, &[96, 64], &a.to_vec().unwrap()).unwrap(),
            Tensor::from_slice(&next, &[64, 80], &b.to_vec().unwrap()).unwrap(),
        );
        assert_eq!(bits(&ops::matmul(&a2, &b2).unwrap()), want);
        assert!(next.tune_time().is_empty(), "no re-tune: {:?}", next.tune_time());
        // `on` ignores the file: the same key is tuned again.
        let again = another(ctx, &path, TuneMode::On);
        assert!(again.tune_entries().is_empty());
        let (a3, b3) = (
            Tensor::from_slice(&again, &[96, 64], &a.to_vec().unwrap()).unwrap(),
            Tensor::from_slice(&again, &[64, 80], &b.to_vec().unwrap()).unwrap(),
        );
        for got in settled(&again, || bits(&ops::matmul(&a3, &b3).unwrap())) {
            assert_eq!(got, want);
        }
        assert_eq!(again.tune_time()[0].keys, 1);
        let _ = std::fs::remove_file(&path);
    });
}

/// A cached choice that names no candidate of this version (a cache written before a
/// candidate was renamed) is tuned again and rewritten, with the same bits.
#[test]
fn tune_a_cached_choice_this_version_does_not_know_is_tuned_again() {
    each_fresh(|ctx| {
        let path = cache_file(ctx, "renamed");
        ctx.set_tune_cache(Some(path.clone()));
        let mut rng = Rng::new(8);
        let a = random(ctx, &mut rng, &[96, 64]);
        let b = random(ctx, &mut rng, &[64, 80]);
        let want = settled(ctx, || bits(&ops::matmul(&a, &b).unwrap())).pop().unwrap();
        let chosen = ctx.tune_entries()[0].chosen.clone();
        let text = std::fs::read_to_string(&path).unwrap();
        let renamed = text.replace(&format!("\"{chosen}\""), "\"an_older_name\"");
        assert_ne!(renamed, text);
        std::fs::write(&path, renamed).unwrap();
        let next = another(ctx, &path, TuneMode::Cached);
        assert_eq!(next.tune_entries()[0].chosen, "an_older_name");
        let (a2, b2) = (
            Tensor::from_slice(&next, &[96, 64], &a.to_vec().unwrap()).unwrap(),
            Tensor::from_slice(&next, &[64, 80], &b.to_vec().unwrap()).unwrap(),
        );
        for got in settled(&next, || bits(&ops::matmul(&a2, &b2).unwrap())) {
            assert_eq!(got, want);
        }
        assert_eq!(next.tune_time()[0].keys, 1, "the key is tuned again");
        assert_ne!(next.tune_entries()[0].chosen, "an_older_name");
        let _ = std::fs::remove_file(&path);
    });
}

#[test]
fn tune_bad_cache_files_are_ignored_and_rewritten() {
    each_fresh(|ctx| {
        // A good file to corrupt, or to give to another adapter or engine version.
        let good = cache_file(ctx, "good");
        ctx.set_tune_cache(Some(good.clone()));
        let mut rng = Rng::new(11);
        let (a, b) = (random(ctx, &mut rng, &[64, 32]), random(ctx, &mut rng, &[32, 64]));
        settled(ctx, || ops::matmul(&a, &b).unwrap());
        let text = std::fs::read_to_string(&good).unwrap();
        let name = serde_json::to_string(&ctx.info().name).unwrap();
        let version = format!("\"engine\": \"{}\"", env!("CARGO_PKG_VERSION"));
        assert!(text.contains(&name) && text.contains(&version), "{text}");
        // (case, contents, sections the rewritten file holds): a corrupt file is replaced
        // whole; another adapter's or another version's section is kept beside this one's.
        let bad = [
            ("corrupt", "{\"format\": 2, \"adapters\": [{\"fam".to_string(), 1),
            ("other-format", text.replace("\"format\": 2", "\"format\": 99"), 1),
            (
                "other-adapter",
                text.replace(&name, "\"Some Other GPU (RADV NAVI31)\""),
                2,
            ),
            (
                "other-version",
                text.replace(&version, "\"engine\": \"0.0.1-older\""),
                2,
            ),
        ];
        for (what, contents, sections) in bad {
            let path = cache_file(ctx, what);
            std::fs::write(&path, &contents).unwrap();
            let next = another(ctx, &path, TuneMode::Cached);
            assert!(next.tune_entries().is_empty(), "{what}: the file was used");
            let (a2, b2) = (
                Tensor::from_slice(&next, &[64, 32], &a.to_vec().unwrap()).unwrap(),
                Tensor::from_slice(&next, &[32, 64], &b.to_vec().unwrap()).unwrap(),
            );
            let want = bits(&ops::matmul(&a, &b).unwrap());
            for got in settled(&next, || bits(&ops::matmul(&a2, &b2).unwrap())) {
                assert_eq!(got, want, "{what}");
            }
            assert_eq!(next.tune_time()[0].keys, 1, "{what}: tuned afresh");
            let rewritten: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let list = rewritten["adapters"].as_array().unwrap();
            assert_eq!(list.len(), sections, "{what}: {rewritten}");
            assert_eq!(
                list[0]["adapter"],
                ctx.info().name.as_str(),
                "{what}: this adapter's first"
            );
            assert_eq!(list[0]["engine"], env!("CARGO_PKG_VERSION"), "{what}");
            assert_eq!(list[0]["entries"].as_array().unwrap().len(), 1, "{what}");
            let _ = std::fs::remove_file(&path);
        }
        let _ = std::fs::remove_file(&good);
    });
}

/// Issue 45: alternating adapters over one cache file re-tuned everything, since each run
/// rewrote the file for its own adapter. Now every adapter present (lavapipe and llvmpipe GL
/// in CI) tunes into its own section of one file, and a second round on each tunes nothing.
#[test]
fn tune_cache_keeps_every_adapter_it_has_seen() {
    let dir = std::env::temp_dir().join(format!("wgsl-compute-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("every-adapter.json");
    let _ = std::fs::remove_file(&path);
    let mut rng = Rng::new(13);
    let (a, b) = (rng.vec_range(48 * 40, -1.0, 1.0), rng.vec_range(40 * 56, -1.0, 1.0));
    let mut adapters = vec![];
    for round in 0..2 {
        each_adapter_alone(|shared| {
            let ctx = another(shared, &path, TuneMode::Cached);
            let (ta, tb) = (
                Tensor::from_slice(&ctx, &[48, 40], &a).unwrap(),
                Tensor::from_slice(&ctx, &[40, 56], &b).unwrap(),
            );
            settled(&ctx, || ops::matmul(&ta, &tb).unwrap());
            let tuned: usize = ctx.tune_time().iter().map(|t| t.keys).sum();
            let who = format!("{} ({:?})", ctx.info().name, ctx.info().backend);
            match round {
                0 => {
                    assert_eq!(tuned, 1, "{who}: the first round tunes");
                    adapters.push(who);
                }
                _ => assert_eq!(tuned, 0, "{who}: the second round reads its section"),
            }
        });
    }
    if !adapters.is_empty() {
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let n = doc["adapters"].as_array().unwrap().len();
        assert_eq!(n, adapters.len(), "one section per adapter: {adapters:?}");
    }
    let _ = std::fs::remove_file(&path);
}

/// A first call that tunes says so on stderr, and at the end for how long (issue 45: a
/// fine-tuning step took 68 s instead of 7 with nothing printed). The child is
/// `tune_env_is_read_once_per_context`, run with its output shown.
#[test]
fn tune_a_first_call_says_on_stderr_that_it_tunes_and_for_how_long() {
    each_adapter_alone(|shared| {
        let path = cache_file(shared, "stderr");
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tune::tune_env_is_read_once_per_context",
                "--test-threads",
                "1",
                "--nocapture",
            ])
            .env("ENGINE_TUNE_CHILD", "on")
            .env("ENGINE_TUNE", "on")
            .env("ENGINE_TUNE_CACHE", &path)
            .env("ENGINE_BACKEND", format!("{:?}", shared.info().backend).to_lowercase())
            .env("WGPU_ADAPTER_NAME", &shared.info().name)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let tuning = err.lines().find(|l| l.starts_with("engine: tuning matmul ["));
        let tuned = err.lines().find(|l| l.starts_with("engine: tuned matmul ["));
        let (Some(tuning), Some(tuned)) = (tuning, tuned) else {
            panic!("no tuning lines on stderr:\n{err}")
        };
        assert!(
            tuning.contains(&shared.info().name) && tuning.contains("ENGINE_TUNE=off"),
            "{tuning}"
        );
        assert!(tuned.contains(" ms: ") && tuned.contains(" keys, "), "{tuned}");
        let _ = std::fs::remove_file(&path);
    });
}

#[test]
fn tune_off_runs_the_hand_rule_and_measures_nothing() {
    each_fresh(|ctx| {
        ctx.set_tune_mode(TuneMode::Off);
        let mut rng = Rng::new(5);
        let (a, b) = (random(ctx, &mut rng, &[100, 64]), random(ctx, &mut rng, &[64, 100]));
        let before = ctx.dispatch_count();
        let y = ops::matmul(&a, &b).unwrap();
        assert_eq!(ctx.dispatch_count() - before, 1, "one dispatch, no tuning runs");
        assert_eq!(
            bits(&y),
            bits(&ops::matmul_with(&a, &b, MatmulPath::RegisterTiled).unwrap())
        );
        assert!(ctx.tune_entries().is_empty() && ctx.tune_time().is_empty());
        ctx.tune(&[ops::tune_matmul(&[100, 64], &[64, 100], DType::F32)])
            .unwrap();
        assert!(
            ctx.tune_entries().is_empty(),
            "Context::tune with tuning off does nothing"
        );
        // The plan of a capture names the hand rule's path.
        let (plan, _) = Plan::capture(ctx, &[&a, &b], || ops::matmul(&a, &b)).unwrap();
        let dump = plan.dump();
        assert!(dump.contains("ops/matmul/register_tiled"), "{dump}");
        assert!(
            dump.contains(": register_tiled (tuning off; hand rule register_tiled)"),
            "{dump}"
        );
    });
}

/// `ENGINE_TUNE` and `ENGINE_TUNE_CACHE` read by a context of a child process (the variables
/// are process-wide, so the child is this test binary again, running only this test).
#[test]
fn tune_env_is_read_once_per_context() {
    if let Ok(want) = std::env::var("ENGINE_TUNE_CHILD") {
        let ctx = Context::new();
        if want == "bogus" {
            let e = ctx.unwrap_err().to_string();
            assert!(e.contains("ENGINE_TUNE"), "{e}");
            return;
        }
        let ctx = ctx.unwrap();
        if !ctx.is_gpu() {
            return;
        }
        assert_eq!(ctx.tune_mode(), TuneMode::parse(&want).unwrap());
        assert_eq!(
            ctx.tune_cache_path(),
            std::env::var_os("ENGINE_TUNE_CACHE").map(PathBuf::from)
        );
        let a = Tensor::from_slice(&ctx, &[64, 4], &[0.5; 256]).unwrap();
        let b = Tensor::from_slice(&ctx, &[4, 64], &[0.25; 256]).unwrap();
        ops::matmul(&a, &b).unwrap();
        assert_eq!(ctx.tune_entries().is_empty(), want == "off", "{:?}", ctx.tune_entries());
        return;
    }
    each_adapter_alone(|shared| {
        let path = cache_file(shared, "env");
        for mode in ["off", "on", "bogus"] {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "tune::tune_env_is_read_once_per_context",
                    "--test-threads",
                    "1",
                ])
                .env("ENGINE_TUNE_CHILD", mode)
                .env("ENGINE_TUNE", mode)
                .env("ENGINE_TUNE_CACHE", &path)
                .env("ENGINE_BACKEND", format!("{:?}", shared.info().backend).to_lowercase())
                .env("WGPU_ADAPTER_NAME", &shared.info().name)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "ENGINE_TUNE={mode}: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let ran = String::from_utf8_lossy(&out.stdout).contains("1 passed");
            assert!(ran, "the child ran the test: {}", String::from_utf8_lossy(&out.stdout));
        }
        let _ = std::fs::remove_file(&path);
    });
}

#[test]
fn tune_env_bogus_is_an_error_on_the_cpu_context_too() {
    // Issue 41, item 7: `ENGINE_TUNE=garbage` failed `Context::new` on a GPU and was ignored
    // when the context was the CPU reference. The child is `tune_env_is_read_once_per_context`.
    for mode in ["off", "on", "bogus"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tune::tune_env_is_read_once_per_context",
                "--test-threads",
                "1",
            ])
            .env("ENGINE_TUNE_CHILD", mode)
            .env("ENGINE_TUNE", mode)
            .env("ENGINE_TUNE_CACHE", "")
            .env("ENGINE_BACKEND", "cpu")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "ENGINE_TUNE={mode} on the CPU context: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn tune_plan_captured_after_tuning_replays_the_tuned_path() {
    each_fresh(|ctx| {
        let mut rng = Rng::new(3);
        let (a, b) = (random(ctx, &mut rng, &[128, 64]), random(ctx, &mut rng, &[64, 128]));
        let want = settled(ctx, || bits(&ops::matmul(&a, &b).unwrap())).pop().unwrap();
        let entry = ctx.tune_entries().pop().expect("tuned on the first call");
        assert_eq!(entry.hand, "register_tiled");
        // Pin a path the hand rule would not take, so the plan shows whose path it runs.
        ctx.set_tune_choice(Family::Matmul, &entry.key, "tiled16").unwrap();
        let tuned_before = ctx.tune_time();
        let (plan, y) = Plan::capture(ctx, &[&a, &b], || ops::matmul(&a, &b)).unwrap();
        let dump = plan.dump();
        assert!(dump.contains("ops/matmul/tiled16"), "{dump}");
        assert_eq!(plan.choices().len(), 1, "{dump}");
        assert!(
            dump.contains(&format!(
                "chosen: matmul [{}]: tiled16 (known; hand rule register_tiled)",
                entry.key
            )),
            "{dump}"
        );
        for _ in 0..2 {
            plan.replay(ctx).unwrap();
            assert_eq!(bits(&y), want);
        }
        assert_eq!(ctx.tune_time(), tuned_before, "neither the capture nor a replay tuned");
        // A key first seen inside a capture is not tuned there: the hand rule is recorded.
        let (c, d) = (random(ctx, &mut rng, &[40, 24]), random(ctx, &mut rng, &[24, 36]));
        let (plan, _) = Plan::capture(ctx, &[&c, &d], || ops::matmul(&c, &d)).unwrap();
        assert!(
            plan.dump()
                .contains("tiled16 (hand rule, not tuned; hand rule tiled16)"),
            "{}",
            plan.dump()
        );
        assert_eq!(ctx.tune_entries().len(), 1, "the capture tuned nothing");
        assert!(ctx.tune(&[ops::tune_matmul(&[40, 24], &[24, 36], DType::F32)]).is_ok());
        assert_eq!(ctx.tune_entries().len(), 2, "Context::tune tunes it before a capture");
    });
}

#[test]
fn tune_leaves_no_allocation_behind() {
    each_fresh(|ctx| {
        ctx.set_tune_mode(TuneMode::On);
        let mut rng = Rng::new(13);
        let (a, b) = (random(ctx, &mut rng, &[128, 96]), random(ctx, &mut rng, &[96, 128]));
        let x = Tensor::from_slice(ctx, &[2, 300, 8], &rng.vec_range(4800, 0.5, 1.0)).unwrap();
        ctx.synchronize().unwrap();
        let before = ctx.pool_stats().in_use;
        {
            let y = ops::matmul(&a, &b).unwrap();
            let h = scan::linear_scan(&x, &x, None).unwrap();
            ctx.synchronize().unwrap();
            let out_bytes = ctx.pool_stats().in_use - before;
            assert!(out_bytes > 0 && out_bytes <= 2 * (y.len() + h.len()) as u64 * 4 + 512);
        }
        assert_eq!(ctx.tune_time().len(), 2, "both families tuned: {:?}", ctx.tune_time());
        assert_eq!(ctx.pool_stats().in_use, before, "tuning left buffers in use");
        ctx.tune(&[
            ops::tune_matmul(&[256, 64], &[64, 256], DType::F32),
            scan::tune_linear_scan(&[4, 100, 16], DType::F32),
        ])
        .unwrap();
        assert_eq!(ctx.pool_stats().in_use, before, "Context::tune left buffers in use");
        let spent: usize = ctx.tune_time().iter().map(|t| t.keys).sum();
        assert_eq!(spent, 4, "{:?}", ctx.tune_time());
        assert!(ctx.tune_time().iter().all(|t| t.ms > 0.0));
    });
}

#[test]
fn tune_a_call_waits_only_for_the_hand_rules_pipelines() {
    each_fresh(|ctx| {
        ctx.set_tune_mode(TuneMode::On);
        let path = cache_file(ctx, "background");
        // Off by default on a software adapter (its compiles take the cores it runs on);
        // `each_fresh` turns it on.
        assert!(!another(ctx, &path, TuneMode::On).tune_background());
        assert!(ctx.tune_background());
        ctx.set_tune_cache(Some(path.clone()));
        let mut rng = Rng::new(17);
        let (a, b) = (random(ctx, &mut rng, &[128, 64]), random(ctx, &mut rng, &[64, 128]));
        let want = bits(&ops::matmul_with(&a, &b, MatmulPath::RegisterTiled).unwrap());
        let first = bits(&ops::matmul(&a, &b).unwrap());
        assert_eq!(first, want);
        let entry = ctx.tune_entries().pop().expect("tuned on the first call");
        if ctx.info().backend == wgsl_compute::context::Backend::Gl {
            // GL builds every candidate on the call (one context, nothing in parallel).
            assert!(entry.pending.is_empty(), "{entry:?}");
        } else {
            // The fresh context lacks the other tile kernels: they build in the background,
            // the call times the hand rule alone, and nothing provisional reaches the file.
            assert!(!entry.pending.is_empty(), "{entry:?}");
            assert_eq!(entry.chosen, entry.hand, "{entry:?}");
            assert_eq!(ctx.tune_pending(), 1);
            assert!(!path.exists() || !std::fs::read_to_string(&path).unwrap().contains(&entry.key));
            ctx.finish_tuning();
            assert!(ctx.tune_background_ms() > 0.0);
            assert_eq!(
                bits(&ops::matmul(&a, &b).unwrap()),
                want,
                "the call that times the key again"
            );
        }
        let entry = ctx.tune_entries().pop().unwrap();
        assert!(entry.pending.is_empty() && ctx.tune_pending() == 0, "{entry:?}");
        assert!(
            entry.times_ms.iter().all(|(_, t)| t.is_some()),
            "every candidate timed: {entry:?}"
        );
        assert_eq!(ctx.tune_time()[0].keys, 1, "a key timed twice counts once");
        let text = std::fs::read_to_string(&path).expect("the settled entry is written");
        assert!(text.contains(&entry.key), "{text}");
        let _ = std::fs::remove_file(&path);
    });
}

#[test]
fn tune_scan_walk_strategy_tuned_times_every_walk_and_stays_within_the_gate() {
    use wgsl_compute::check::{compare, gates};
    each_fresh(|ctx| {
        let mut rng = Rng::new(3131);
        let tuned = ScanOptions::default().with_strategy(Strategy::Tuned);
        // Few lanes and long T (Auto chunks; look-back, lanes offered), many lanes (Auto walks
        // lanes; look-back and chunked offered).
        for (b, t, d) in [(1, 1500, 4), (2, 130, 200)] {
            let a = Tensor::from_slice(ctx, &[b, t, d], &rng.vec_range(b * t * d, 0.5, 1.0)).unwrap();
            let x = random(ctx, &mut rng, &[b, t, d]);
            let lv = random(ctx, &mut rng, &[b, t + 1, d]);
            let lc = Tensor::from_slice(ctx, &[b, t, d], &rng.vec_range(b * t * d, -1.0, -0.01)).unwrap();
            let g = random(ctx, &mut rng, &[b, t, d]);
            let run = |opts: &ScanOptions| {
                let h = scan::linear_scan_with(&a, &x, None, opts).unwrap();
                let gr = scan::linear_scan_backward_with(&a, None, &h, &g, opts).unwrap();
                let lh = scan::parallel_scan_log_with(&lc, &lv, opts).unwrap();
                [&h, &gr.db, &lh].map(|t| t.to_vec().unwrap())
            };
            let case = format!("Strategy::Tuned ({b}, {t}, {d}) on {}", ctx.info().name);
            // Tuning off: exactly Auto's walk.
            ctx.set_tune_mode(TuneMode::Off);
            let auto = run(&ScanOptions::default());
            assert_eq!(run(&tuned), auto, "{case}: tuning off runs Auto");
            ctx.set_tune_mode(TuneMode::On);
            let entries = learnt(ctx, Family::ScanWalk, || {
                for got in settled(ctx, || run(&tuned)) {
                    let gates = [gates::SCAN_AFFINE, gates::SCAN_AFFINE_BACKWARD, gates::SCAN_LOG];
                    for ((g, w), gate) in got.iter().zip(&auto).zip(gates) {
                        let c = compare(g, w, gate);
                        assert!(c.ok, "{case}: {c}");
                    }
                }
            });
            // linear_scan forward and reverse, parallel_scan_log forward: a key each.
            assert_eq!(entries.len(), 3, "{case}: {entries:?}");
            for e in &entries {
                assert_eq!(e.hand, "auto", "{case}: {e:?}");
                assert!(
                    e.times_ms.len() >= 2 && e.times_ms.iter().all(|(_, t)| t.is_some()),
                    "{case}: {e:?}"
                );
                // Every walk the tuner may pick, pinned, stays within the gate.
                for (walk, _) in &e.times_ms {
                    ctx.set_tune_choice(Family::ScanWalk, &e.key, walk).unwrap();
                    let got = run(&tuned);
                    let gates = [gates::SCAN_AFFINE, gates::SCAN_AFFINE_BACKWARD, gates::SCAN_LOG];
                    for ((g, w), gate) in got.iter().zip(&auto).zip(gates) {
                        let c = compare(g, w, gate);
                        assert!(c.ok, "{case}: walk {walk} of {}: {c}", e.key);
                    }
                }
            }
        }
    });
}

#[test]
fn tune_matrix_scan_strategy_tuned_times_every_kernel_set_and_walk_within_the_gate() {
    use wgsl_compute::check::{compare, gates, Gate};
    each_fresh(|ctx| {
        let mut rng = Rng::new(3232);
        let tuned = ScanOptions::default().with_strategy(Strategy::Tuned);
        // (B, T, N, k, v): k = 8 at v = 1 (rule: generic) and v = 4 (rule: affine8), (2, 1)
        // (matrix2), (4, 2) (generic only: the walks alone); few lanes and long T, so the
        // chunked walk is Auto's or a candidate.
        for (b, t, n, k, v, sets) in [
            (1, 300, 2, 8, 1, 2),
            (1, 65, 3, 8, 4, 2),
            (2, 700, 3, 2, 1, 2),
            (1, 300, 5, 4, 2, 1),
        ] {
            let a = Tensor::from_slice(
                ctx,
                &[b, t, n, k, k],
                &rng.vec_range(b * t * n * k * k, -0.4 / k as f64, 0.4 / k as f64),
            )
            .unwrap();
            let x = random(ctx, &mut rng, &[b, t, n, k, v]);
            let g = random(ctx, &mut rng, &[b, t, n, k, v]);
            let run = |opts: &ScanOptions| {
                let h = scan::matrix_affine_scan_with(&a, &x, None, opts).unwrap();
                let gr = scan::matrix_affine_scan_backward_with(&a, None, &h, &g, opts).unwrap();
                [h.to_vec().unwrap(), gr.db.to_vec().unwrap()]
            };
            let case = format!(
                "matrix_affine_scan Tuned (B {b}, T {t}, N {n}, k {k}, v {v}) on {}",
                ctx.info().name
            );
            ctx.set_tune_mode(TuneMode::Off);
            let auto = run(&ScanOptions::default());
            let differ = |x: &[Vec<f32>]| -> Vec<usize> {
                x.iter()
                    .zip(&auto)
                    .map(|(p, q)| p.iter().zip(q).filter(|(u, w)| u.to_bits() != w.to_bits()).count())
                    .collect()
            };
            assert_eq!(differ(&run(&ScanOptions::default())), [0, 0], "{case}: Auto twice");
            assert_eq!(differ(&run(&tuned)), [0, 0], "{case}: tuning off runs Auto");
            ctx.set_tune_mode(TuneMode::On);
            // Two f32 paths, each within the scan's gate of the exact scan: within twice it of
            // each other.
            let twice = |g: Gate| Gate::new(2.0 * g.atol, 2.0 * g.rtol);
            let within = |got: &[Vec<f32>], what: &str| {
                let gates = [twice(gates::SCAN_AFFINE), twice(gates::SCAN_AFFINE_BACKWARD)];
                for ((g, w), gate) in got.iter().zip(&auto).zip(gates) {
                    let c = compare(g, w, gate);
                    assert!(c.ok, "{case}: {what}: {c}");
                }
            };
            let entries = learnt(ctx, Family::MatrixScan, || {
                for got in settled(ctx, || run(&tuned)) {
                    within(&got, "tuned");
                }
            });
            assert_eq!(entries.len(), 2, "{case}: forward and the adjoint scan: {entries:?}");
            for e in &entries {
                assert!(e.times_ms.iter().all(|(_, t)| t.is_some()), "{case}: {e:?}");
                let walks = e.times_ms.len() / sets;
                assert!(e.times_ms.len() == sets * walks && walks >= 2, "{case}: {e:?}");
                for (pick, _) in &e.times_ms {
                    ctx.set_tune_choice(Family::MatrixScan, &e.key, pick).unwrap();
                    within(&run(&tuned), &format!("{pick} pinned ({})", e.key));
                }
            }
        }
    });
}

/// Which of the families `f` is: a `match` with no wildcard, so a new family fails to compile
/// here until the test below covers it.
fn family_index(f: Family) -> usize {
    match f {
        Family::Matmul => 0,
        Family::ChannelScan => 1,
        Family::Elementwise => 2,
        Family::ScanWalk => 3,
        Family::MatrixScan => 4,
        Family::Context => 5,
    }
}

#[test]
fn tune_every_family_round_trips_through_the_cache_file() {
    // Issue 41, item 6: `Family::ALL` left out `MatrixScan`, so a file with a `matrix_scan`
    // entry was refused whole ("entry 4 is malformed").
    let mut seen: Vec<usize> = Family::ALL.iter().map(|&f| family_index(f)).collect();
    seen.sort_unstable();
    assert_eq!(seen, [0, 1, 2, 3, 4, 5], "Family::ALL lists every family once");
    let entry = |f: Family| {
        serde_json::json!({
            "family": f.name(), "key": format!("key of {f}"), "chosen": "b", "hand": "a",
            "clock": "timestamps", "cost_ms": 1.5, "times_ms": [["a", 2.0], ["b", 1.0]],
        })
    };
    // The documented example's adapter (`tune::parse_cache_text`), in the one-adapter format
    // 1 that files written before issue 45 have: still read.
    let doc = serde_json::json!({
        "format": 1, "engine": env!("CARGO_PKG_VERSION"),
        "adapter": "llvmpipe (LLVM 19.1.7, 256 bits)", "vendor": 65541, "device": 0,
        "driver": "llvmpipe Mesa 25.0.7", "backend": "Vulkan",
        "entries": Family::ALL.iter().map(|&f| entry(f)).collect::<Vec<_>>(),
    });
    let parsed = wgsl_compute::tune::parse_cache_text(&doc.to_string()).unwrap();
    assert_eq!(parsed.iter().map(|e| e.family).collect::<Vec<_>>(), Family::ALL);
    each_fresh(|ctx| {
        // This adapter's own file (a tuned matmul writes it), its entries replaced by one per
        // family: a new context reads every one of them back.
        let path = cache_file(ctx, "every-family");
        ctx.set_tune_cache(Some(path.clone()));
        let mut rng = Rng::new(12);
        let (a, b) = (random(ctx, &mut rng, &[64, 32]), random(ctx, &mut rng, &[32, 64]));
        settled(ctx, || ops::matmul(&a, &b).unwrap());
        let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        doc["adapters"][0]["entries"] = Family::ALL.iter().map(|&f| entry(f)).collect();
        std::fs::write(&path, doc.to_string()).unwrap();
        let next = another(ctx, &path, TuneMode::Cached);
        let families: Vec<Family> = next.tune_entries().iter().map(|e| e.family).collect();
        assert_eq!(families, Family::ALL, "every family read back");
        let _ = std::fs::remove_file(&path);
    });
}

/// Runs `f` on a thread and fails if it takes more than `secs` (a cache read that hangs on
/// a FIFO, or reads /dev/zero without end, must not hang the suite).
fn within(secs: u64, what: &str, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still running after {secs} s"),
        Err(e) => panic!("{what}: the test thread failed ({e})"),
    }
}

#[test]
fn tune_cache_paths_that_are_not_regular_files_are_left_alone() {
    // Issue 41, item 6: pointed at a character device the tuner renamed its JSON over the
    // device node; a FIFO hung the first call; /dev/zero was read until memory ran out. The
    // cache is a regular file or nothing: such a path is neither read nor replaced, and
    // tuning goes on in memory.
    each_fresh(|ctx| {
        let dir = cache_file(ctx, "special").with_extension("d");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let have_fifo = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        // A link to /dev/zero: the link is what a rename would replace, never the device.
        let zero = dir.join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let sub = dir.join("a-directory");
        std::fs::create_dir(&sub).unwrap();
        let mut paths = vec![zero.clone(), sub.clone()];
        if have_fifo {
            paths.push(fifo.clone());
        }
        for path in paths {
            let what = format!("{} on {}", path.display(), ctx.info().name);
            let (a, b) = {
                let mut rng = Rng::new(13);
                (rng.vec_range(64 * 32, -1.0, 1.0), rng.vec_range(32 * 64, -1.0, 1.0))
            };
            let next = another(ctx, &path, TuneMode::Cached);
            let run = {
                let (next, what) = (next.clone(), what.clone());
                move || {
                    assert!(next.tune_entries().is_empty(), "{what}");
                    let a = Tensor::from_slice(&next, &[64, 32], &a).unwrap();
                    let b = Tensor::from_slice(&next, &[32, 64], &b).unwrap();
                    settled(&next, || ops::matmul(&a, &b).unwrap());
                    assert_eq!(next.tune_entries().len(), 1, "{what}: tuned in memory");
                }
            };
            within(120, &what, run);
            assert_eq!(next.tune_cache_path().as_deref(), Some(path.as_path()));
        }
        // Each is what it was, and nothing else was left in the directory.
        let kind = |p: &Path| std::fs::symlink_metadata(p).unwrap().file_type();
        assert!(kind(&zero).is_symlink() && std::fs::read_link(&zero).unwrap() == Path::new("/dev/zero"));
        assert!(kind(&sub).is_dir() && std::fs::read_dir(&sub).unwrap().next().is_none());
        if have_fifo {
            use std::os::unix::fs::FileTypeExt;
            assert!(kind(&fifo).is_fifo());
        }
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let want: Vec<&str> = if have_fifo {
            vec!["a-directory", "fifo", "zero"]
        } else {
            vec!["a-directory", "zero"]
        };
        assert_eq!(left, want);
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn tune_a_cache_file_over_16_mib_is_not_read() {
    each_fresh(|ctx| {
        // A valid document padded with spaces past 16 MiB: ignored (not read whole), then
        // rewritten by the next tuned key as any unusable file is.
        let path = cache_file(ctx, "huge");
        ctx.set_tune_cache(Some(path.clone()));
        let mut rng = Rng::new(14);
        let (a, b) = (random(ctx, &mut rng, &[64, 32]), random(ctx, &mut rng, &[32, 64]));
        settled(ctx, || ops::matmul(&a, &b).unwrap());
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&" ".repeat((16 << 20) + 1 - text.len()));
        std::fs::write(&path, &text).unwrap();
        let next = another(ctx, &path, TuneMode::Cached);
        assert!(next.tune_entries().is_empty(), "a file over 16 MiB was read");
        let mut small = text.trim_end().to_string();
        small.push('\n');
        std::fs::write(&path, &small).unwrap();
        let next = another(ctx, &path, TuneMode::Cached);
        assert_eq!(next.tune_entries().len(), 1, "the same document under the cap is read");
        let _ = std::fs::remove_file(&path);
    });
}

/// The candidate name `Context::fastest_for` records for `ctx`.
fn path_name(ctx: &Context) -> String {
    if ctx.is_gpu() {
        format!("{:?}", ctx.info().backend).to_lowercase()
    } else {
        "cpu".into()
    }
}

#[test]
fn tune_fastest_for_picks_the_fastest_software_path_and_caches_it() {
    // Issue 47: on a machine whose adapters all run on the CPU, a program asks for the fastest
    // of them and the CPU reference for its workload; the choice is timed once and cached.
    each_fresh(|ctx| {
        let path = cache_file(ctx, "fastest");
        ctx.set_tune_cache(Some(path.clone()));
        let by_env = std::env::var_os("WGPU_ADAPTER_NAME").is_some()
            || std::env::var("ENGINE_BACKEND").is_ok_and(|v| !v.is_empty() && v != "auto");
        // Made-up seconds: the CPU reference fastest, then GL, then any other backend.
        let seconds = |c: &Context| match path_name(c).as_str() {
            "cpu" => 0.1,
            "gl" => 0.2,
            _ => 0.3,
        };
        let mut seen = vec![];
        let (got, picked) = ctx
            .clone()
            .fastest_for("tune test workload", |c| {
                seen.push(path_name(c));
                Ok(seconds(c))
            })
            .unwrap();
        if !ctx.info().is_software() || by_env {
            assert_eq!(picked, Picked::Kept, "{}", ctx.info().name);
            assert!(got.same(ctx) && seen.is_empty());
            return;
        }
        let Picked::Measured(entry) = &picked else {
            panic!("measured on a software adapter, got {picked:?}");
        };
        let fastest = ["cpu", "gl"].into_iter().find(|n| seen.iter().any(|s| s == n));
        let want = fastest.map_or_else(|| seen[0].clone(), str::to_string);
        assert_eq!(seen[0], path_name(ctx), "the given context is the first candidate");
        assert_eq!(entry.chosen, want, "the fastest of {seen:?}");
        assert_eq!(path_name(&got), want);
        assert_eq!(entry.times_ms.len(), seen.len());
        assert!(picked.describe().unwrap().contains(&format!("running on {want}")));
        // Another context on the same cache file takes the choice without timing.
        let again = crate::common::fresh(ctx);
        again.set_tune_cache(Some(path.clone()));
        again.set_tune_mode(TuneMode::Cached);
        let (got, picked) = again
            .fastest_for("tune test workload", |_| panic!("a cached choice is not timed again"))
            .unwrap();
        assert!(matches!(&picked, Picked::Cached(e) if e.chosen == want), "{picked:?}");
        assert_eq!(path_name(&got), want);
        let _ = std::fs::remove_file(&path);
    });
}
