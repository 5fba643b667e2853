//! The engine's benchmark on whatever adapter is present: scans (forward, forward+backward),
//! the minGRU mixers (time and peak device memory of the angle-fused vs the materialising
//! path), fp32 matmul, a GPT-2 124M-shaped prefill and per-token decode, and the bandwidth
//! ceiling measured in the same run: the engine's dense copy next to a plain vec4
//! grid-stride WGSL copy written for the bench alone (`dev/src/bin/common/peer.rs`).
//!
//!     cargo run --release -p wgsl-compute-dev --bin bench -- [--quick] [--only copy,scans,mixers,matmul,gpt2] [--strategy auto|lanes|chunked|lookback|tuned] [--json out.json]
//!     cargo run --release -p wgsl-compute-dev --bin bench -- --tuned-vs-rule [--quick] [--json out.json]
//!
//! `--tuned-vs-rule` (the `tuner` suite) times, for each matmul and channel-scan case, the
//! hand rule's path against the tuner's choice interleaved in one process (`bench_tuner`).
//!
//! Each case: `ROTATE` input sets drawn at random and cycled (so caches do not flatter),
//! warm-up runs, then the median of timed repeats. The timed runs reuse the buffers the
//! warm-up left in the pool: the bench raises the pool's idle bound (`ENGINE_POOL_BYTES`,
//! 1 GiB by default) to `BENCH_POOL_BYTES` unless the variable is set, because a fresh buffer
//! is zero-filled by wgpu on first use and the large scans' 512 MiB outputs did not fit under
//! 1 GiB with their neighbours (the large affine forward once timed 39.9 ms, above its
//! forward+backward); a case whose timed runs still created buffers says so on stderr.
//! Timing uses GPU timestamp queries where the adapter has them (`Context::time`), else wall
//! clock around a full wait. Prints a markdown table: time, GB/s or TFLOP/s, and the ratio
//! to the ceiling.

#[path = "common/clocks.rs"]
mod clocks;
#[path = "common/element_bench.rs"]
mod element_bench;
#[path = "common/gemv_bench.rs"]
mod gemv_bench;
#[path = "common/peer.rs"]
mod peer;
#[path = "common/train_gpt2_bench.rs"]
mod train_gpt2_bench;
#[path = "common/train_plan_bench.rs"]
mod train_plan_bench;

use std::time::Instant;

use wgsl_compute::check::Rng;
use wgsl_compute::context::Clock;
use wgsl_compute::generate::{self, Generate};
use wgsl_compute::mixer::{mixer_scan_backward_with, mixer_scan_with, MixerKind, MixerLayer, MixerPath};
use wgsl_compute::models::gpt2;
use wgsl_compute::ops::{self, MatmulPath};
use wgsl_compute::plan::Plan;
use wgsl_compute::scan::{self, ScanOptions};
use wgsl_compute::tune::TuneMode;
use wgsl_compute::{Context, DType, Result, Tensor};

const ROTATE: usize = 3;

/// The pool's idle bound in the bench (bytes), unless `ENGINE_POOL_BYTES` is set: room for
/// every output of the largest scan case (3 x 512 MiB forward+backward) and its scratch.
const BENCH_POOL_BYTES: u64 = 8 << 30;

/// Every figure the run prints, under the keys of the book's benchmarks chapter (`docs/src/benchmarks.md`), for `--json`.
static FIGURES: std::sync::Mutex<std::collections::BTreeMap<String, f64>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

fn figure(key: impl Into<String>, value: f64) {
    FIGURES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key.into(), value);
}

struct Args {
    quick: bool,
    strategy: scan::Strategy,
    only: String,
    /// Comma-separated substrings of "op label" (e.g. `linear_scan large`): the scan cases to run.
    cases: Option<String>,
    json: Option<String>,
    profile: bool,
    trace: Option<String>,
}

const USAGE: &str =
    "usage: bench [--quick] [--only copy,scans,element_scans,mixers,matmul,gpt2,gemv,gpt2_sizes,gpt2_train,train_plan,tuner] \
[--tuned-vs-rule] [--strategy auto|lanes|chunked|lookback|tuned] [--cases 'linear_scan large,..'] [--json out.json] [--profile] [--trace trace.json]
Benchmarks the engine on the adapter the environment picks (ENGINE_BACKEND, WGPU_ADAPTER_NAME)
and prints a markdown table: time, GB/s or TFLOP/s, and the ratio to the ceiling.
--cases keeps the scan cases whose op and label (\"linear_scan large\") contain one of the given substrings.
--profile prints per-kernel device time over the whole run (kernel, calls, total, mean, share);
--trace writes every dispatch as a Chrome trace. Both add a timestamp pair to every dispatch.
--tuned-vs-rule (= --only tuner, not in the default list) tunes every matmul and channel-scan case
in this process and times the hand rule's path against the tuner's, interleaved; with
--strategy tuned the channel scans' walk and the k x v scans' kernels and walk are tuned too
(Strategy::Tuned against Auto).";

impl Args {
    /// Whether `--only` names `suite` (a whole comma-separated name: `scans` is not
    /// `element_scans`).
    fn suite(&self, suite: &str) -> bool {
        self.only.split(',').any(|s| s.trim() == suite)
    }
}

fn args() -> Args {
    let mut a = Args {
        quick: false,
        strategy: scan::Strategy::Auto,
        only: "copy,scans,element_scans,mixers,matmul,gpt2,gemv,gpt2_sizes,gpt2_train,train_plan".into(),
        json: None,
        cases: None,
        profile: false,
        trace: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--quick" => a.quick = true,
            "--tuned-vs-rule" => a.only = "tuner".into(),
            "--only" => a.only = it.next().unwrap_or_default(),
            "--cases" => a.cases = it.next(),
            "--json" => a.json = it.next(),
            "--profile" => a.profile = true,
            "--trace" => a.trace = it.next(),
            "--strategy" => {
                a.strategy = match it.next().as_deref() {
                    Some("lanes") => scan::Strategy::Lanes,
                    Some("chunked") => scan::Strategy::Chunked { chunk: None },
                    Some("lookback") => scan::Strategy::LookBack,
                    Some("tuned") => scan::Strategy::Tuned,
                    _ => scan::Strategy::Auto,
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => eprintln!("ignoring unknown argument {other}"),
        }
    }
    a
}

/// Median seconds of `repeat` timed runs of `f(i)` after `warmup` untimed ones.
fn median(ctx: &Context, warmup: usize, repeat: usize, mut f: impl FnMut(usize) -> Result<()>) -> Result<(f64, Clock)> {
    // Clocks up first where the device has idled (dev/src/bin/common/clocks.rs): a suite run
    // after large host-side work otherwise times its small cases at idle clocks.
    clocks::warm(ctx, 0.3)?;
    for i in 0..warmup {
        f(i)?;
    }
    ctx.synchronize()?;
    let created = ctx.pool_stats().created;
    let mut times = vec![];
    let mut clock = Clock::WallClock;
    for i in 0..repeat {
        let ((), t) = ctx.time(|| f(i))?;
        clock = t.clock;
        times.push(t.seconds);
    }
    let fresh = ctx.pool_stats().created - created;
    if fresh > 0 {
        // Fresh buffers are zero-filled on first use, inside the timing.
        eprintln!("  note: the timed runs created {fresh} buffers (the pool's idle bound is too small)");
    }
    clocks::busy();
    times.sort_by(|a, b| a.total_cmp(b));
    Ok((times[times.len() / 2], clock))
}

struct Row {
    case: String,
    shape: String,
    fwd_ms: f64,
    fwd_bwd_ms: Option<f64>,
    rate: String,
    ratio: String,
}

fn print_rows(title: &str, rows: &[Row]) {
    println!("\n### {title}\n");
    println!("| case | shape | fwd ms | fwd+bwd ms | rate | vs ceiling |");
    println!("|---|---|---|---|---|---|");
    for r in rows {
        let fb = r.fwd_bwd_ms.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into());
        println!(
            "| {} | {} | {:.4} | {} | {} | {} |",
            r.case, r.shape, r.fwd_ms, fb, r.rate, r.ratio
        );
    }
}

fn random(ctx: &Context, rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> Result<Tensor> {
    let n = shape.iter().product();
    Tensor::from_slice(ctx, shape, &rng.vec_range(n, lo, hi))
}

/// The copy ceiling of this run, bytes read + written per second: the engine's dense copy
/// (`ops::unary(Unary::Identity, ..)`, its vec4 elementwise kernel) and, in the same run, the
/// bench-only plain vec4 grid-stride copy (`dev/src/shaders/bench/copy_vec4.wgsl` on a device of its
/// own, at the best of a few grid sizes). Returns the peer's figure (the engine's where the
/// peer cannot run) and the rows.
fn copy_ceiling(ctx: &Context, quick: bool) -> Result<(f64, Vec<Row>)> {
    let n = if quick { 1 << 22 } else { 1 << 27 }; // 512 MiB per buffer at full size
    let bytes = 8.0 * n as f64;
    let x = Tensor::full(ctx, &[n], 1.5)?;
    // Warm-up: the first copies of a 512 MiB buffer run at idle clocks.
    let (s, _) = median(ctx, 5, 15, |_| ops::unary(wgsl_compute::Unary::Identity, &x).map(drop))?;
    let gbps = bytes / s / 1e9;
    figure("copy_gbps", gbps);
    let peer = peer::CopyPeer::new(ctx, n).and_then(|p| {
        let mut best: Option<(f64, u32)> = None;
        for g in p.grids() {
            let t = p.median(g, 5, 15)?;
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, g));
            }
        }
        best.ok_or_else(|| "no grid to try".into())
    });
    let mut rows = vec![];
    let (ceiling, ratio) = match peer {
        Ok((t, grid)) => {
            let peer_gbps = bytes / t / 1e9;
            figure("copy_vec4_gbps", peer_gbps);
            rows.push(Row {
                case: format!("copy, bench-only vec4 grid-stride WGSL peer ({grid} workgroups of 256)"),
                shape: format!("[{n}]"),
                fwd_ms: t * 1e3,
                fwd_bwd_ms: None,
                rate: format!("{peer_gbps:.0} GB/s"),
                ratio: "ceiling".into(),
            });
            (peer_gbps, format!("{:.1}% of the vec4 peer", 100.0 * gbps / peer_gbps))
        }
        Err(e) => {
            eprintln!("the vec4 copy peer could not run ({e}); the engine's copy is the ceiling");
            (gbps, "ceiling (no peer)".into())
        }
    };
    rows.insert(
        0,
        Row {
            case: "copy, engine (ops::unary Identity: vec4 elementwise kernel)".into(),
            shape: format!("[{n}]"),
            fwd_ms: s * 1e3,
            fwd_bwd_ms: None,
            rate: format!("{gbps:.0} GB/s"),
            ratio,
        },
    );
    Ok((ceiling, rows))
}

