//! A bounded, seeded randomized campaign over the public tensor API (issue 21, item 2).
//!
//! Random ops on random views of random shapes (0-size and huge dimensions included) run on
//! the CPU context and on every GPU adapter under `catch_unwind`, the same draws on each; the
//! GPU contexts poison fresh outputs with NaN (`common::contexts`), so an unwritten element
//! reads as NaN. Every input must end in a clean `Error` or a result; every GPU result whose
//! case also has a CPU result is compared with it (issue 32, item 4). A quarter of the cases
//! put special values in their inputs (NaN, +-inf, +-f32::MAX); all of them may hold -0.0 and
//! subnormals, which are finite. The comparison follows the special-values section of docs/src/ops.md
//! ([`agree`]): on finite inputs every element must match (NaN-ness, infinities, finite values
//! within the gate); with special values an op is held to what the docs define for it.
//! The public API probes of issue 32 must return an `Err`, not panic ([`campaign_probes`]).
//! The counts are printed (`campaign: ...`) and the test fails on any panic or wrong result.
//! `ENGINE_CAMPAIGN_INPUTS` scales it (default 900, each on the CPU and every GPU: about
//! the time 1,500 took when a third of them ran on one GPU; CI uses the default).

use std::panic::{catch_unwind, AssertUnwindSafe};

use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::{ops, scan, Context, DeviceKind, Tensor};

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
fn data(rng: &mut Rng, shape: &[usize], special: bool) -> Option<Vec<f32>> {
    let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
    let mut v = (n <= 4096).then(|| rng.vec_range(n, -3.0, 3.0))?;
    // Finite oddities in any case; the special classes only where the case asked for them.
    let finite = [-0.0, 0.0, f32::MIN_POSITIVE / 8.0, -f32::MIN_POSITIVE / 3.0, 1e-40];
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, -f32::MAX];
    for _ in 0..rng.below(3).min(n) {
        let at = rng.below(n);
        v[at] = if special && rng.below(2) == 0 {
            specials[rng.below(specials.len())]
        } else {
            finite[rng.below(finite.len())]
        };
    }
    Some(v)
}

/// The special values in a case's inputs, as far as the comparison rule needs them.
#[derive(Clone, Copy, Debug, Default)]
struct Specials {
    /// A NaN or an infinity.
    non_finite: bool,
    /// +-f32::MAX (finite, but past what most ops promise not to overflow on).
    huge: bool,
}

fn specials(d: &[&Option<Vec<f32>>]) -> Specials {
    let all = || d.iter().filter_map(|x| x.as_ref()).flatten();
    Specials {
        non_finite: all().any(|x| !x.is_finite()),
        huge: all().any(|x| x.abs() == f32::MAX),
    }
}

/// What the special-values section of docs/src/ops.md defines for an op (by the campaign's op number).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Defined {
    /// Copies and argmax: every element, special values included, is defined.
    Everything,
    /// NaN in gives NaN out (exp); other special values are not defined.
    NanOut,
    /// No overflow on finite inputs up to f32::MAX (softmax_last, layer_norm, sum_last).
    UpToMax,
    /// Nothing beyond finite inputs of moderate size.
    Finite,
}

fn defined(op: usize) -> Defined {
    match op {
        8 | 9 | 13 => Defined::Everything,
        2 => Defined::NanOut,
        3 | 4 | 6 => Defined::UpToMax,
        _ => Defined::Finite,
    }
}

/// Counts of the elements compared and of those the docs leave open.
#[derive(Default, Debug)]
struct Agreement {
    checked: usize,
    open: usize,
}

