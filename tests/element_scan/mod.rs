//! Element scans, one file per concern: `forward` (the spec's example programs and other programs on
//! every adapter against the f64 interpreter, `:reverse` against flipping, any trip axis),
//! `builder` (the Rust builder front end and random bodies), `grad` (gradients against finite
//! differences and between adapters), `sexpr` (the parser: fuzz and every error code),
//! `kernels` (the IR dump, the kernel cache, generated WGSL through naga's other backends) and
//! `limits` (storage-buffer and loop limits). Shared here: the spec's programs and their
//! bindings, and the GPU-against-interpreter check.

mod builder;
mod forward;
mod grad;
mod kernels;
mod limits;
mod sexpr;

use ndarray::{ArrayD, Axis, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::element_scan::spec_programs::{MAX_PLUS_REVERSE_SCAN, NORM_CAPPED_SCAN, TANH_SCAN};
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::Context;

use crate::common::assert_close;

/// GPU against the interpreter, forward and gradients (the gate).
const GATE: Gate = Gate::new(1e-5, 1e-5);

fn random(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> ArrayD<f32> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, lo, hi)).unwrap()
}

fn flat(a: &ArrayD<f32>) -> Vec<f32> {
    a.iter().copied().collect()
}

/// Inputs of [`TANH_SCAN`]: x (batch, time, width), decay (time, width), initial (batch, width).
fn tanh_scan_bindings(rng: &mut Rng, b: usize, t: usize, w: usize) -> Bindings {
    Bindings::new()
        .tensor("x", random(rng, &[b, t, w], -1.0, 1.0))
        .tensor("decay", random(rng, &[t, w], 0.2, 1.0))
        .tensor("initial", random(rng, &[b, w], -1.0, 1.0))
        .number("time", t as f64)
}

/// Inputs of [`NORM_CAPPED_SCAN`]: x (batch, time, heads, 16), decay (time, heads, 1).
fn norm_capped_scan_bindings(rng: &mut Rng, b: usize, t: usize, h: usize) -> Bindings {
    Bindings::new()
        .tensor("x", random(rng, &[b, t, h, 16], -0.6, 0.6))
        .tensor("decay", random(rng, &[t, h, 1], 0.3, 1.2))
        .number("batch", b as f64)
        .number("time", t as f64)
        .number("heads", h as f64)
}

/// Inputs of [`MAX_PLUS_REVERSE_SCAN`]: x, cost (batch, time, width), initial (batch, width).
fn max_plus_reverse_scan_bindings(rng: &mut Rng, b: usize, t: usize, w: usize) -> Bindings {
    Bindings::new()
        .tensor("x", random(rng, &[b, t, w], -2.0, 2.0))
        .tensor("cost", random(rng, &[b, t, w], 0.0, 0.5))
        .tensor("initial", random(rng, &[b, w], -2.0, 2.0))
        .number("time", t as f64)
}

fn cpu() -> Context {
    Context::cpu()
}

/// Forward and every gradient on `ctx` against the interpreter (CPU context).
fn check_against_interpreter(ctx: &Context, case: &str, scan: &ElementScan, rng: &mut Rng) {
    let want = scan.run(&cpu()).unwrap();
    let got = scan.run(ctx).unwrap();
    assert_eq!(got.shape(), scan.shape());
    assert_close(
        ctx,
        &format!("{case} forward"),
        &got.to_vec().unwrap(),
        &want.to_vec().unwrap(),
        GATE,
    );
    let seed = random(rng, scan.shape(), -1.0, 1.0);
    let want = scan.grad(&cpu(), &seed).unwrap();
    let got = scan.grad(ctx, &seed).unwrap();
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
    for (name, w) in &want {
        let g = &got[name];
        assert_eq!(g.shape(), w.shape(), "{case} d/d{name}");
        assert_close(
            ctx,
            &format!("{case} d/d{name}"),
            &g.to_vec().unwrap(),
            &w.to_vec().unwrap(),
            GATE,
        );
    }
}

/// Replaces input `name` of `bindings` by `f(array)`.
fn perturb(bindings: &Bindings, name: &str, f: impl Fn(&mut ArrayD<f32>)) -> Bindings {
    let mut out = Bindings::new();
    for (n, b) in bindings_items(bindings) {
        out = match b {
            wgsl_compute::element_scan::Bound::Tensor(mut a) => {
                if n == name {
                    f(&mut a);
                }
                out.tensor(&n, a)
            }
            wgsl_compute::element_scan::Bound::Number(v) => out.number(&n, v),
            other => panic!("unexpected binding {other:?}"),
        };
    }
    out
}

fn bindings_items(b: &Bindings) -> Vec<(String, wgsl_compute::element_scan::Bound)> {
    b.items().to_vec()
}

/// Reverses axis 1 of an array.
fn flip1(a: &ArrayD<f32>) -> ArrayD<f32> {
    let mut v = a.view();
    v.invert_axis(Axis(1));
    v.to_owned()
}
