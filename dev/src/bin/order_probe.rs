//! The order effect (issue #28, item 6), measured in one process: small work timed before and
//! after large allocations, so that what slows it can be told apart.
//!
//! ```text
//! cargo run --release -p wgsl-compute-dev --bin order_probe [-- --gib 4]
//! ```
//! Three small cases (a plan of 64 one-element dispatches, a 9 MB elementwise add, a decode-
//! sized matrix-vector product), each as the median of 15 device times (GPU timestamps where
//! the adapter has them) and 15 wall times around a full wait, in phases: a baseline; while
//! `--gib` GiB of tensors uploaded from the host are alive (twice, to see whether it passes);
//! after they are dropped; after the pool is trimmed; while as many bytes of device-filled
//! zeros are alive; after those are dropped and the pool trimmed; after 3 s idle; after 0.3 s
//! and 2 s more of back-to-back matmuls; on a new context. Prints one line per phase and case, with the
//! pool's counts, and each phase's time since the start (to line up with a clock log).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// When the probe started: each phase prints its time, to line up with a clock log
/// (`nvidia-smi --query-gpu=clocks.sm,pstate --format=csv -lms 100` beside it).
static START: OnceLock<Instant> = OnceLock::new();

#[path = "common/clocks.rs"]
mod clocks;

use wgsl_compute::plan::Plan;
use wgsl_compute::{ops, Context, Result, Tensor};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Device and wall medians, in ms, of `f` run 15 times after 3 warm-ups.
fn time(ctx: &Context, mut f: impl FnMut() -> Result<()>) -> Result<(f64, f64)> {
    for _ in 0..3 {
        f()?;
    }
    ctx.synchronize()?;
    let (mut device, mut wall) = (vec![], vec![]);
    for _ in 0..15 {
        let ((), t) = ctx.time(&mut f)?;
        device.push(t.seconds * 1e3);
        let start = Instant::now();
        f()?;
        ctx.synchronize()?;
        wall.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok((median(device), median(wall)))
}

struct Cases {
    floor: Plan,
    a: Tensor,
    b: Tensor,
    x: Tensor,
    w: Tensor,
}

impl Cases {
    /// The cases on `ctx`, their inputs from `data` (768 x 3072 values).
    fn new(ctx: &Context, data: &[f32]) -> Result<Cases> {
        let n = data.len();
        Ok(Cases {
            floor: Plan::dispatch_floor(ctx, 64)?.0,
            a: Tensor::from_slice(ctx, &[n], data)?,
            b: Tensor::from_slice(ctx, &[n], data)?,
            x: Tensor::from_slice(ctx, &[1, 768], &data[..768])?,
            w: Tensor::from_slice(ctx, &[768, 3072], &data[..768 * 3072])?,
        })
    }
}

fn measure(ctx: &Context, cases: &Cases, phase: &str) -> Result<()> {
    let s = ctx.pool_stats();
    let at = START.get_or_init(Instant::now).elapsed().as_secs_f64();
    println!("# {phase} at {at:.2} s");
    let rows: [(&str, (f64, f64)); 3] = [
        ("floor 64", time(ctx, || cases.floor.replay(ctx))?),
        ("add 9 MB", time(ctx, || ops::add(&cases.a, &cases.b).map(drop))?),
        (
            "matvec 768x3072",
            time(ctx, || ops::matmul(&cases.x, &cases.w).map(drop))?,
        ),
    ];
    for (case, (device, wall)) in rows {
        println!(
            "{phase:<28} {case:<16} device {device:8.4} ms  wall {wall:8.4} ms   (pool: in use {} MB, idle {} MB, created {}, reused {})",
            s.in_use >> 20,
            s.idle >> 20,
            s.created,
            s.reused
        );
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "usage: order_probe [--gib N]   small work timed before, during and after N GiB of tensors (default 4)"
        );
        return Ok(());
    }
    let gib: usize = match args.iter().position(|a| a == "--gib") {
        Some(i) => args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(4),
        None => 4,
    };
    START.get_or_init(Instant::now);
    let ctx = Context::new()?;
    println!(
        "# order probe on {} ({:?}), {gib} GiB",
        ctx.info().name,
        ctx.info().backend
    );
    let n = 768 * 3072; // 9 MB: also the matrix of the matvec
    let data: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.01).collect();
    let cases = Cases::new(&ctx, &data)?;
    measure(&ctx, &cases, "baseline")?;

    // 64 MiB tensors uploaded from the host, as a model's weights are (under every
    // adapter's binding limit).
    let chunk = 16 << 20; // f32s
    let host = vec![0.5f32; chunk];
    let start = Instant::now();
    let mut big = vec![];
    for _ in 0..gib * 16 {
        big.push(Tensor::from_slice(&ctx, &[chunk], &host)?);
    }
    ctx.synchronize()?;
    println!("# uploaded {gib} GiB in {:.2} s", start.elapsed().as_secs_f64());
    measure(&ctx, &cases, "uploaded, alive")?;
    measure(&ctx, &cases, "uploaded, alive, again")?;
    drop(big);
    measure(&ctx, &cases, "uploaded, dropped")?;
    ctx.trim_pool();
    measure(&ctx, &cases, "uploaded, dropped, trimmed")?;

    let mut big = vec![];
    for _ in 0..gib * 16 {
        big.push(Tensor::zeros(&ctx, &[chunk])?);
    }
    ctx.synchronize()?;
    measure(&ctx, &cases, "zeros, alive")?;
    drop(big);
    ctx.trim_pool();
    measure(&ctx, &cases, "zeros, dropped, trimmed")?;
    // Clocks: three seconds idle, then sustained work (2048^3 matmuls back to back) for 0.3 s
    // and for 2 s more.
    std::thread::sleep(Duration::from_secs(3));
    measure(&ctx, &cases, "after 3 s idle")?;
    clocks::sustain(&ctx, 0.3)?;
    measure(&ctx, &cases, "after 0.3 s of matmuls")?;
    clocks::sustain(&ctx, 2.0)?;
    measure(&ctx, &cases, "after 2 s more")?;
    // A fresh context on the same process: does the state belong to the context or the device?
    drop(cases);
    ctx.trim_pool();
    drop(ctx);
    let ctx = Context::new()?;
    let cases = Cases::new(&ctx, &data)?;
    measure(&ctx, &cases, "a new context")?;
    Ok(())
}