struct ScanCase {
    op: &'static str,
    label: &'static str,
    dims: Vec<usize>,
    /// Every input's and output's dtype (F16 rows: keys `scan_<op>_<case>_f16_*`).
    dtype: DType,
}

fn scan_cases(quick: bool) -> Vec<ScanCase> {
    let mut v = vec![];
    for (label, b, t) in [("lab", 128, 64), ("long-T", 16, 1024)] {
        v.push(ScanCase {
            op: "linear_scan",
            label,
            dims: vec![b, t, 256],
            dtype: DType::F32,
        });
        v.push(ScanCase {
            op: "parallel_scan_log",
            label,
            dims: vec![b, t, 256],
            dtype: DType::F32,
        });
        v.push(ScanCase {
            op: "matrix_scan",
            label,
            dims: vec![b, t, 64],
            dtype: DType::F32,
        });
        v.push(ScanCase {
            op: "matrix_affine_scan",
            label,
            dims: vec![b, t, 32, 8, 8],
            dtype: DType::F32,
        });
    }
    if !quick {
        v.push(ScanCase {
            op: "linear_scan",
            label: "large",
            dims: vec![16, 4096, 4096],
            dtype: DType::F32,
        });
        v.push(ScanCase {
            op: "parallel_scan_log",
            label: "large",
            dims: vec![16, 4096, 4096],
            dtype: DType::F32,
        });
        v.push(ScanCase {
            op: "matrix_scan",
            label: "large",
            dims: vec![16, 4096, 1024],
            dtype: DType::F32,
        });
        v.push(ScanCase {
            op: "matrix_affine_scan",
            label: "large",
            dims: vec![8, 1024, 256, 8, 8],
            dtype: DType::F32,
        });
    }
    // The same shapes with F16 inputs and outputs (f32 state): half the bytes to move.
    let halves: Vec<ScanCase> = v
        .iter()
        .map(|c| ScanCase {
            dims: c.dims.clone(),
            dtype: DType::F16,
            ..*c
        })
        .collect();
    v.extend(halves);
    if !quick {
        // Few lanes, very long sequences (f32): 64 channel walks leave a lane walk's GPU idle,
        // the case the single pass with look-back is for.
        for op in ["linear_scan", "parallel_scan_log"] {
            v.push(ScanCase {
                op,
                label: "fewlanes",
                dims: vec![1, 1 << 22, 64],
                dtype: DType::F32,
            });
        }
    }
    v
}

/// Fewest bytes a forward moves: each input read once, the output written once.
fn scan_bytes(c: &ScanCase) -> f64 {
    let d = &c.dims;
    c.dtype.size() as f64
        * match c.op {
            "linear_scan" => 3 * d[0] * d[1] * d[2] + d[0] * d[2],
            "parallel_scan_log" => d[0] * d[1] * d[2] + 2 * d[0] * (d[1] + 1) * d[2],
            "matrix_scan" => d[0] * d[1] * d[2] * 8,
            _ => d[0] * d[1] * d[2] * (d[3] * d[3] + 2 * d[3] * d[4]),
        } as f64
}

/// One input set: the op's arguments and an upstream gradient of the output's shape.
fn scan_inputs(ctx: &Context, rng: &mut Rng, c: &ScanCase) -> Result<Vec<Tensor>> {
    let d = &c.dims;
    let f32s = match c.op {
        "linear_scan" => vec![
            random(ctx, rng, d, 0.05, 0.95)?,
            random(ctx, rng, d, -1.0, 1.0)?,
            random(ctx, rng, d, -1.0, 1.0)?,
        ],
        "parallel_scan_log" => vec![
            random(ctx, rng, d, -2.0, -0.01)?,
            random(ctx, rng, &[d[0], d[1] + 1, d[2]], -1.0, 1.0)?,
            random(ctx, rng, d, -1.0, 1.0)?,
        ],
        "matrix_scan" => vec![
            random(ctx, rng, &[d[0], d[1], d[2], 2, 2], -0.5, 0.5)?,
            random(ctx, rng, &[d[0], d[1], d[2], 2], -1.0, 1.0)?,
            random(ctx, rng, &[d[0], d[1], d[2], 2], -1.0, 1.0)?,
        ],
        _ => {
            let s = 1.0 / (d[3] as f64).sqrt();
            vec![
                random(ctx, rng, &[d[0], d[1], d[2], d[3], d[3]], -s, s)?,
                random(ctx, rng, &[d[0], d[1], d[2], d[3], d[4]], -1.0, 1.0)?,
                random(ctx, rng, &[d[0], d[1], d[2], d[3], d[4]], -1.0, 1.0)?,
            ]
        }
    };
    f32s.into_iter().map(|t| t.to_dtype(c.dtype)).collect()
}

fn scan_forward(op: &str, x: &[Tensor], opts: &ScanOptions) -> Result<Tensor> {
    match op {
        "linear_scan" => scan::linear_scan_with(&x[0], &x[1], None, opts),
        "parallel_scan_log" => scan::parallel_scan_log_with(&x[0], &x[1], opts),
        "matrix_scan" => scan::matrix_scan_with(&x[0], &x[1], None, opts),
        _ => scan::matrix_affine_scan_with(&x[0], &x[1], None, opts),
    }
}

fn scan_forward_backward(op: &str, x: &[Tensor], opts: &ScanOptions) -> Result<()> {
    let h = scan_forward(op, x, opts)?;
    match op {
        "linear_scan" => scan::linear_scan_backward_with(&x[0], None, &h, &x[2], opts).map(drop),
        "parallel_scan_log" => scan::parallel_scan_log_backward_with(&x[0], &x[1], &h, &x[2], opts).map(drop),
        "matrix_scan" => scan::matrix_scan_backward_with(&x[0], None, &h, &x[2], opts).map(drop),
        _ => scan::matrix_affine_scan_backward_with(&x[0], None, &h, &x[2], opts).map(drop),
    }
}