/// Whether a GPU result agrees with the CPU context's for the case's inputs: the first element
/// that does not, or None. Where everything the op reads is defined (finite inputs of moderate
/// size, or an op that defines the special values present), every element must match: the
/// same NaN-ness, the same infinity, finite values within the gate. Otherwise a NaN the CPU
/// gives must be NaN on the GPU where the op is `NanOut`, finite pairs are compared only where
/// the inputs hold no f32::MAX (sums of it may round to anything), and the rest is left open.
fn agree(op: usize, s: Specials, got: &[f32], want: &[f32], a: &mut Agreement) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} elements, the CPU gives {}", got.len(), want.len()));
    }
    let d = defined(op);
    let full = match d {
        Defined::Everything => true,
        Defined::UpToMax => !s.non_finite,
        Defined::NanOut | Defined::Finite => !s.non_finite && !s.huge,
    };
    let gate = Gate::new(1e-4, 1e-4);
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let close = |g: f32, w: f32| (f64::from(g) - f64::from(w)).abs() <= gate.atol + gate.rtol * f64::from(w).abs();
        let ok = if full {
            a.checked += 1;
            if w.is_nan() || g.is_nan() {
                w.is_nan() && g.is_nan()
            } else if w.is_infinite() || g.is_infinite() {
                g == w
            } else {
                close(g, w)
            }
        } else if w.is_nan() && d == Defined::NanOut {
            a.checked += 1;
            g.is_nan()
        } else if w.is_finite() && g.is_finite() && !s.huge {
            a.checked += 1;
            close(g, w)
        } else {
            a.open += 1;
            true
        };
        if !ok {
            return Some(format!("element {i}: GPU {g:e}, CPU {w:e}"));
        }
    }
    None
}

/// One random input: a description and the op run on a context (the same draws on each).
type Op = Box<dyn Fn(&Context) -> wgsl_compute::Result<Tensor>>;

struct Case {
    what: String,
    op: usize,
    specials: Specials,
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
    let special = rng.below(4) == 0;
    let d1 = data(rng, &s1, special);
    let r2 = 1 + rng.below(3);
    let s2 = if rng.below(3) == 0 { shape(rng, r2) } else { s1.clone() };
    let d2 = data(rng, &s2, special);
    let found = specials(&[&d1, &d2]);
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
    let what = format!("op {op} on {s1:?} / {s2:?} views {views:?} past {past} specials {found:?}");
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
        op,
        specials: found,
        run: Box::new(run),
    }
}

#[derive(Default, Debug)]
struct Counts {
    inputs: usize,
    special: usize,
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
        .unwrap_or(900)
}

#[test]
fn campaign_random_ops_and_views_never_panic_and_agree_with_the_reference() {
    let cpu = Context::cpu();
    // Every GPU adapter (lavapipe and llvmpipe GL in CI); `contexts` poisons their fresh
    // outputs with NaN.
    let gpus: Vec<&Context> = contexts()
        .iter()
        .filter(|c| c.info().kind != DeviceKind::CpuReference)
        .collect();
    let mut rng = Rng::new(0x21);
    let mut c = Counts::default();
    let mut a = Agreement::default();
    for i in 0..inputs() {
        let k = case(&mut rng);
        c.inputs += 1;
        c.special += usize::from(k.specials.non_finite || k.specials.huge);
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
        for gpu in &gpus {
            let name = &gpu.info().name;
            c.inputs += 1;
            match catch_unwind(AssertUnwindSafe(|| (k.run)(gpu).and_then(|t| t.to_vec()))) {
                Err(_) => c.panics.push(format!("#{i} {name}: {}", k.what)),
                Ok(Err(_)) => c.clean_errors += 1,
                Ok(Ok(got)) => {
                    c.results += 1;
                    if let Some(want) = &want {
                        c.compared += 1;
                        if let Some(why) = agree(k.op, k.specials, &got, want, &mut a) {
                            c.wrong.push(format!("#{i} {name}: {} ({why})", k.what));
                        }
                    }
                }
            }
        }
    }
    println!(
        "campaign: {} inputs ({} cases with special values), {} clean errors, {} results ({} compared with the CPU context: {} elements checked, {} left open by the docs; {} wrong), {} panics (GPUs: {})",
        c.inputs,
        c.special,
        c.clean_errors,
        c.results,
        c.compared,
        a.checked,
        a.open,
        c.wrong.len(),
        c.panics.len(),
        gpus.iter().map(|g| g.info().name.clone()).collect::<Vec<_>>().join(", ")
    );
    assert!(c.panics.is_empty(), "panics: {:#?}", c.panics);
    assert!(c.wrong.is_empty(), "wrong results: {:#?}", c.wrong);
}

