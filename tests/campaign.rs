//! A bounded, seeded randomized campaign over the public tensor API (issue 21, item 2).
//!
//! Random ops on random views of random shapes (0-size and huge dimensions included) run on
//! the CPU context and on one GPU adapter under `catch_unwind`. Every input must end in a clean
//! `Error` or a result; GPU results that both contexts produce are compared with the CPU
//! reference. The counts are printed (`campaign: ...`) and the test fails on any panic or
//! wrong result. `ENGINE_CAMPAIGN_INPUTS` scales it (default 1,500; CI uses the default).

use std::panic::{catch_unwind, AssertUnwindSafe};

use wgsl_compute::check::{compare, Gate, Rng};
use wgsl_compute::{ops, scan, Context, Tensor};

use crate::common::contexts;

/// Dimensions drawn for shapes: mostly small, sometimes 0, sometimes past every limit.
fn dim(rng: &mut Rng) -> usize {
    match rng.below(20) {
        0 => 0,
        1 => 1 << 33,
        2 => usize::MAX,
        3 => 65_537,
        4..=7 => 1,
        _ => 1 + rng.below(9),
    }
}

fn shape(rng: &mut Rng, rank: usize) -> Vec<usize> {
    (0..rank).map(|_| dim(rng)).collect()
}

/// Host data for a shape, or None when the shape is too large to hold (then the op is
/// attempted on `Tensor::zeros`, which must fail cleanly).
fn data(rng: &mut Rng, shape: &[usize]) -> Option<Vec<f32>> {
    let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
    (n <= 4096).then(|| rng.vec_range(n, -3.0, 3.0))
}

/// One random input: a description and the op run on a context (the same draws on each).
type Op = Box<dyn Fn(&Context) -> wgsl_compute::Result<Tensor>>;

struct Case {
    what: String,
    run: Op,
}

fn tensor(ctx: &Context, shape: &[usize], data: &Option<Vec<f32>>) -> wgsl_compute::Result<Tensor> {
    match data {
        Some(d) => Tensor::from_slice(ctx, shape, d),
        None => Tensor::zeros(ctx, shape),
    }
}

/// A random view of `t`: a transpose, a narrow (possibly empty, possibly out of range), or
/// a reshape (possibly to a wrong or huge shape).
fn view(t: &Tensor, ops_: &[(u8, usize, usize, usize)]) -> wgsl_compute::Result<Tensor> {
    let mut t = t.clone();
    for &(kind, a, b, c) in ops_ {
        let r = t.rank().max(1);
        t = match kind {
            0 => t.transpose(a % r, b % r)?,
            1 => {
                let axis = a % (r + 1); // sometimes past the rank
                t.narrow(axis, b, c)?
            }
            _ => {
                let n = t.len();
                let target = match a % 4 {
                    0 => vec![n],
                    1 => vec![1, n],
                    2 => vec![b, c],
                    _ => vec![usize::MAX, 2],
                };
                t.reshape(&target)?
            }
        };
    }
    Ok(t)
}