/// A forced strategy keys its figures apart from Auto's: `scan_<op>_<shape>_lookback_..`,
/// `mixer_<name>_lookback_..`; Auto's keys carry no tag.
fn strategy_tag(strategy: scan::Strategy) -> String {
    match strategy {
        scan::Strategy::Auto => String::new(),
        s => format!("_{}", s.to_string().replace('/', "_")),
    }
}

fn bench_scans(ctx: &Context, a: &Args, ceiling: f64) -> Result<Vec<Row>> {
    let (quick, strategy) = (a.quick, a.strategy);
    let opts = ScanOptions::route(scan::Route::Gpu).with_strategy(strategy);
    let mut rows = vec![];
    let mut rng = Rng::new(7);
    for c in scan_cases(quick) {
        let name = format!("{} {}", c.op, c.label);
        if a.cases
            .as_ref()
            .is_some_and(|k| !k.split(',').any(|k| name.contains(k)))
        {
            continue;
        }
        let sets: Vec<Vec<Tensor>> = (0..ROTATE)
            .map(|_| scan_inputs(ctx, &mut rng, &c))
            .collect::<Result<_>>()?;
        let repeat = if c.label == "large" { 5 } else { 20 };
        let (fwd, _) = median(ctx, 2, repeat, |i| {
            scan_forward(c.op, &sets[i % ROTATE], &opts).map(drop)
        })?;
        let (fb, _) = median(ctx, 2, repeat, |i| {
            scan_forward_backward(c.op, &sets[i % ROTATE], &opts)
        })?;
        let gbps = scan_bytes(&c) / fwd / 1e9;
        // The walk peers are f32 kernels: they run once, beside the f32 rows of Auto's run.
        let peer_rows = match c.label {
            "large" if c.dtype == DType::F32 && strategy == scan::Strategy::Auto => {
                walk_peer(ctx, &c).unwrap_or_else(|e| {
                    eprintln!("the {} walk peer could not run ({e})", c.op);
                    vec![]
                })
            }
            _ => vec![],
        };
        let half = if c.dtype == DType::F32 { "" } else { "_f16" };
        let key = format!(
            "{}_{}{half}{}",
            c.op,
            c.label.replace("long-T", "longT"),
            strategy_tag(strategy)
        );
        figure(format!("scan_{key}_fwd_ms"), fwd * 1e3);
        figure(format!("scan_{key}_fwdbwd_ms"), fb * 1e3);
        figure(format!("scan_{key}_fwd_gbps"), gbps);
        eprintln!(
            "  {} {} {:?} {}: fwd {:.4} ms, fwd+bwd {:.4} ms",
            c.op,
            c.label,
            c.dims,
            c.dtype,
            fwd * 1e3,
            fb * 1e3
        );
        rows.push(Row {
            case: format!("{} {}{half}", c.op, c.label),
            shape: format!("{:?}", c.dims),
            fwd_ms: fwd * 1e3,
            fwd_bwd_ms: Some(fb * 1e3),
            rate: format!("{gbps:.0} GB/s"),
            ratio: format!("{:.0}%", 100.0 * gbps / ceiling),
        });
        rows.extend(peer_rows.into_iter().map(|row| row(ceiling)));
    }
    Ok(rows)
}

/// The bench-only one-pass lane walks of `c`'s op at its shape (`dev/src/shaders/bench/walk_*.wgsl`
/// on a peer device), where one is written: the recurrence, and the same loads and stores in
/// the same order without it (`CARRY` off: every step from a zero state, so no load waits on
/// a previous step). Their inputs hold data: never-written buffers read much faster on the
/// H200 (the linear walk measured 0.94 ms on them against 2.61 ms on data). Returns the rows,
/// rated against the ceiling they are given, after printing their figures
/// `scan_<op>_large_walk_peer_ms` and `scan_<op>_large_walk_order_ms`.
fn walk_peer(ctx: &Context, c: &ScanCase) -> peer::Result<Vec<impl FnOnce(f64) -> Row>> {
    let d = &c.dims;
    let (wgsl, entry, a, x, h, per_lane) = match c.op {
        "linear_scan" => (
            include_str!("../shaders/bench/walk_linear.wgsl"),
            "walk_linear",
            1,
            1,
            1,
            1,
        ),
        "matrix_scan" => (
            include_str!("../shaders/bench/walk_matrix2.wgsl"),
            "walk_matrix2",
            4,
            2,
            2,
            1,
        ),
        "matrix_affine_scan" if d[3] == 8 && d[4] == 8 => (
            include_str!("../shaders/bench/walk_affine8.wgsl"),
            "walk_affine8",
            64,
            64,
            64,
            8,
        ),
        _ => return Ok(vec![]),
    };
    let (lanes, steps) = (d[0] * d[2], d[1]);
    let peer = peer::Peer::new(ctx)?;
    let elements = (lanes * steps) as u64 * 4;
    let buffers = [
        peer.buffer("walk a", elements * a),
        peer.buffer("walk x", elements * x),
        peer.buffer("walk h", elements * h),
    ];
    let mut rng = Rng::new(11);
    for b in &buffers {
        peer.fill(b, &mut rng);
    }
    let params = [lanes as u32, d[2] as u32, steps as u32];
    let mut rows = vec![];
    let tiled = (c.op == "linear_scan" && d[2].is_multiple_of(256)).then_some((
        include_str!("../shaders/bench/walk_linear_tiled.wgsl"),
        "walk_linear_tiled",
    ));
    let mut walks = vec![
        (wgsl, entry, 64, true, "walk_peer", "one-pass lane walk"),
        (
            wgsl,
            entry,
            64,
            false,
            "walk_order",
            "the same loads and stores without the recurrence",
        ),
    ];
    if let Some((w, e)) = tiled {
        walks.push((
            w,
            e,
            256,
            true,
            "walk_tiled",
            "lane walk, loads staged through workgroup memory",
        ));
    }
    for (wgsl, entry, wg, carry, key, what) in walks {
        let constants = [("WG", wg as f64), ("CARRY", if carry { 1.0 } else { 0.0 })];
        let kernel = peer.kernel_with(&format!("bench/{entry}"), wgsl, entry, wg, &constants, None);
        let groups = ((lanes * per_lane) as u32).div_ceil(kernel.workgroup);
        let t = peer.median(&kernel, &params, &[&buffers[0], &buffers[1], &buffers[2]], groups, 3, 7)?;
        figure(format!("scan_{}_large_{key}_ms", c.op), t * 1e3);
        let gbps = scan_bytes(c) / t / 1e9;
        let (op, dims) = (c.op, format!("{:?}", c.dims));
        rows.push(move |ceiling: f64| Row {
            case: format!("{op} large, bench-only peer: {what} ({entry})"),
            shape: dims,
            fwd_ms: t * 1e3,
            fwd_bwd_ms: None,
            rate: format!("{gbps:.0} GB/s"),
            ratio: format!("{:.0}%", 100.0 * gbps / ceiling),
        });
    }
    Ok(rows)
}

/// The mixers at the seed's memory shape (B = 128, T = 64, d = 64, Givens k = 8): the scan
/// alone (pre -> h and back) and a whole layer's forward + backward, whose peak device memory
/// is the pool's largest in-use byte count with only the inputs, dy and weights allocated
/// before (size classes included: up to 25% above the bytes asked for, 256 bytes at least).
/// The element scans of `element_bench`: forward and forward+backward medians, GB/s of the
/// forward against the copy ceiling.
fn bench_element_scans(ctx: &Context, quick: bool, ceiling: f64) -> Result<Vec<Row>> {
    let mut rows = vec![];
    for c in element_bench::cases(ctx, quick)? {
        let repeat = if c.case == "large" { 5 } else { 20 };
        let seed = element_bench::ones(ctx, &c)?;
        let (fwd, _) = median(ctx, 2, repeat, |_| c.scan.run(ctx).map(drop))?;
        let (fb, _) = median(ctx, 1, repeat, |_| {
            c.scan.run(ctx)?;
            c.scan.grad_tensor(ctx, &seed).map(drop)
        })?;
        let gbps = c.bytes / fwd / 1e9;
        let key = format!("element_scan_{}_{}", c.body, c.case);
        figure(format!("{key}_fwd_ms"), fwd * 1e3);
        figure(format!("{key}_fwdbwd_ms"), fb * 1e3);
        figure(format!("{key}_fwd_gbps"), gbps);
        eprintln!(
            "  element_scan {} {}: fwd {:.4} ms, fwd+bwd {:.4} ms",
            c.body,
            c.case,
            fwd * 1e3,
            fb * 1e3
        );
        rows.push(Row {
            case: format!("element_scan {} {}", c.body, c.case),
            shape: format!("{:?}", c.shape),
            fwd_ms: fwd * 1e3,
            fwd_bwd_ms: Some(fb * 1e3),
            rate: format!("{gbps:.0} GB/s"),
            ratio: format!("{:.0}%", 100.0 * gbps / ceiling),
        });
    }
    Ok(rows)
}

