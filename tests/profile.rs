//! The profiler: per-kernel rows for the kernels that ran, a table, and a Chrome trace that
//! parses as JSON, with GPU timestamps and with the wall clock.

use wgsl_compute::context::{Clock, Profile};
use wgsl_compute::{ops, Context, Tensor};

use crate::common::each_adapter_alone;

/// Runs an elementwise product and a row sum under the profiler with `clock`.
fn profiled(ctx: &Context, clock: Clock) -> Profile {
    ctx.reset_profile().unwrap();
    ctx.set_profiling_with(true, clock);
    assert!(ctx.profiling());
    let x = Tensor::from_slice(ctx, &[3, 5], &(0..15).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    for _ in 0..3 {
        let s = ops::sum_last(&ops::mul(&x, &x).unwrap()).unwrap().to_vec().unwrap();
        assert_eq!(s[0], 30.0);
    }
    let profile = ctx.profile().unwrap();
    ctx.set_profiling(false);
    ctx.reset_profile().unwrap();
    profile
}

fn check(ctx: &Context, p: &Profile) {
    let on = &ctx.info().name;
    let find = |part: &str| {
        p.kernels
            .iter()
            .find(|k| k.name.contains(part))
            .unwrap_or_else(|| panic!("no {part} row on {on}: {p}"))
    };
    // Exactly the dispatches recorded: 3 products and 3 sums (nothing else ran: the test is alone).
    assert_eq!(find("elementwise/mul").calls, 3, "{p}");
    assert_eq!(find("sum_rows").calls, 3, "{p}");
    assert!(
        p.kernels.iter().all(|k| k.seconds >= 0.0 && k.seconds.is_finite()),
        "{p}"
    );
    assert!(p.total_seconds() > 0.0, "no time measured on {on}: {p}");
    let table = p.to_string();
    for header in ["kernel", "calls", "total ms", "mean us", "share"] {
        assert!(table.lines().next().unwrap().contains(header), "{table}");
    }
    for k in &p.kernels {
        assert!(table.contains(&k.name), "{table}");
    }
    // The trace: one complete event per dispatch, named after its kernel.
    let trace: serde_json::Value = serde_json::from_str(&p.chrome_trace()).expect("the trace is JSON");
    let events = trace["traceEvents"].as_array().unwrap();
    let calls: u64 = p.kernels.iter().map(|k| k.calls).sum();
    assert_eq!(events.len() as u64, calls);
    for e in events {
        assert_eq!(e["ph"], "X");
        assert!(
            e["dur"].as_f64().unwrap() >= 0.0 && e["ts"].as_f64().unwrap() >= 0.0,
            "{e}"
        );
        assert!(p.kernel(e["name"].as_str().unwrap()).is_some(), "{e}");
    }
}

#[test]
fn profile_has_rows_for_the_kernels_that_ran() {
    each_adapter_alone(|ctx| {
        let p = profiled(ctx, Clock::Timestamps);
        let want = if ctx.info().timestamps {
            Clock::Timestamps
        } else {
            Clock::WallClock
        };
        assert_eq!(p.clock, want);
        check(ctx, &p);
    });
}

#[test]
fn profile_wall_clock_fallback() {
    each_adapter_alone(|ctx| {
        let p = profiled(ctx, Clock::WallClock);
        assert_eq!(p.clock, Clock::WallClock);
        check(ctx, &p);
    });
}

#[test]
fn profile_is_empty_on_the_cpu_context_and_when_off() {
    let cpu = Context::cpu();
    cpu.set_profiling(true);
    assert!(!cpu.profiling());
    assert!(cpu.profile().unwrap().kernels.is_empty());
    each_adapter_alone(|ctx| {
        ctx.set_profiling(false); // whatever ENGINE_PROFILE says
        ctx.reset_profile().unwrap();
        let x = Tensor::from_slice(ctx, &[4], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        ops::sum_last(&x).unwrap().to_vec().unwrap();
        assert!(ctx.profile().unwrap().kernels.is_empty());
    });
}

#[test]
fn profile_counts_the_dispatches_of_a_plan_replay() {
    each_adapter_alone(|ctx| {
        let x = Tensor::from_slice(ctx, &[4], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        let (plan, y) = wgsl_compute::plan::Plan::capture(ctx, &[&x], || ops::add(&ops::exp(&x)?, &x)).unwrap();
        for clock in [Clock::Timestamps, Clock::WallClock] {
            ctx.reset_profile().unwrap();
            ctx.set_profiling_with(true, clock);
            for _ in 0..3 {
                plan.replay(ctx).unwrap();
            }
            let got = y.to_vec().unwrap();
            let p = ctx.profile().unwrap();
            ctx.set_profiling(false);
            ctx.reset_profile().unwrap();
            assert!((got[0] - (1f32.exp() + 1.0)).abs() < 1e-5);
            let inside = clock == Clock::Timestamps && ctx.info().timestamps_inside_passes;
            if inside {
                // Every dispatch inside the plan's one pass, under its own kernel.
                let calls: Vec<u64> = p.kernels.iter().map(|k| k.calls).collect();
                assert_eq!(calls.iter().sum::<u64>(), 3 * plan.dispatches() as u64, "{p}");
                assert!(
                    p.kernels
                        .iter()
                        .all(|k| k.calls % 3 == 0 && !k.name.starts_with("plan")),
                    "{p}"
                );
            } else {
                assert_eq!(p.kernels.len(), 1, "{p}");
                assert_eq!(
                    (p.kernels[0].name.as_str(), p.kernels[0].calls),
                    ("plan (one pass)", 3),
                    "{p}"
                );
            }
            assert!(p.total_seconds() > 0.0, "{p}");
            let trace: serde_json::Value = serde_json::from_str(&p.chrome_trace()).unwrap();
            assert_eq!(
                trace["traceEvents"].as_array().unwrap().len() as u64,
                p.kernels.iter().map(|k| k.calls).sum::<u64>()
            );
        }
    });
}