fn case(rng: &mut Rng) -> Case {
    let rank = 1 + rng.below(3);
    let s1 = shape(rng, rank);
    let d1 = data(rng, &s1);
    let r2 = 1 + rng.below(3);
    let s2 = if rng.below(3) == 0 { shape(rng, r2) } else { s1.clone() };
    let d2 = data(rng, &s2);
    let views: Vec<(u8, usize, usize, usize)> = (0..rng.below(3))
        .map(|_| {
            let small = |rng: &mut Rng| {
                if rng.below(8) == 0 {
                    usize::MAX - rng.below(3)
                } else {
                    rng.below(6)
                }
            };
            (rng.below(3) as u8, small(rng), small(rng), small(rng))
        })
        .collect();
    let op = rng.below(14);
    let past = match rng.below(4) {
        0 => usize::MAX - rng.below(4),
        1 => u32::MAX as usize,
        _ => rng.below(4),
    };
    let what = format!("op {op} on {s1:?} / {s2:?} views {views:?} past {past}");
    let run = move |ctx: &Context| -> wgsl_compute::Result<Tensor> {
        let a = view(&tensor(ctx, &s1, &d1)?, &views)?;
        let b = tensor(ctx, &s2, &d2)?;
        match op {
            0 => ops::add(&a, &b),
            1 => ops::mul(&a, &b),
            2 => ops::exp(&a),
            3 => ops::sum_last(&a),
            4 => ops::softmax_last(&a, (past % 2 == 0).then_some(past)),
            5 => ops::matmul(&a, &b.transpose(0, b.rank().saturating_sub(1))?),
            6 => {
                let c = a.shape().last().copied().unwrap_or(0);
                let g = Tensor::full(ctx, &[c], 1.5)?;
                ops::layer_norm(&a, &g, &g, 1e-5)
            }
            7 => ops::gelu(&a),
            8 => ops::argmax_last(&a),
            9 => {
                let dst = Tensor::zeros(ctx, a.shape())?;
                ops::copy_into(&dst, &a)?;
                Ok(dst)
            }
            10 => scan::linear_scan(&a, &b, None),
            11 => ops::attention(&a, &b, &b, past),
            12 => {
                let ids: Vec<u32> = (0..a.shape().first().copied().unwrap_or(0).min(8) as u32).collect();
                ops::embedding(&b, &a, &ids, past)
            }
            _ => a.contiguous(),
        }
    };
    Case {
        what,
        run: Box::new(run),
    }
}

#[derive(Default, Debug)]
struct Counts {
    inputs: usize,
    clean_errors: usize,
    results: usize,
    compared: usize,
    panics: Vec<String>,
    wrong: Vec<String>,
}

fn inputs() -> usize {
    std::env::var("ENGINE_CAMPAIGN_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500)
}

#[test]
fn campaign_random_ops_and_views_never_panic_and_agree_with_the_reference() {
    let cpu = Context::cpu();
    // One GPU adapter: the first Vulkan one (lavapipe in CI), else the first present.
    let list = contexts();
    let gpu = list.iter().find(|c| c.info().backend == "Vulkan").or(list.first());
    let mut rng = Rng::new(0x21);
    let mut c = Counts::default();
    for i in 0..inputs() {
        let k = case(&mut rng);
        c.inputs += 1;
        let on_cpu = catch_unwind(AssertUnwindSafe(|| (k.run)(&cpu).and_then(|t| t.to_vec())));
        let want = match on_cpu {
            Err(_) => {
                c.panics.push(format!("#{i} cpu: {}", k.what));
                continue;
            }
            Ok(Err(_)) => {
                c.clean_errors += 1;
                None
            }
            Ok(Ok(v)) => {
                c.results += 1;
                Some(v)
            }
        };
        // Every third input also runs on the GPU (software adapters are slow).
        let Some(gpu) = gpu.filter(|_| i % 3 == 0) else {
            continue;
        };
        c.inputs += 1;
        match catch_unwind(AssertUnwindSafe(|| (k.run)(gpu).and_then(|t| t.to_vec()))) {
            Err(_) => c.panics.push(format!("#{i} gpu: {}", k.what)),
            Ok(Err(_)) => c.clean_errors += 1,
            Ok(Ok(got)) => {
                c.results += 1;
                if let Some(want) = &want {
                    c.compared += 1;
                    let cmp = compare(&got, want, Gate::new(1e-4, 1e-4));
                    if got.len() != want.len() || !cmp.ok {
                        c.wrong.push(format!("#{i}: {} ({cmp})", k.what));
                    }
                }
            }
        }
    }
    println!(
        "campaign: {} inputs, {} clean errors, {} results ({} compared with the CPU reference, {} wrong), {} panics (GPU: {})",
        c.inputs,
        c.clean_errors,
        c.results,
        c.compared,
        c.wrong.len(),
        c.panics.len(),
        gpu.map_or("none".into(), |g| g.info().name.clone())
    );
    assert!(c.panics.is_empty(), "panics: {:#?}", c.panics);
    assert!(c.wrong.is_empty(), "wrong results: {:#?}", c.wrong);
}