/// Runs a probe under `catch_unwind`: Ok(()) when it returned an `Err`, else what it did.
fn probe<T: std::fmt::Debug>(name: &str, f: impl FnOnce() -> wgsl_compute::Result<T>) -> Result<(), String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Err(_) => Err(format!("{name}: panicked")),
        Ok(Ok(v)) => Err(format!("{name}: accepted ({v:?})")),
        Ok(Err(_)) => Ok(()),
    }
}

#[test]
fn campaign_probes_of_the_public_api_return_errors() {
    // Issue 32's unchecked inputs: each must be a clean `Err`, not a panic or a result.
    use ndarray::{ArrayD, IxDyn};
    use wgsl_compute::expr::{Binary, Body, Interp, Ty};
    use wgsl_compute::mixer::{reference as mixer_ref, MixerKind, MixerPath};
    use wgsl_compute::models::gpt2::{self, KvCache};
    use wgsl_compute::models::{CharModel, CharModelConfig};
    use wgsl_compute::reference;
    use wgsl_compute::train::Adam;
    let cpu = Context::cpu();
    let z = |s: &[usize]| ArrayD::<f32>::zeros(IxDyn(s));
    let mut failures = vec![];
    let mut n = 0;
    let mut run = |r: Result<(), String>| {
        n += 1;
        if let Err(e) = r {
            failures.push(e);
        }
    };
    let (x, g4, g3) = (z(&[2, 3]), z(&[4]), z(&[3]));
    run(probe("reference::nn::layer_norm gamma [4] for n 3", || {
        reference::nn::layer_norm(&x.view(), &g4.view(), &g3.view(), 1e-5)
    }));
    run(probe("reference::scan::linear_scan [1,3,2] / [1,4,2]", || {
        reference::scan::linear_scan(&z(&[1, 3, 2]).view(), &z(&[1, 4, 2]).view(), None)
    }));
    run(probe("mixer::reference::scan_f32 Givens k 4 width 6", || {
        mixer_ref::scan_f32(MixerKind::GivensMinGru { k: 4 }, &z(&[1, 2, 6]))
    }));
    let p = Tensor::from_slice(&cpu, &[3], &[1.0, 2.0, 3.0]).unwrap();
    run(probe("Adam::new lr NaN", || Adam::new(&[&p], f32::NAN).map(|_| ())));
    let config = CharModelConfig {
        kind: MixerKind::SignedMinGru,
        path: MixerPath::Auto,
        vocab: 5,
        layers: 1,
        d_model: 4,
        d_state: 4,
    };
    let model = CharModel::init(&cpu, config, 1).unwrap();
    for t in [f32::NAN, 0.0, -1.0] {
        run(probe(&format!("CharModel::sample temperature {t}"), || {
            model.sample(&[1, 2], 3, 4, t, &mut Rng::new(1), |_| {})
        }));
    }
    let mut cfg = gpt2::tiny_random_checkpoint(gpt2::TINY_SEED).0;
    cfg.n_embd = 10;
    cfg.n_head = 3;
    run(probe("KvCache::new n_embd 10 n_head 3", || {
        KvCache::new(&cpu, &cfg).map(|_| ())
    }));
    let mut b = Body::builder(&[Ty::F32, Ty::F32]);
    let (px, py) = (b.param(0), b.param(1));
    let sum = b.binary(Binary::Add, px, py).unwrap();
    let body = b.finish(sum).unwrap();
    let mut interp = Interp::new(&body);
    run(probe("expr::Interp::call 1 slice for 2 parameters", || {
        interp.call(&[&[1.0]]).map(|v| v.to_vec())
    }));
    run(probe("expr::Interp::call no slices", || {
        interp.call(&[]).map(|v| v.to_vec())
    }));
    let v3 = Ty::vector(3);
    let mut b = Body::builder(&[v3, v3]);
    let (px, py) = (b.param(0), b.param(1));
    let prod = b.binary(Binary::Mul, px, py).unwrap();
    let body = b.finish(prod).unwrap();
    let mut interp = Interp::new(&body);
    run(probe("expr::Interp::call empty vector parameter", || {
        interp.call(&[&[], &[1.0, 2.0, 3.0]]).map(|v| v.to_vec())
    }));
    println!("campaign: probes: {n} probes, {} not a clean error", failures.len());
    assert!(failures.is_empty(), "{failures:#?}");
}