fn bench_mixers(ctx: &Context, quick: bool, strategy: scan::Strategy) -> Result<()> {
    let opts = ScanOptions::route(scan::Route::Gpu).with_strategy(strategy);
    let (b, t, dm, d) = if quick { (16, 64, 64, 64) } else { (128, 64, 64, 64) };
    let mut rng = Rng::new(9);
    println!("\n### mixers (B = {b}, T = {t}, d_model = {dm}, d = {d}; scan strategy {strategy})\n");
    println!("| mixer | path | scan fwd ms | scan fwd+bwd ms | layer fwd+bwd ms | layer fwd+bwd peak MB | of which inputs + weights MB |");
    println!("|---|---|---|---|---|---|---|");
    let cases = [
        (MixerKind::MinGru, MixerPath::Auto),
        (MixerKind::SignedMinGru, MixerPath::Auto),
        (MixerKind::RotationMinGru, MixerPath::AngleFused),
        (MixerKind::RotationMinGru, MixerPath::Materialized),
        (MixerKind::GivensMinGru { k: 8 }, MixerPath::AngleFused),
        (MixerKind::GivensMinGru { k: 8 }, MixerPath::Materialized),
    ];
    for (kind, path) in cases {
        let pres: Vec<Tensor> = (0..ROTATE)
            .map(|_| random(ctx, &mut rng, &[b, t, 2 * d], -2.0, 2.0))
            .collect::<Result<_>>()?;
        let dh = random(ctx, &mut rng, &[b, t, d], -1.0, 1.0)?;
        let (fwd, _) = median(ctx, 2, 20, |i| {
            mixer_scan_with(kind, path, &pres[i % ROTATE], &opts).map(drop)
        })?;
        let (fb, _) = median(ctx, 2, 20, |i| {
            let pre = &pres[i % ROTATE];
            mixer_scan_backward_with(pre, &mixer_scan_with(kind, path, pre, &opts)?, &dh, &opts).map(drop)
        })?;
        drop((pres, dh));
        let mut layer = MixerLayer::init(ctx, kind, dm, d, &mut rng)?;
        layer.path = path;
        let x = random(ctx, &mut rng, &[b, t, dm], -1.0, 1.0)?;
        let dy = random(ctx, &mut rng, &[b, t, dm], -1.0, 1.0)?;
        let step = || -> Result<()> {
            let (_, tape) = layer.forward(&x)?;
            layer.backward(&tape, &dy).map(drop)
        };
        let (layer_s, _) = median(ctx, 2, 10, |_| step())?;
        ctx.synchronize()?;
        let base = ctx.pool_stats().in_use;
        ctx.reset_pool_peak();
        step()?;
        ctx.synchronize()?;
        let peak = ctx.pool_stats().peak_in_use;
        let mb = |bytes: u64| bytes as f64 / 1e6;
        eprintln!(
            "  {kind} {path:?}: scan fwd {:.4} ms, fwd+bwd {:.4} ms, layer peak {:.2} MB",
            fwd * 1e3,
            fb * 1e3,
            mb(peak)
        );
        let name = match kind {
            MixerKind::MinGru => "mingru".to_string(),
            MixerKind::SignedMinGru => "signed".to_string(),
            MixerKind::RotationMinGru => "rotation".to_string(),
            MixerKind::GivensMinGru { k } => format!("givens{k}"),
        };
        let path_tag = if path == MixerPath::Materialized {
            "_materialized"
        } else {
            ""
        };
        let suffix = format!("{path_tag}{}", strategy_tag(strategy));
        figure(format!("mixer_{name}{suffix}_layer_fwdbwd_ms"), layer_s * 1e3);
        figure(format!("mixer_{name}{suffix}_peak_mb"), mb(peak));
        figure(format!("mixer_{name}{suffix}_scan_fwd_ms"), fwd * 1e3);
        figure(format!("mixer_{name}{suffix}_scan_fwdbwd_ms"), fb * 1e3);
        println!(
            "| {kind} | {path:?} | {:.4} | {:.4} | {:.4} | {:.2} | {:.2} |",
            fwd * 1e3,
            fb * 1e3,
            layer_s * 1e3,
            mb(peak),
            mb(base)
        );
    }
    Ok(())
}

fn bench_matmul(ctx: &Context, quick: bool) -> Result<Vec<Row>> {
    let mut rows = vec![];
    let mut rng = Rng::new(8);
    let sizes: &[usize] = if quick { &[256, 512] } else { &[1024, 2048, 4096] };
    for &n in sizes {
        let sets: Vec<(Tensor, Tensor)> = (0..ROTATE)
            .map(|_| {
                Ok((
                    random(ctx, &mut rng, &[n, n], -1.0, 1.0)?,
                    random(ctx, &mut rng, &[n, n], -1.0, 1.0)?,
                ))
            })
            .collect::<Result<_>>()?;
        // f16 operands, f32 accumulation: the large tile (halves widened to f32 FMAs) and
        // Auto, which takes the cooperative-matrix kernel where the context has it
        // (ENGINE_EXPERIMENTAL=cooperative-matrix).
        let halves: Vec<(Tensor, Tensor)> = sets
            .iter()
            .map(|(a, b)| Ok((a.to_dtype(DType::F16)?, b.to_dtype(DType::F16)?)))
            .collect::<Result<_>>()?;
        let auto_f16 = if ctx.info().cooperative_matrix {
            "Auto = Cooperative"
        } else {
            "Auto (no cooperative matrices)"
        };
        let cases = [
            (&sets, "fp32", "", MatmulPath::Tiled16, "Tiled16"),
            (&sets, "fp32", "", MatmulPath::RegisterTiled, "RegisterTiled"),
            (&sets, "fp32", "", MatmulPath::LargeTile, "LargeTile"),
            (&sets, "fp32", "", MatmulPath::Auto, "Auto"),
            (&halves, "f16 inputs", "f16_", MatmulPath::LargeTile, "LargeTile"),
            (&halves, "f16 inputs", "f16_", MatmulPath::Auto, auto_f16),
        ];
        for (operands, dtype, key, path, name) in cases {
            let (s, _) = median(ctx, 2, 10, |i| {
                ops::matmul_with(&operands[i % ROTATE].0, &operands[i % ROTATE].1, path).map(drop)
            })?;
            let tflops = 2.0 * (n as f64).powi(3) / s / 1e12;
            eprintln!("  matmul {dtype} {n} {name}: {:.3} ms, {tflops:.2} TFLOP/s", s * 1e3);
            match path {
                MatmulPath::Auto => figure(format!("matmul_{key}{n}_tflops"), tflops),
                p => figure(format!("matmul_{key}{n}_{p:?}_tflops").to_lowercase(), tflops),
            }
            rows.push(Row {
                case: format!("matmul {dtype} {name}"),
                shape: format!("{n}^3"),
                fwd_ms: s * 1e3,
                fwd_bwd_ms: None,
                rate: format!("{tflops:.2} TFLOP/s"),
                ratio: String::new(),
            });
        }
    }
    Ok(rows)
}

/// Median of `f`'s wall-clock seconds over `repeat` runs after `warmup` (work that waits for
/// its own results, so wall clock is the honest figure: host and device together), the
/// device's clocks raised first as [`median`] does.
fn median_wall(ctx: &Context, warmup: usize, repeat: usize, mut f: impl FnMut(usize) -> Result<()>) -> Result<f64> {
    clocks::warm(ctx, 0.3)?;
    for i in 0..warmup {
        f(i)?;
    }
    let mut times = vec![];
    for i in 0..repeat {
        let start = Instant::now();
        f(i)?;
        times.push(start.elapsed().as_secs_f64());
    }
    clocks::busy();
    times.sort_by(|a, b| a.total_cmp(b));
    Ok(times[times.len() / 2])
}

