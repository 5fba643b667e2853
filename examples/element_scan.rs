//! Nonlinear element scans: the spec's three example programs, run from their s-expression text.
//!
//!     cargo run --release --example element_scan
//!     ENGINE_BACKEND=gl cargo run --release --example element_scan
//!
//! For each example this prints the output shape, a few values, the largest difference from
//! the CPU interpreter (f64), the gradients' largest differences, the IR of the program and
//! the best of five times of a forward and a forward + backward run on the device (after a
//! warm-up run, with the device synchronised before the clock is read; the times include
//! uploading the inputs).

use std::time::Instant;

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{compare, Gate, Rng};
use wgsl_compute::element_scan::spec_programs::{MAX_PLUS_REVERSE_SCAN, NORM_CAPPED_SCAN, TANH_SCAN};
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::Context;

const USAGE: &str = "usage: element_scan
Runs the element-scan spec's three example programs from their s-expression text on the adapter the
environment picks (ENGINE_BACKEND, WGPU_ADAPTER_NAME): output, differences from the CPU
interpreter, gradients, the IR and timings.";

/// Timed runs per measurement; the best is reported (the machine may be shared).
const RUNS: usize = 5;

fn random(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> ArrayD<f32> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, lo, hi)).expect("shape and data agree")
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn demo(ctx: &Context, title: &str, text: &str, bindings: &Bindings, rng: &mut Rng) -> wgsl_compute::Result<()> {
    println!("\n=== {title} ===\n{text}");
    let scan = ElementScan::from_sexpr(text, bindings)?;
    let cpu = Context::cpu();
    let gate = Gate::new(1e-5, 1e-5);

    let t = Instant::now();
    let want = scan.run(&cpu)?.to_vec()?;
    let cpu_ms = ms(t);
    let got = scan.run(ctx)?.to_vec()?; // warm-up: builds the pipeline, waits for the result
    let mut gpu_ms = f64::MAX;
    for _ in 0..RUNS {
        let t = Instant::now();
        let out = scan.run(ctx)?;
        ctx.synchronize()?;
        gpu_ms = gpu_ms.min(ms(t));
        drop(out);
    }
    let c = compare(&got, &want, gate);
    println!("output {:?}, first values {:?}", scan.shape(), &got[..4.min(got.len())]);
    println!("forward vs interpreter: {c} -> {}", if c.ok { "ok" } else { "FAIL" });

    let seed = random(rng, scan.shape(), -1.0, 1.0);
    let want = scan.grad(&cpu, &seed)?;
    let _ = scan.grad(ctx, &seed)?; // warm-up: builds the gradient pipelines
    ctx.synchronize()?;
    let mut grad_ms = f64::MAX;
    let mut got = Default::default();
    for _ in 0..RUNS {
        let t = Instant::now();
        got = scan.grad(ctx, &seed)?;
        ctx.synchronize()?;
        grad_ms = grad_ms.min(ms(t));
    }
    for (name, w) in &want {
        let c = compare(&got[name].to_vec()?, &w.to_vec()?, gate);
        println!(
            "d/d{name} {:?} vs interpreter: {c} -> {}",
            w.shape(),
            if c.ok { "ok" } else { "FAIL" }
        );
    }
    println!(
        "best of {RUNS}: forward {gpu_ms:.2} ms on the device, {cpu_ms:.2} ms on the CPU interpreter; forward + gradients {grad_ms:.2} ms"
    );
    println!("IR:\n{}", scan.ir());
    Ok(())
}

fn main() -> wgsl_compute::Result<()> {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let ctx = Context::new()?;
    println!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    let mut rng = Rng::new(7);

    let (b, t, w) = (8, 256, 64);
    let bindings = Bindings::new()
        .tensor("x", random(&mut rng, &[b, t, w], -1.0, 1.0))
        .tensor("decay", random(&mut rng, &[t, w], 0.2, 1.0))
        .tensor("initial", random(&mut rng, &[b, w], -1.0, 1.0));
    demo(
        &ctx,
        "h[t] = tanh(x[t] + decay[t] * h[t-1])",
        TANH_SCAN,
        &bindings,
        &mut rng,
    )?;

    let (b, t, h) = (4, 128, 8);
    let bindings = Bindings::new()
        .tensor("x", random(&mut rng, &[b, t, h, 16], -0.6, 0.6))
        .tensor("decay", random(&mut rng, &[t, h, 1], 0.3, 1.2))
        .number("batch", b as f64)
        .number("time", t as f64)
        .number("heads", h as f64);
    demo(
        &ctx,
        "norm-capped vector state of 16",
        NORM_CAPPED_SCAN,
        &bindings,
        &mut rng,
    )?;

    let (b, t, w) = (8, 256, 64);
    let bindings = Bindings::new()
        .tensor("x", random(&mut rng, &[b, t, w], -2.0, 2.0))
        .tensor("cost", random(&mut rng, &[b, t, w], 0.0, 0.5))
        .tensor("initial", random(&mut rng, &[b, w], -2.0, 2.0))
        .number("time", t as f64);
    demo(
        &ctx,
        "right-to-left max-plus sweep",
        MAX_PLUS_REVERSE_SCAN,
        &bindings,
        &mut rng,
    )?;
    let last = format!("(let ((states {MAX_PLUS_REVERSE_SCAN})) (slice states 1 0 1))");
    let final_state = ElementScan::from_sexpr(&last, &bindings)?.run(&ctx)?;
    println!("final state (slice states 1 0 1): shape {:?}", final_state.shape());
    Ok(())
}
