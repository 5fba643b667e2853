//! Where a GPT-2 decode step's time goes (issue: measure before designing), on the adapter
//! the environment picks:
//!
//!     cargo run --release -p wgsl-compute-dev --bin decode_probe -- [--tiny] [--steps N] [--prefill T]
//!
//! Prints, for the eager path: host time to record one step (split into recording and
//! submit), the wait for the token readback, and for the compiled path: host time to record
//! one replay, and device time per kernel of the decode plan (each kernel's dispatches timed
//! alone with GPU timestamps, summed over the step), the same for the plan with f16 weights,
//! then the end-to-end ms per token of both. Every timed section follows half a second of
//! sustained matmuls: the GPU's clock falls to idle within a second otherwise
//! (`common/clocks.rs`).

use std::time::Instant;

#[path = "common/clocks.rs"]
mod clocks;
#[path = "common/plan_profile.rs"]
mod plan_profile;

use wgsl_compute::generate::Sampling;
use wgsl_compute::models::gpt2::{self, Generator, Gpt2, StepOptions};
use wgsl_compute::plan::Plan;
use wgsl_compute::{ops, Context, Result, Tensor};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("usage: decode_probe [--tiny] [--steps N] [--prefill T]");
        return Ok(());
    }
    let tiny = args.iter().any(|a| a == "--tiny");
    let steps: usize = args
        .iter()
        .position(|a| a == "--steps")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let prefill_len: usize = args
        .iter()
        .position(|a| a == "--prefill")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let ctx = Context::new()?;
    println!("# decode probe on {} ({:?})", ctx.info().name, ctx.info().backend);
    let config = if tiny {
        gpt2::tiny::tiny_config()
    } else {
        gpt2::Config::default()
    };
    let bytes = gpt2::random_checkpoint(&config, 1, wgsl_compute::DType::F32)?;
    let model = Gpt2::new(
        &ctx,
        &gpt2::Weights::from_safetensors(config.clone(), &bytes, "random")?,
    )?;
    let prompt: Vec<u32> = (0..16).map(|i| (i * 37) as u32 % config.vocab_size as u32).collect();

    // Eager: record, submit, wait for the id.
    let mut cache = model.new_cache()?;
    model.step(&prompt, &mut cache, StepOptions::default())?;
    ctx.synchronize()?;
    clocks::sustain(&ctx, 0.5)?;
    let (mut record, mut submit, mut wait) = (0.0, 0.0, 0.0);
    let mut tok = 1u32;
    let n_eager = steps.min(config.n_positions - prompt.len() - 1).min(48);
    for _ in 0..n_eager {
        let t0 = Instant::now();
        let logits = model.step(&[tok], &mut cache, StepOptions::default())?.logits;
        let id = ops::argmax_last(&logits)?;
        let t1 = Instant::now();
        ctx.submit();
        let t2 = Instant::now();
        tok = id.to_vec()?[0] as u32;
        let t3 = Instant::now();
        record += (t1 - t0).as_secs_f64();
        submit += (t2 - t1).as_secs_f64();
        wait += (t3 - t2).as_secs_f64();
    }
    let per = |s: f64| s / n_eager as f64 * 1e3;
    println!(
        "eager step: record {:.3} ms, submit {:.3} ms, wait for the id {:.3} ms, total {:.3} ms/token",
        per(record),
        per(submit),
        per(wait),
        per(record + submit + wait)
    );

    // Compiled: recording a replay, and device time per kernel.
    let mut g = Generator::new(&model)?;
    g.generate(&prompt, 2, Sampling::Greedy, |_| {})?;
    let plan = g.decode_plan();
    let decode_dispatches = plan.dispatches();
    let t0 = Instant::now();
    for _ in 0..steps {
        plan.replay(&ctx)?;
    }
    let rec = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    ctx.synchronize()?;
    println!(
        "plan: {} dispatches; record {:.4} ms per replay; {steps} replays ran in {:.3} ms after the last was recorded",
        plan.dispatches(),
        rec / steps as f64 * 1e3,
        t1.elapsed().as_secs_f64() * 1e3
    );
    clocks::sustain(&ctx, 0.5)?;
    let (_, t) = ctx.time(|| (0..steps).try_for_each(|_| plan.replay(&ctx)))?;
    println!(
        "plan: device time {:.4} ms per replay ({:?})",
        t.seconds / steps as f64 * 1e3,
        t.clock
    );
    print!("{}", plan_profile::per_kernel(&ctx, plan)?);

    // The same plan with f16 weights (activations and sums stay f32): where halving the weight
    // bytes shows, kernel by kernel.
    let weights = gpt2::Weights::from_safetensors(config.clone(), &bytes, "random")?;
    let model16 = Gpt2::with_dtype(&ctx, &weights, wgsl_compute::DType::F16)?;
    let mut g16 = Generator::new(&model16)?;
    g16.generate(&prompt, 2, Sampling::Greedy, |_| {})?;
    let plan16 = g16.decode_plan();
    clocks::sustain(&ctx, 0.5)?;
    let (_, t16) = ctx.time(|| (0..steps).try_for_each(|_| plan16.replay(&ctx)))?;
    println!(
        "f16 weights: plan device time {:.4} ms per replay, {:.2}x the f32 plan",
        t16.seconds / steps as f64 * 1e3,
        t16.seconds / t.seconds
    );
    print!("{}", plan_profile::per_kernel(&ctx, plan16)?);
    drop(g16);
    drop(model16);

    let t = prefill_len.min(config.n_positions / 2);
    let prefill = g.prefill_plan(t)?;
    println!("prefill plan ({t} tokens): {} dispatches", prefill.dispatches());
    clocks::sustain(&ctx, 0.5)?;
    let (_, tp) = ctx.time(|| (0..8).try_for_each(|_| prefill.replay(&ctx)))?;
    println!("prefill plan: device time {:.4} ms per replay", tp.seconds / 8.0 * 1e3);
    print!("{}", plan_profile::per_kernel(&ctx, prefill)?);
    // Where the prefill's wall clock goes beyond the device time: the whole call the bench
    // times (ids and state written, the plan replayed in parts, the id read back), the replay
    // alone to a full wait, and a round trip that carries no work (a 4-byte readback).
    let long_prompt: Vec<u32> = (0..t).map(|i| (i * 53) as u32 % config.vocab_size as u32).collect();
    let median = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        let mut v = vec![];
        for i in 0..13 {
            let s = Instant::now();
            f()?;
            if i >= 3 {
                v.push(s.elapsed().as_secs_f64() * 1e3);
            }
        }
        v.sort_by(|a, b| a.total_cmp(b));
        Ok(v[v.len() / 2])
    };
    clocks::sustain(&ctx, 0.5)?;
    let whole = median(&mut || g.generate(&long_prompt, 1, Sampling::Greedy, |_| {}).map(drop))?;
    let replay = median(&mut || {
        g.prefill_plan(t)?.replay_in_parts(&ctx, 5)?;
        ctx.synchronize()
    })?;
    let one = Tensor::from_slice(&ctx, &[1], &[1.0])?;
    let trip = median(&mut || one.to_vec().map(drop))?;
    println!(
        "prefill wall (median of 10): generate to the first id {whole:.3} ms; the plan replayed in 5 parts to a full wait {replay:.3} ms; an empty readback round trip {trip:.3} ms"
    );

    let start = Instant::now();
    // The floor under a plan's dispatches: a plan of as many dispatches as the decode plan,
    // each a one-element row sum (one workgroup, no memory traffic to speak of).
    let floor = Plan::dispatch_floor(&ctx, decode_dispatches)?.0;
    clocks::sustain(&ctx, 0.5)?;
    let (_, tf) = ctx.time(|| (0..steps).try_for_each(|_| floor.replay(&ctx)))?;
    println!(
        "floor: a plan of {} one-element row sums runs {:.4} ms per replay on the device ({:.2} us a dispatch)",
        floor.dispatches(),
        tf.seconds / steps as f64 * 1e3,
        tf.seconds / steps as f64 / floor.dispatches() as f64 * 1e6
    );

    let n = steps.min(config.n_positions - prompt.len());
    g.generate(&prompt, n, Sampling::Greedy, |_| {})?;
    println!(
        "compiled generate: {:.3} ms/token over {n} tokens (prefill included)",
        start.elapsed().as_secs_f64() / n as f64 * 1e3
    );
    Ok(())
}