/// One GPT-2 training step on the tape (`dev/src/bin/common/train_gpt2_bench.rs`), keyed
/// `gpt2_train_*`; PyTorch's figures for the same step are `benches/gpt2_train_torch.py`'s.
fn bench_gpt2_train(ctx: &Context, quick: bool) -> Result<()> {
    let f = train_gpt2_bench::bench(ctx, quick)?;
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    println!("\n### GPT-2 training step on the tape (eager; forward, backward, Adam)\n");
    println!("| shape | params | step ms | forward ms | forward+backward ms | peak MB in use | of which params + Adam MB | dispatches per step |");
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| {} | {:.1}M | {:.2} | {:.2} | {:.2} | {:.0} | {:.0} | {} |",
        f.shape,
        f.params as f64 / 1e6,
        f.step_ms,
        f.forward_ms,
        f.forward_backward_ms,
        mb(f.peak_bytes),
        mb(f.resident_bytes),
        f.dispatches
    );
    if let Some((busy, matmul)) = f.device_ms {
        println!(
            "\ndevice time of one step (profiled, every dispatch timed): {busy:.2} ms, of which matmul kernels {matmul:.2} ms"
        );
        figure("gpt2_train_device_ms", busy);
        figure("gpt2_train_matmul_device_ms", matmul);
        // Where the rest goes (the profile's kernels other than the products), the ten largest.
        println!("\n| the step's other kernels (profiled) | dispatches per step | ms per step |");
        println!("|---|---|---|");
        for (name, calls, ms) in f.other_kernels.iter().take(10) {
            println!("| {name} | {calls:.0} | {ms:.2} |");
        }
    }
    eprintln!("gpt2_train losses of the timed steps: {:?}", f.losses);
    if !quick {
        // Where the matmul time goes: each of the step's products alone.
        for (dtype, key) in [
            (DType::F32, "gpt2_train_products_ms"),
            (DType::F16, "gpt2_train_products_f16_ms"),
        ] {
            println!(
                "\n| the step's products, each alone, {dtype} operands | per step | ms each | TFLOP/s | ms per step |"
            );
            println!("|---|---|---|---|---|");
            let mut total = 0.0;
            for (name, count, ms, tflops) in train_gpt2_bench::products(ctx, dtype)? {
                println!(
                    "| {name} | {count} | {ms:.3} | {tflops:.1} | {:.2} |",
                    ms * count as f64
                );
                total += ms * count as f64;
            }
            println!("| sum (without the head) | | | | {total:.2} |");
            figure(key, total);
        }
    }
    println!("\nmixed precision (forward inside autocast(BF16): bf16 products, f32 sums, parameters and Adam): {:.2} ms a step", f.mixed_step_ms);
    println!(
        "mixed precision with F16 products and loss scaling (autocast(F16), train::LossScaler): {:.2} ms a step",
        f.mixed_f16_step_ms
    );
    println!(
        "the same F16 step captured as a plan (train::CompiledStep::capture_scaled, the loss scale on the device): {:.2} ms a step",
        f.mixed_f16_planned_step_ms
    );
    if !f.mixed_f16_kernels.is_empty() {
        println!("\n| the F16 step's kernels (profiled) | dispatches per step | ms per step |");
        println!("|---|---|---|");
        for (name, calls, ms) in f.mixed_f16_kernels.iter().take(16) {
            println!("| {name} | {calls:.0} | {ms:.2} |");
        }
        println!();
    }
    println!(
        "the fp32 step captured as a plan (train::CompiledStep, ids written to the device each step): {:.2} ms a step; {:.0} MB in use once captured",
        f.planned_step_ms,
        mb(f.planned_resident_bytes)
    );
    figure("gpt2_train_step_ms", f.step_ms);
    figure("gpt2_train_mixed_step_ms", f.mixed_step_ms);
    figure("gpt2_train_mixed_f16_step_ms", f.mixed_f16_step_ms);
    figure("gpt2_train_mixed_f16_planned_step_ms", f.mixed_f16_planned_step_ms);
    figure("gpt2_train_planned_step_ms", f.planned_step_ms);
    figure("gpt2_train_planned_resident_mb", mb(f.planned_resident_bytes));
    figure("gpt2_train_forward_ms", f.forward_ms);
    figure("gpt2_train_forward_backward_ms", f.forward_backward_ms);
    figure("gpt2_train_peak_mb", mb(f.peak_bytes));
    figure("gpt2_train_resident_mb", mb(f.resident_bytes));
    figure("gpt2_train_dispatches", f.dispatches as f64);
    Ok(())
}

/// The decode step's matrix-vector products (`dev/src/bin/common/gemv_bench.rs`), f32 and f16
/// weights, against the copy ceiling `ceiling` and a copy of the same bytes.
fn bench_gemv(ctx: &Context, quick: bool, ceiling: f64) -> Result<Vec<Row>> {
    // (key prefix, layers, C, heads): 124M's shapes, and GPT-2 XL's (1.5B), where the
    // projections are 10-41 MB and bandwidth, not latency, should bound them.
    let sizes: &[(&str, usize, usize, usize)] = if quick {
        &[("", 0, 0, 0)]
    } else {
        &[("", 12, 768, 12), ("1558m_", 2, 1600, 25)]
    };
    let mut rows = vec![];
    for &(tag, n_layer, n_embd, n_head) in sizes {
        let mut config = if quick {
            gpt2::tiny::tiny_config()
        } else {
            gpt2::Config::default()
        };
        if !quick {
            // Two blocks are enough for the XL shapes: the figures are medians over blocks.
            (config.n_layer, config.n_embd, config.n_head) = (n_layer, n_embd, n_head);
        }
        let bytes = gpt2::random_checkpoint(&config, 1, DType::F32)?;
        let weights = gpt2::Weights::from_safetensors(config.clone(), &bytes, "random GPT-2-shaped")?;
        drop(bytes);
        if !bench_gemv_size(ctx, tag, &config, &weights, ceiling, &mut rows)? {
            break;
        }
    }
    Ok(rows)
}

/// [`bench_gemv`] at one model size; false when the adapter has no GPU timestamps.
fn bench_gemv_size(
    ctx: &Context,
    tag: &str,
    config: &gpt2::Config,
    weights: &gpt2::Weights,
    ceiling: f64,
    rows: &mut Vec<Row>,
) -> Result<bool> {
    for dtype in [DType::F32, DType::F16] {
        let found = gemv_bench::projections(ctx, config, weights, dtype)?;
        if found.is_empty() {
            eprintln!("gemv: no GPU timestamps on this adapter; the suite needs them");
            return Ok(false);
        }
        for p in found {
            let gbps = p.weight_bytes() / p.seconds / 1e9;
            let same = p.weight_bytes() / p.copy_seconds / 1e9;
            let key = format!("gemv_{tag}{}_{}", p.name, dtype.name().to_lowercase());
            figure(format!("{key}_us"), p.seconds * 1e6);
            figure(format!("{key}_gbps"), gbps);
            figure(format!("{key}_vs_copy"), gbps / ceiling);
            figure(format!("{key}_vs_same_copy"), gbps / same);
            rows.push(Row {
                case: format!("decode projection {}, {} weights", p.name, dtype.name()),
                shape: format!("K {} N {}", p.k, p.n),
                fwd_ms: p.seconds * 1e3,
                fwd_bwd_ms: None,
                rate: format!("{gbps:.0} GB/s"),
                ratio: format!(
                    "{:.1}% of the copy ceiling; {:.0}% of a copy of the same bytes ({:.1} us)",
                    100.0 * gbps / ceiling,
                    100.0 * gbps / same,
                    p.copy_seconds * 1e6
                ),
            });
        }
    }
    Ok(true)
}

