//! Lists every adapter wgpu can see, then the one the engine picks and what it can do.
//!
//!     cargo run --release --example info
//!     ENGINE_BACKEND=gl cargo run --release --example info
//!     WGPU_ADAPTER_NAME=nvidia cargo run --release --example info
//!     cargo run --release --example info -- --tuned     # what the tune cache holds
//!     cargo run --release --example info -- --tune      # tune a few shapes first, then list

use wgsl_compute::Context;

const USAGE: &str = "usage: info [--tuned] [--tune]
Lists every adapter wgpu can see, the one the engine picks (ENGINE_BACKEND, WGPU_ADAPTER_NAME),
its optional features and limits, and runs one small op on it.
  --tuned  list what the tuner's cache holds for the chosen adapter instead: each entry's
           family, shape key, chosen and hand-rule candidates, every candidate's time, and the
           tuning time per family (ENGINE_TUNE_CACHE names another cache file)
  --tune   first tune a few shapes (GPT-2 small's projections at 64 rows, a channel scan)
           with Context::tune, print the time it took per family, then list as --tuned";

fn main() -> wgsl_compute::Result<()> {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let flag = |f: &str| std::env::args().skip(1).any(|a| a == f);
    if flag("--tuned") || flag("--tune") {
        return tuned(flag("--tune"));
    }
    let all = pollster::block_on(Context::each_adapter())?;
    println!("adapters ({}):", all.len());
    for (i, ctx) in all.iter().enumerate() {
        let info = ctx.info();
        println!("  [{i}] {} ({:?}, {})", info.name, info.backend, info.device_type);
    }
    drop(all);

    let ctx = Context::new()?;
    println!("\nchosen:\n{}", ctx.info());

    // A tiny op proves the device runs kernels end to end.
    let x = wgsl_compute::Tensor::from_slice(&ctx, &[4], &[1.0, 2.0, 3.0, 4.0])?;
    let s = wgsl_compute::ops::sum_last(&wgsl_compute::ops::mul(&x, &x)?)?.to_vec()?;
    println!("\nsmoke test: sum(x*x) for x = [1, 2, 3, 4] is {} (expected 30)", s[0]);
    // Half precision: converted on the device and widened back (exact for these values).
    for dtype in [wgsl_compute::DType::F16, wgsl_compute::DType::BF16] {
        let h = x.to_dtype(dtype)?;
        println!("{dtype}: [1, 2, 3, 4] -> {:04x?} -> {:?}", h.to_halves()?, h.to_vec()?);
    }
    Ok(())
}

/// `--tuned`: the tune cache of the adapter the engine picks; `--tune` first fills it.
fn tuned(tune_first: bool) -> wgsl_compute::Result<()> {
    use wgsl_compute::{ops::tune_matmul, scan::tune_linear_scan, DType};
    let ctx = Context::new()?;
    println!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    if tune_first {
        ctx.tune(&[
            tune_matmul(&[64, 768], &[768, 2304], DType::F32),
            tune_matmul(&[64, 768], &[768, 768], DType::F32),
            tune_matmul(&[64, 768], &[768, 3072], DType::F32),
            tune_matmul(&[64, 3072], &[3072, 768], DType::F32),
            tune_linear_scan(&[4, 1024, 256], DType::F32),
        ])?;
        for t in ctx.tune_time() {
            println!(
                "tuned now: {} {} keys in {:.1} ms ({:.1} ms of them the hand rule's own first runs, paid untuned too)",
                t.family, t.keys, t.ms, t.first_run_ms
            );
        }
    }
    let file = ctx
        .tune_cache_path()
        .map_or("none (memory only)".to_string(), |p| p.display().to_string());
    println!("tune cache: {file}; ENGINE_TUNE={}", ctx.tune_mode());
    if ctx.tune_mode() != wgsl_compute::tune::TuneMode::Cached {
        println!("(the file is read in `cached` mode only)");
    }
    let entries = ctx.tune_entries();
    if entries.is_empty() {
        println!("no tuned entries for this adapter and engine version");
        return Ok(());
    }
    let width = entries.iter().map(|e| e.key.len()).max().unwrap_or(3).max(3);
    println!(
        "\n{:<12}  {:<width$}  {:<14}  {:<14}  {:>9}  times (ms)",
        "family", "key", "chosen", "hand rule", "cost ms"
    );
    for e in &entries {
        let times: Vec<String> = e
            .times_ms
            .iter()
            .map(|(c, t)| match t {
                Some(ms) => format!("{c} {ms:.3}"),
                None => format!("{c} refused"),
            })
            .collect();
        println!(
            "{:<12}  {:<width$}  {:<14}  {:<14}  {:>9.1}  {} ({})",
            e.family.name(),
            e.key,
            e.chosen,
            e.hand,
            e.cost_ms,
            times.join(", "),
            e.clock
        );
    }
    println!("\ntuning time recorded, per family:");
    for family in wgsl_compute::tune::Family::ALL {
        let of: Vec<_> = entries.iter().filter(|e| e.family == family).collect();
        if of.is_empty() {
            continue;
        }
        let changed = of.iter().filter(|e| e.chosen != e.hand).count();
        let ms: f64 = of.iter().map(|e| e.cost_ms).sum();
        println!(
            "  {:<12}  {} keys, {ms:.1} ms, {changed} not on the hand rule's path",
            family.name(),
            of.len()
        );
    }
    Ok(())
}