/// GPT-2's four sizes (random weights), f32 and f16 weights: decode ms per token (the compiled
/// path, 64 tokens after a 64-token prompt) against the weight-bytes floor (every weight read
/// once at the run's copy ceiling `ceiling`, bytes read + written per second, the convention
/// of the copy rows) plus the dispatch floor (a plan of as many one-element row sums as the
/// decode plan has dispatches). Keys `gpt2_<size>_decode{,_f16}_ms`, `_prefill64{,_f16}_ms`,
/// `_floor{,_f16}_ms`, `_vs_floor{,_f16}`.
fn bench_gpt2_sizes(ctx: &Context, quick: bool, ceiling: f64) -> Result<Vec<Row>> {
    let sizes: &[(&str, usize, usize, usize)] = if quick {
        &[("tiny", 2, 64, 2)]
    } else {
        &[
            ("124m", 12, 768, 12),
            ("355m", 24, 1024, 16),
            ("774m", 36, 1280, 20),
            ("1558m", 48, 1600, 25),
        ]
    };
    let mut rows = vec![];
    let mut rng = Rng::new(5);
    for &(tag, n_layer, n_embd, n_head) in sizes {
        let mut config = if quick {
            gpt2::tiny::tiny_config()
        } else {
            gpt2::Config::default()
        };
        (config.n_layer, config.n_embd, config.n_head) = (n_layer, n_embd, n_head);
        let bytes = gpt2::random_checkpoint(&config, 1, DType::F32)?;
        let weights = gpt2::Weights::from_safetensors(config.clone(), &bytes, "random")?;
        drop(bytes);
        let prompts: Vec<Vec<u32>> = (0..ROTATE)
            .map(|_| (0..64).map(|_| rng.below(config.vocab_size) as u32).collect())
            .collect();
        let n = if quick { 8 } else { 64 };
        for dtype in [DType::F32, DType::F16] {
            let model = gpt2::Gpt2::with_dtype(ctx, &weights, dtype)?;
            // Every matrix once; the embeddings' rows the step reads are a rounding error.
            let weight_bytes = model.weight_bytes() as f64;
            let mut g = gpt2::Generator::new(&model)?;
            let greedy = generate::Sampling::Greedy;
            let prefill = median_wall(ctx, 2, 7, |i| {
                g.generate(&prompts[i % ROTATE], 1, greedy, |_| {}).map(drop)
            })?;
            let long = median_wall(ctx, 1, 5, |i| {
                g.generate(&prompts[i % ROTATE], 1 + n, greedy, |_| {}).map(drop)
            })?;
            let decode = (long - prefill) / n as f64;
            let dispatches = g.decode_plan().dispatches();
            let floor_plan = Plan::dispatch_floor(ctx, dispatches)?.0;
            let (dispatch_floor, _) = median(ctx, 3, 9, |_| floor_plan.replay(ctx))?;
            let floor = weight_bytes / (ceiling * 1e9) + dispatch_floor;
            let d = if dtype == DType::F32 { "" } else { "_f16" };
            figure(format!("gpt2_{tag}_decode{d}_ms"), decode * 1e3);
            figure(format!("gpt2_{tag}_prefill64{d}_ms"), prefill * 1e3);
            figure(format!("gpt2_{tag}_floor{d}_ms"), floor * 1e3);
            figure(format!("gpt2_{tag}_vs_floor{d}"), decode / floor);
            rows.push(Row {
                case: format!("gpt2 {tag} decode per token, plan, {} weights", dtype.name()),
                shape: format!("{n_layer} layers, C {n_embd}; {:.0} MB of weights", weight_bytes / 1e6),
                fwd_ms: decode * 1e3,
                fwd_bwd_ms: None,
                rate: format!("prefill 64: {:.3} ms", prefill * 1e3),
                ratio: format!(
                    "{:.2}x the floor {:.3} ms (weights at the copy ceiling {:.3} + {dispatches} dispatches {:.3})",
                    decode / floor,
                    floor * 1e3,
                    weight_bytes / (ceiling * 1e9) * 1e3,
                    dispatch_floor * 1e3
                ),
            });
        }
    }
    Ok(rows)
}

/// GPT-2 124M-shaped (random weights): the compiled path (prefill plan + decode plan, ids
/// chosen and kept on the device, read back a chunk behind) against the eager op-by-op path
/// in the same run, and the shipped Shakespeare model's decode rate.
fn bench_gpt2(ctx: &Context, quick: bool) -> Result<Vec<Row>> {
    let config = if quick {
        gpt2::tiny::tiny_config()
    } else {
        gpt2::Config::default()
    };
    let bytes = gpt2::random_checkpoint(&config, 1, DType::F32)?;
    let weights = gpt2::Weights::from_safetensors(config.clone(), &bytes, "random 124M-shaped")?;
    let model = gpt2::Gpt2::new(ctx, &weights)?;
    let shape = format!("{} layers, C {}", config.n_layer, config.n_embd);
    let last_only = gpt2::StepOptions::default();
    let mut rng = Rng::new(9);
    let prompts: Vec<Vec<u32>> = (0..ROTATE)
        .map(|_| (0..64).map(|_| rng.below(config.vocab_size) as u32).collect())
        .collect();
    let greedy = generate::Sampling::Greedy;
    let mut rows = vec![];
    let mut row = |case: &str, s: f64, tokens: f64| {
        rows.push(Row {
            case: case.into(),
            shape: shape.clone(),
            fwd_ms: s * 1e3,
            fwd_bwd_ms: None,
            rate: format!("{:.0} tok/s", tokens / s),
            ratio: String::new(),
        })
    };

    // Eager: every op recorded one by one, the token read back every step.
    let eager_prefill = median_wall(ctx, 2, 10, |i| {
        let mut cache = model.new_cache()?;
        let logits = model.step(&prompts[i % ROTATE], &mut cache, last_only)?.logits;
        ops::argmax_last(&logits)?.to_vec().map(drop)
    })?;
    let mut cache = model.new_cache()?;
    model.step(&prompts[0], &mut cache, last_only)?;
    let before = ctx.dispatch_count();
    model.step(&[13], &mut cache, last_only)?;
    let eager_ops = ctx.dispatch_count() - before;
    let mut tok = 13u32;
    let eager_decode = median_wall(ctx, 8, 32, |_| {
        let logits = model.step(&[tok], &mut cache, last_only)?.logits;
        tok = ops::argmax_last(&logits)?.to_vec()?[0] as u32;
        Ok(())
    })?;
    row("gpt2 prefill 64 tokens, eager (to first token)", eager_prefill, 64.0);
    row("gpt2 decode per token, eager", eager_decode, 1.0);
    figure("gpt2_prefill64_eager_ms", eager_prefill * 1e3);
    figure("gpt2_decode_eager_ms", eager_decode * 1e3);

    // Compiled: plans captured once, then replayed.
    let mut g = gpt2::Generator::new(&model)?;
    let dispatches = g.decode_plan().dispatches();
    let prefill_dispatches = g.prefill_plan(64)?.dispatches();
    eprintln!("{}", g.decode_plan().dump());
    let prefill = median_wall(ctx, 3, 15, |i| {
        g.generate(&prompts[i % ROTATE], 1, greedy, |_| {}).map(drop)
    })?;
    let n = if quick { 32 } else { 256 };
    let long = median_wall(ctx, 2, 7, |i| {
        g.generate(&prompts[i % ROTATE], 1 + n, greedy, |_| {}).map(drop)
    })?;
    let decode = (long - prefill) / n as f64;
    println!(
        "\ndecode step: {eager_ops} ops traced eagerly -> {dispatches} dispatches per token in the plan; \
         prefill plan (64 tokens): {prefill_dispatches} dispatches; decode plan intermediates {} B",
        g.decode_plan().peak_bytes()
    );
    row("gpt2 prefill 64 tokens, plan (to first token)", prefill, 64.0);
    row(&format!("gpt2 decode per token, plan ({n} tokens)"), decode, 1.0);
    figure("gpt2_prefill64_ms", prefill * 1e3);
    figure("gpt2_decode_ms", decode * 1e3);
    figure("gpt2_dispatches_per_token", dispatches as f64);
    figure("gpt2_eager_ops_per_token", eager_ops as f64);
    figure("gpt2_decode_plan_vs_eager", eager_decode / decode);
    eprintln!(
        "  gpt2 eager: prefill {:.3} ms, decode {:.3} ms/token; plan: prefill {:.3} ms, decode {:.3} ms/token",
        eager_prefill * 1e3,
        eager_decode * 1e3,
        prefill * 1e3,
        decode * 1e3
    );

    // The same model and run with the matrices in f16 (converted on the device): decode
    // reads half the weight bytes; activations, biases and the cache stay f32.
    drop(g);
    let half_model = gpt2::Gpt2::with_dtype(ctx, &weights, DType::F16)?;
    let mut g = gpt2::Generator::new(&half_model)?;
    let prefill_f16 = median_wall(ctx, 3, 15, |i| {
        g.generate(&prompts[i % ROTATE], 1, greedy, |_| {}).map(drop)
    })?;
    let long_f16 = median_wall(ctx, 2, 7, |i| {
        g.generate(&prompts[i % ROTATE], 1 + n, greedy, |_| {}).map(drop)
    })?;
    let decode_f16 = (long_f16 - prefill_f16) / n as f64;
    row(
        &format!("gpt2 decode per token, plan, f16 weights ({n} tokens)"),
        decode_f16,
        1.0,
    );
    figure("gpt2_decode_f16_ms", decode_f16 * 1e3);
    figure("gpt2_prefill64_f16_ms", prefill_f16 * 1e3);
    figure("gpt2_decode_f16_vs_f32", decode_f16 / decode);
    eprintln!(
        "  gpt2 f16 weights, plan: prefill {:.3} ms, decode {:.3} ms/token ({:.2}x the f32 decode)",
        prefill_f16 * 1e3,
        decode_f16 * 1e3,
        decode_f16 / decode
    );
    drop(g);

    // The shipped model, default sampling (temperature 0.8, top-k 40), from a short prompt.
    // From the working directory when run from a copy of the repo (the device machine).
    let local = std::path::Path::new("assets/models/shakespeare");
    let dir = if local.exists() {
        local.to_path_buf()
    } else {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(local)
    };
    let shakespeare = gpt2::Gpt2::new(ctx, &gpt2::Weights::load(&dir)?)?;
    let sampling = generate::Sampling::TopK {
        temperature: 0.8,
        k: 40,
        seed: 1,
    };
    let prompt = gpt2::Tokenizer::gpt2()?.encode("ROMEO:");
    let n = 200;
    let mut g = gpt2::Generator::new(&shakespeare)?;
    let s = median_wall(ctx, 2, 7, |_| g.generate(&prompt, n, sampling, |_| {}).map(drop))?;
    let eager = median_wall(ctx, 1, 3, |_| {
        shakespeare.generate_eager(&prompt, 50, sampling, |_| {}).map(drop)
    })? / 50.0;
    row(
        &format!("shakespeare model, plan, {n} sampled tokens"),
        s / n as f64,
        1.0,
    );
    row("shakespeare model, eager, 50 sampled tokens", eager, 1.0);
    figure("shakespeare_tokens_per_s", n as f64 / s);
    figure("shakespeare_eager_tokens_per_s", 1.0 / eager);
    Ok(rows)
}

/// One case of the tuner suite: a timed run at the case's shape.
struct TunerCase {
    /// The key suffix: `tuned_vs_rule_<key>`.
    key: String,
    /// What it runs, for the table.
    what: String,
    /// Timed pairs (rule, tuned) after the warm-up.
    pairs: usize,
    run: Box<dyn Fn(usize) -> Result<()>>,
}

/// The tuner suite (`--only tuner`, `--tuned-vs-rule`): for each benchmark case the tuner has a
/// choice in (the Auto matmuls of the matmul suite, the channel scans of the scans suite,
/// forward and forward+backward), in this one process:
/// 1. the first call tunes the case's keys (`ENGINE_TUNE=on` semantics, memory only: this run
///    measures for itself and neither reads nor writes the cache file), the pool's in-use
///    bytes compared before and after (the outputs dropped);
/// 2. the hand rule's path (tuning off) and the tuner's choice are timed interleaved, one run
///    of each per pair, the pairs alternating which goes first (rule, tuned, tuned, rule,
///    ...), so drift, process-to-process noise and a warm cache fall on both alike; the
///    figure is the ratio of the medians, `tuned_vs_rule_<case>`
///    (below 1: the tuner's path is faster).
///
/// Also prints each key's chosen and hand-rule path, and the tuning time per family
/// (`tune_<family>_ms`, of which `tune_<family>_first_run_ms` the hand rule's own first runs;
/// the rounds that time a key again once its candidates' background builds end included), and
/// the build time spent on background threads (`tune_background_build_ms`).
fn bench_tuner(ctx: &Context, quick: bool, strategy: scan::Strategy) -> Result<()> {
    let (mode, path) = (ctx.tune_mode(), ctx.tune_cache_path());
    ctx.set_tune_cache(None);
    ctx.set_tune_mode(TuneMode::On);
    let result = tuner_cases(ctx, quick, strategy);
    ctx.set_tune_mode(mode);
    ctx.set_tune_cache(path);
    result
}

fn tuner_cases(ctx: &Context, quick: bool, strategy: scan::Strategy) -> Result<()> {
    let mut rng = Rng::new(29);
    let mut groups: Vec<(Vec<Tensor>, Vec<TunerCase>)> = vec![];
    let sizes: &[usize] = if quick { &[256, 512] } else { &[1024, 2048, 4096] };
    for &n in sizes {
        for dtype in [DType::F32, DType::F16] {
            let sets: Vec<Tensor> = (0..2 * ROTATE)
                .map(|_| random(ctx, &mut rng, &[n, n], -1.0, 1.0)?.to_dtype(dtype))
                .collect::<Result<_>>()?;
            let x = sets.clone();
            let half = if dtype == DType::F32 { "" } else { "f16_" };
            let case = TunerCase {
                key: format!("matmul_{half}{n}"),
                what: format!("matmul {} {n}^3, Auto", dtype.name()),
                pairs: 10,
                run: Box::new(move |i| {
                    let j = 2 * (i % ROTATE);
                    ops::matmul_with(&x[j], &x[j + 1], MatmulPath::Auto).map(drop)
                }),
            };
            groups.push((sets, vec![case]));
        }
    }
    let opts = ScanOptions::route(scan::Route::Gpu).with_strategy(strategy);
    for c in scan_cases(quick) {
        // The k x v scans have a tuned family only under Strategy::Tuned (matrix_scan).
        if !matches!(c.op, "linear_scan" | "parallel_scan_log") && strategy != scan::Strategy::Tuned {
            continue;
        }
        let sets: Vec<Vec<Tensor>> = (0..ROTATE)
            .map(|_| scan_inputs(ctx, &mut rng, &c))
            .collect::<Result<_>>()?;
        let flat: Vec<Tensor> = sets.iter().flatten().cloned().collect();
        let half = if c.dtype == DType::F32 { "" } else { "_f16" };
        let key = format!(
            "scan_{}_{}{half}{}",
            c.op,
            c.label.replace("long-T", "longT"),
            strategy_tag(strategy)
        );
        let pairs = if c.label == "large" { 6 } else { 16 };
        let (op, fwd_sets, fb_sets) = (c.op, sets.clone(), sets);
        let (fwd_opts, fb_opts) = (opts, opts);
        let cases = vec![
            TunerCase {
                key: format!("{key}_fwd"),
                what: format!("{} {}{half} {:?} forward", c.op, c.label, c.dims),
                pairs,
                run: Box::new(move |i| scan_forward(op, &fwd_sets[i % ROTATE], &fwd_opts).map(drop)),
            },
            TunerCase {
                key: format!("{key}_fwdbwd"),
                what: format!("{} {}{half} {:?} forward+backward", c.op, c.label, c.dims),
                pairs,
                run: Box::new(move |i| scan_forward_backward(op, &fb_sets[i % ROTATE], &fb_opts)),
            },
        ];
        groups.push((flat, cases));
    }

    println!("\n### tuner: tuned vs hand rule, interleaved in one process\n");
    println!("| case | keys: chosen (hand rule) | rule ms | tuned ms | tuned / rule |");
    println!("|---|---|---|---|---|");
    let (mut faster, mut slower, mut same, mut worst) = (0, 0, 0, 0.0f64);
    let (mut pool_before, mut pool_after) = (0u64, 0u64);
    for (inputs, cases) in groups {
        for case in cases {
            // 1. Tune on the first call; nothing may stay allocated.
            ctx.synchronize()?;
            let before = ctx.pool_stats().in_use;
            let known = ctx.tune_entries();
            // The candidates' pipelines build in the background; the keys are timed again at
            // the first call after they are built.
            ctx.tune_settled(|| (case.run)(0))?;
            ctx.synchronize()?;
            let after = ctx.pool_stats().in_use;
            pool_before += before;
            pool_after += after;
            let keys: Vec<_> = ctx
                .tune_entries()
                .into_iter()
                .filter(|e| !known.iter().any(|k| k.family == e.family && k.key == e.key))
                .collect();
            // The keys this case runs (tuned now, or by an earlier case of the same shape).
            let chosen: Vec<String> = if keys.is_empty() {
                vec!["no new key (tuned by an earlier case, or no choice here)".into()]
            } else {
                keys.iter()
                    .map(|e| {
                        eprintln!(
                            "  tuned {} [{}]: {} (hand rule {}) in {:.1} ms: {:?}",
                            e.family, e.key, e.chosen, e.hand, e.cost_ms, e.times_ms
                        );
                        format!("{} ({})", e.chosen, e.hand)
                    })
                    .collect()
            };
            // 2. Rule and tuned interleaved, after a warm-up of each.
            let mut rule = vec![];
            let mut tuned = vec![];
            for mode in [TuneMode::Off, TuneMode::On] {
                ctx.set_tune_mode(mode);
                (case.run)(1)?;
            }
            ctx.synchronize()?;
            for i in 0..case.pairs {
                // ABBA: the pairs alternate which run goes first, so neither gains from the
                // other's inputs left in the cache (the lab scans' 16 MB fit the H200's L2).
                let mut order = [(TuneMode::Off, &mut rule), (TuneMode::On, &mut tuned)];
                if i % 2 == 1 {
                    order.reverse();
                }
                for (mode, times) in order {
                    ctx.set_tune_mode(mode);
                    let ((), t) = ctx.time(|| (case.run)(i))?;
                    times.push(t.seconds);
                }
            }
            ctx.set_tune_mode(TuneMode::On);
            let med = |v: &mut Vec<f64>| {
                v.sort_by(|a, b| a.total_cmp(b));
                v[v.len() / 2]
            };
            let (r, t) = (med(&mut rule), med(&mut tuned));
            let ratio = t / r;
            figure(format!("tuned_vs_rule_{}", case.key), ratio);
            match ratio {
                x if x < 0.98 => faster += 1,
                x if x > 1.02 => slower += 1,
                _ => same += 1,
            }
            worst = worst.max(ratio);
            eprintln!(
                "  {}: rule {:.4} ms, tuned {:.4} ms, tuned / rule {ratio:.3}; pool in use {before} -> {after} B",
                case.what,
                r * 1e3,
                t * 1e3
            );
            println!(
                "| {} | {} | {:.4} | {:.4} | {ratio:.3} |",
                case.what,
                chosen.join(", "),
                r * 1e3,
                t * 1e3
            );
        }
        drop(inputs);
    }
    println!(
        "\ntuner vs hand rule: {faster} cases faster by more than 2%, {slower} slower by more than 2%, \
         {same} within 2%; worst tuned / rule {worst:.3}"
    );
    figure("tuned_vs_rule_faster_cases", faster as f64);
    figure("tuned_vs_rule_slower_cases", slower as f64);
    figure("tuned_vs_rule_worst", worst);
    for t in ctx.tune_time() {
        println!(
            "tuning {}: {} keys in {:.1} ms ({:.1} ms of them the hand rule's own first runs, {:.1} ms added by tuning)",
            t.family,
            t.keys,
            t.ms,
            t.first_run_ms,
            t.ms - t.first_run_ms
        );
        figure(format!("tune_{}_ms", t.family), t.ms);
        figure(format!("tune_{}_first_run_ms", t.family), t.first_run_ms);
        figure(format!("tune_{}_keys", t.family), t.keys as f64);
    }
    let background = ctx.tune_background_ms();
    println!("the candidates' pipelines built on background threads meanwhile: {background:.1} ms of build time");
    figure("tune_background_build_ms", background);
    println!(
        "pool in use around each case's tuning call, summed over the cases: {pool_before} B before, {pool_after} B after"
    );
    figure("tune_pool_in_use_before_bytes", pool_before as f64);
    figure("tune_pool_in_use_after_bytes", pool_after as f64);
    Ok(())
}

fn main() -> Result<()> {
    let a = args();
    if std::env::var_os("ENGINE_POOL_BYTES").is_none() {
        // Before the context reads it; nothing else runs yet.
        std::env::set_var("ENGINE_POOL_BYTES", BENCH_POOL_BYTES.to_string());
    }
    let ctx = Context::new()?;
    if a.profile || a.trace.is_some() {
        ctx.set_profiling(true);
    }
    println!(
        "# engine bench on {} ({:?}, {})",
        ctx.info().name,
        ctx.info().backend,
        ctx.info().driver
    );
    let clock = if ctx.info().timestamps_inside_passes {
        "GPU timestamp queries"
    } else {
        "wall clock"
    };
    println!("timing: {clock}; median of repeats after warm-up; {ROTATE} rotated input sets");
    let mut ceiling = 4130.0;
    if a.suite("copy") {
        let (c, rows) = copy_ceiling(&ctx, a.quick)?;
        ceiling = c;
        print_rows("bandwidth ceiling of this run", &rows);
        println!("(an earlier H200 measurement of a vec4 grid-stride WGSL copy: 4130 GB/s; torch clone is torch_copy_gbps in benches/torch_reference.py)");
    }
    // Matmul and GPT-2 first: after the large scans (buffers of up to 1 GiB) the 1024 and 2048
    // matmuls once measured 3x and 2x slow in the same process (alone they do not); each
    // suite also starts with the pool's idle buffers released.
    if a.suite("matmul") {
        ctx.trim_pool();
        print_rows("matmul", &bench_matmul(&ctx, a.quick)?);
    }
    if a.suite("gpt2") {
        ctx.trim_pool();
        print_rows("GPT-2", &bench_gpt2(&ctx, a.quick)?);
    }
    if a.suite("gemv") {
        ctx.trim_pool();
        print_rows(
            "decode projections (each dispatch timed alone in a replay)",
            &bench_gemv(&ctx, a.quick, ceiling)?,
        );
    }
    if a.suite("gpt2_sizes") {
        ctx.trim_pool();
        print_rows(
            "GPT-2 sizes (decode against its floors)",
            &bench_gpt2_sizes(&ctx, a.quick, ceiling)?,
        );
    }
    if a.suite("train_plan") {
        ctx.trim_pool();
        println!("\n### A training step as a plan (an MLP, mean squared error, Adam)\n");
        println!("| batch, widths | eager tape ms per step | planned ms per step | eager / planned | dispatches per replay | their dispatch floor ms |");
        println!("|---|---|---|---|---|---|");
        for (i, size) in train_plan_bench::SIZES.into_iter().enumerate() {
            let (eager, planned, dispatches, floor) = train_plan_bench::bench(&ctx, a.quick, size)?;
            println!(
                "| {}, {:?} | {eager:.3} | {planned:.3} | {:.2}x | {dispatches} | {floor:.3} |",
                size.0,
                size.1,
                eager / planned
            );
            let key = if i == 0 { "train_plan_small" } else { "train_plan_large" };
            figure(format!("{key}_eager_ms"), eager);
            figure(format!("{key}_planned_ms"), planned);
            figure(format!("{key}_speedup"), eager / planned);
            figure(format!("{key}_floor_ms"), floor);
        }
        println!("(target, the small size on lavapipe: planned at least 2x faster than the eager tape)");
    }
    if a.suite("gpt2_train") {
        ctx.trim_pool();
        bench_gpt2_train(&ctx, a.quick)?;
    }
    if a.suite("scans") {
        ctx.trim_pool();
        let title = format!("scans (Route::Gpu, strategy {})", a.strategy);
        print_rows(&title, &bench_scans(&ctx, &a, ceiling)?);
    }
    if a.suite("element_scans") {
        ctx.trim_pool();
        print_rows(
            "element scans (the bodies of benches/jax_element_scans.py)",
            &bench_element_scans(&ctx, a.quick, ceiling)?,
        );
    }
    if a.suite("mixers") {
        ctx.trim_pool();
        bench_mixers(&ctx, a.quick, a.strategy)?;
    }
    if a.suite("tuner") {
        ctx.trim_pool();
        bench_tuner(&ctx, a.quick, a.strategy)?;
    }
    if a.profile || a.trace.is_some() {
        let profile = ctx.profile()?;
        println!("\n## profile (every dispatch of the run)\n\n```\n{profile}\n```");
        if let Some(path) = &a.trace {
            profile.write_chrome_trace(std::path::Path::new(path))?;
            println!("wrote the trace to {path}");
        }
    }
    if let Some(path) = a.json {
        let figures = FIGURES.lock().unwrap_or_else(|p| p.into_inner());
        let mut json = serde_json::Map::new();
        json.insert("adapter".into(), ctx.info().name.clone().into());
        for (k, v) in figures.iter() {
            json.insert(k.clone(), serde_json::Value::from(*v));
        }
        let text = serde_json::to_string_pretty(&serde_json::Value::Object(json)).unwrap_or_default();
        std::fs::write(&path, text + "\n").map_err(|e| wgsl_compute::Error::Io {
            what: path.clone(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}
