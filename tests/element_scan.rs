//! Element scans: the seed's three examples from their text, forward and gradients, GPU
//! against the f64 interpreter, the interpreter against finite differences, `:reverse`
//! against flipping, random bodies, a parser fuzz, and every error code.

use std::collections::BTreeMap;

use ndarray::{ArrayD, Axis, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::element_scan::{Binary, Bindings, Body, ElementScan, Reduce, ScanOptions, Ty, Unary};
use wgsl_compute::{Context, Error};

use crate::common::{assert_close, each_adapter};

/// GPU against the interpreter, forward and gradients (the gate).
const GATE: Gate = Gate::new(1e-5, 1e-5);

fn random(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> ArrayD<f32> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, lo, hi)).unwrap()
}

fn flat(a: &ArrayD<f32>) -> Vec<f32> {
    a.iter().copied().collect()
}

const SEED1: &str = "(element-scan (lambda (h x a) (tanh (+ x (* a h))))
              initial
              (list x (broadcast-to decay (shape x)))
              :axis 1)";

const SEED2: &str = "(element-scan (lambda (h x a)
                (let ((y (+ (* a h) x)))
                  (/ y (maximum 1.0 (sqrt (sum (* y y) :axes [-1]))))))
              (zeros [batch heads 16])
              (list x (broadcast-to decay [batch time heads 1]))
              :axis 1
              :state-axis -1)";

const SEED3: &str = "(element-scan (lambda (h x c) (maximum (- h c) x))
              initial
              (list x cost)
              :axis 1
              :reverse true)";

/// Seed example 1: x (batch, time, width), decay (time, width), initial (batch, width).
fn seed1_bindings(rng: &mut Rng, b: usize, t: usize, w: usize) -> Bindings {
    Bindings::new()
        .tensor("x", random(rng, &[b, t, w], -1.0, 1.0))
        .tensor("decay", random(rng, &[t, w], 0.2, 1.0))
        .tensor("initial", random(rng, &[b, w], -1.0, 1.0))
        .number("time", t as f64)
}

/// Seed example 2: x (batch, time, heads, 16), decay (time, heads, 1).
fn seed2_bindings(rng: &mut Rng, b: usize, t: usize, h: usize) -> Bindings {
    Bindings::new()
        .tensor("x", random(rng, &[b, t, h, 16], -0.6, 0.6))
        .tensor("decay", random(rng, &[t, h, 1], 0.3, 1.2))
        .number("batch", b as f64)
        .number("time", t as f64)
        .number("heads", h as f64)
}

/// Seed example 3: x, cost (batch, time, width), initial (batch, width).
fn seed3_bindings(rng: &mut Rng, b: usize, t: usize, w: usize) -> Bindings {
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

#[test]
fn element_scan_seed_examples_match_the_interpreter() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(501);
        // Lanes 1, 63, 64, 65 and more than two workgroups; trips 1 and longer.
        for (b, t, w) in [(1, 1, 1), (1, 5, 63), (2, 3, 32), (5, 2, 13), (2, 40, 70)] {
            let scan = ElementScan::from_sexpr(SEED1, &seed1_bindings(&mut rng, b, t, w)).unwrap();
            assert_eq!(scan.shape(), &[b, t, w]);
            check_against_interpreter(ctx, &format!("seed 1 {:?}", [b, t, w]), &scan, &mut rng);
        }
        for (b, t, h) in [(1, 1, 1), (2, 6, 3), (3, 17, 5)] {
            let scan = ElementScan::from_sexpr(SEED2, &seed2_bindings(&mut rng, b, t, h)).unwrap();
            assert_eq!(scan.shape(), &[b, t, h, 16]);
            check_against_interpreter(ctx, &format!("seed 2 {:?}", [b, t, h]), &scan, &mut rng);
        }
        for (b, t, w) in [(1, 1, 1), (3, 9, 65), (2, 33, 7)] {
            let scan = ElementScan::from_sexpr(SEED3, &seed3_bindings(&mut rng, b, t, w)).unwrap();
            check_against_interpreter(ctx, &format!("seed 3 {:?}", [b, t, w]), &scan, &mut rng);
        }
    });
}

#[test]
fn element_scan_final_state_slices_keep_the_axis() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(502);
        let (b, t, w) = (2, 6, 5);
        let fwd = format!("(let ((states {SEED1})) (slice states 1 (- time 1) time))");
        let bind = seed1_bindings(&mut rng, b, t, w);
        let last = ElementScan::from_sexpr(&fwd, &bind).unwrap();
        assert_eq!(last.shape(), &[b, 1, w]);
        let all = ElementScan::from_sexpr(SEED1, &bind)
            .unwrap()
            .run(ctx)
            .unwrap()
            .to_array()
            .unwrap();
        let want: Vec<f32> = all.index_axis(Axis(1), t - 1).iter().copied().collect();
        assert_close(
            ctx,
            "seed 1 final state",
            &last.run(ctx).unwrap().to_vec().unwrap(),
            &want,
            GATE,
        );
        check_against_interpreter(ctx, "seed 1 final state", &last, &mut rng);

        let rev = format!("(let ((states {SEED3})) (slice states 1 0 1))");
        let bind = seed3_bindings(&mut rng, b, t, w);
        let first = ElementScan::from_sexpr(&rev, &bind).unwrap();
        let all = ElementScan::from_sexpr(SEED3, &bind)
            .unwrap()
            .run(ctx)
            .unwrap()
            .to_array()
            .unwrap();
        let want: Vec<f32> = all.index_axis(Axis(1), 0).iter().copied().collect();
        assert_close(
            ctx,
            "seed 3 final state",
            &first.run(ctx).unwrap().to_vec().unwrap(),
            &want,
            GATE,
        );
        check_against_interpreter(ctx, "seed 3 final state", &first, &mut rng);
    });
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

/// `sum(seed * program(bindings))` in f64 on the interpreter.
fn loss(text: &str, bindings: &Bindings, seed: &ArrayD<f32>) -> f64 {
    let out = ElementScan::from_sexpr(text, bindings)
        .unwrap()
        .run(&cpu())
        .unwrap()
        .to_vec()
        .unwrap();
    out.iter().zip(seed.iter()).map(|(o, s)| *o as f64 * *s as f64).sum()
}

/// Central differences of the loss at a few random coordinates of every input.
fn check_finite_differences(case: &str, text: &str, bindings: &Bindings, rng: &mut Rng, eps: f32) {
    let scan = ElementScan::from_sexpr(text, bindings).unwrap();
    let seed = random(rng, scan.shape(), -1.0, 1.0);
    let grads = scan.grad(&cpu(), &seed).unwrap();
    for (name, g) in &grads {
        let g = g.to_vec().unwrap();
        for _ in 0..4 {
            let i = rng.below(g.len());
            let plus = perturb(bindings, name, |a| a.as_slice_mut().unwrap()[i] += eps);
            let minus = perturb(bindings, name, |a| a.as_slice_mut().unwrap()[i] -= eps);
            let fd = (loss(text, &plus, &seed) - loss(text, &minus, &seed)) / (2.0 * eps as f64);
            let err = (fd - g[i] as f64).abs();
            assert!(
                err <= 2e-3 + 1e-2 * fd.abs(),
                "{case}: d/d{name}[{i}] = {} by the interpreter, {fd} by finite differences",
                g[i]
            );
        }
    }
}

#[test]
fn element_scan_interpreter_gradients_match_finite_differences() {
    let mut rng = Rng::new(503);
    check_finite_differences("seed 1", SEED1, &seed1_bindings(&mut rng, 2, 7, 3), &mut rng, 1e-2);
    check_finite_differences("seed 2", SEED2, &seed2_bindings(&mut rng, 2, 5, 2), &mut rng, 1e-2);
    // Max-plus is piecewise linear: small steps stay on one piece.
    check_finite_differences("seed 3", SEED3, &seed3_bindings(&mut rng, 2, 6, 3), &mut rng, 1e-3);
}

#[test]
fn element_scan_second_gradient_matches_finite_differences() {
    let mut rng = Rng::new(504);
    let bind = seed1_bindings(&mut rng, 2, 5, 3);
    let shape = [2usize, 5, 3];
    let seed1 = random(&mut rng, &shape, -1.0, 1.0);
    let seed2 = random(&mut rng, &shape, -1.0, 1.0);
    // g(x, decay, initial) = d<seed1, scan>/dx; second order: d<seed2, g>/d(decay, initial, x).
    let first = |b: &Bindings| {
        ElementScan::from_sexpr(SEED1, b)
            .unwrap()
            .grad_program("x", &seed1)
            .unwrap()
    };
    let program = first(&bind);
    assert_eq!(program.shape(), &shape);
    let second = program.grad(&cpu(), &seed2).unwrap();
    let eps = 1e-2f32;
    for name in ["decay", "initial", "x"] {
        let g = second[name].to_vec().unwrap();
        for _ in 0..3 {
            let i = rng.below(g.len());
            let l = |b: &Bindings| -> f64 {
                let out = first(b).run(&cpu()).unwrap().to_vec().unwrap();
                out.iter().zip(seed2.iter()).map(|(o, s)| *o as f64 * *s as f64).sum()
            };
            let plus = perturb(&bind, name, |a| a.as_slice_mut().unwrap()[i] += eps);
            let minus = perturb(&bind, name, |a| a.as_slice_mut().unwrap()[i] -= eps);
            let fd = (l(&plus) - l(&minus)) / (2.0 * eps as f64);
            let err = (fd - g[i] as f64).abs();
            assert!(
                err <= 2e-3 + 1e-2 * fd.abs(),
                "second order d/d{name}[{i}]: {} vs {fd}",
                g[i]
            );
        }
    }
    // And the second-order program runs on the GPU like on the interpreter.
    each_adapter(|ctx| {
        let want = program.grad(&cpu(), &seed2).unwrap();
        let got = program.grad(ctx, &seed2).unwrap();
        for (name, w) in &want {
            assert_close(
                ctx,
                &format!("second order d/d{name}"),
                &got[name].to_vec().unwrap(),
                &w.to_vec().unwrap(),
                Gate::new(1e-4, 1e-4),
            );
        }
    });
}

/// Reverses axis 1 of an array.
fn flip1(a: &ArrayD<f32>) -> ArrayD<f32> {
    let mut v = a.view();
    v.invert_axis(Axis(1));
    v.to_owned()
}

#[test]
fn element_scan_reverse_equals_flip_scan_flip() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(505);
        for (b, t, w) in [(1, 1, 3), (2, 9, 5), (3, 31, 66)] {
            let x = random(&mut rng, &[b, t, w], -2.0, 2.0);
            let cost = random(&mut rng, &[b, t, w], 0.0, 0.5);
            let init = random(&mut rng, &[b, w], -2.0, 2.0);
            let bind = |x: &ArrayD<f32>, c: &ArrayD<f32>| {
                Bindings::new()
                    .tensor("x", x.clone())
                    .tensor("cost", c.clone())
                    .tensor("initial", init.clone())
            };
            let rev = ElementScan::from_sexpr(SEED3, &bind(&x, &cost))
                .unwrap()
                .run(ctx)
                .unwrap()
                .to_array()
                .unwrap();
            let fwd_text = SEED3.replace(":reverse true", ":reverse false");
            let fwd = ElementScan::from_sexpr(&fwd_text, &bind(&flip1(&x), &flip1(&cost))).unwrap();
            let want = flip1(&fwd.run(ctx).unwrap().to_array().unwrap());
            assert_close(
                ctx,
                &format!("reverse {:?}", [b, t, w]),
                &flat(&rev),
                &flat(&want),
                Gate::new(0.0, 0.0),
            );
            // Also for a smooth body with a vector state, against the interpreter.
            let _ = ctx;
        }
        let text = SEED2.replace(":state-axis -1", ":state-axis -1 :reverse true");
        let bind = seed2_bindings(&mut rng, 2, 7, 3);
        let scan = ElementScan::from_sexpr(&text, &bind).unwrap();
        check_against_interpreter(ctx, "seed 2 reversed", &scan, &mut rng);
        let x = match &bind.items()[0].1 {
            wgsl_compute::element_scan::Bound::Tensor(a) => a.clone(),
            _ => unreachable!(),
        };
        let flipped = perturb(&bind, "x", |a| *a = flip1(&x));
        let flipped = perturb(&flipped, "decay", |a| {
            let mut v = a.view_mut();
            v.invert_axis(Axis(0));
            *a = v.to_owned();
        });
        let want = flip1(
            &ElementScan::from_sexpr(SEED2, &flipped)
                .unwrap()
                .run(ctx)
                .unwrap()
                .to_array()
                .unwrap(),
        );
        let got = scan.run(ctx).unwrap().to_vec().unwrap();
        assert_close(ctx, "seed 2 reverse vs flip", &got, &flat(&want), Gate::new(1e-6, 1e-6));
    });
}

#[test]
fn element_scan_any_axis_and_broadcast_sequences() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(506);
        let body = "(lambda (h x a) (+ (* (sigmoid a) h) (* (- 1.0 (sigmoid a)) (sin x))))";
        // Trip axis 0, 2 and -1; a gate broadcast over lanes.
        for (shape, axis, gate_shape) in [
            (vec![9, 4, 3], 0i64, vec![9, 1, 1]),
            (vec![2, 3, 11], 2, vec![1, 3, 11]),
            (vec![5, 70], -1, vec![70]),
            (vec![13], 0, vec![13]),
        ] {
            let r = shape.len();
            let ax = if axis < 0 {
                (axis + r as i64) as usize
            } else {
                axis as usize
            };
            let mut init_shape = shape.clone();
            init_shape.remove(ax);
            let bind = Bindings::new()
                .tensor("x", random(&mut rng, &shape, -2.0, 2.0))
                .tensor("g", random(&mut rng, &gate_shape, -2.0, 2.0))
                .tensor("initial", random(&mut rng, &init_shape, -1.0, 1.0));
            let text = format!("(element-scan {body} initial (list x (broadcast-to g (shape x))) :axis {axis})");
            let scan = ElementScan::from_sexpr(&text, &bind).unwrap();
            check_against_interpreter(ctx, &format!("axis {axis} of {shape:?}"), &scan, &mut rng);
        }
    });
}

#[test]
fn element_scan_builder_body_matches_the_text() {
    let mut b = Body::builder(&[Ty::F32, Ty::F32, Ty::F32]);
    let (h, x, a) = (b.param(0), b.param(1), b.param(2));
    let ah = b.binary(Binary::Mul, a, h).unwrap();
    let s = b.binary(Binary::Add, x, ah).unwrap();
    let y = b.unary(Unary::Tanh, s).unwrap();
    let body = b.finish(y).unwrap();
    let mut rng = Rng::new(507);
    let (x, d, i) = (
        random(&mut rng, &[3, 6, 4], -1.0, 1.0),
        random(&mut rng, &[3, 6, 4], 0.0, 1.0),
        random(&mut rng, &[3, 4], -1.0, 1.0),
    );
    let opts = ScanOptions {
        axis: 1,
        ..Default::default()
    };
    let built = ElementScan::from_body(body, opts, i.clone(), vec![x.clone(), d.clone()]).unwrap();
    let text = ElementScan::from_sexpr(
        "(element-scan (lambda (h x a) (tanh (+ x (* a h)))) initial (list x decay) :axis 1)",
        &Bindings::new().tensor("x", x).tensor("decay", d).tensor("initial", i),
    )
    .unwrap();
    assert!(built.ir().contains("tanh"), "{}", built.ir());
    each_adapter(|ctx| {
        let a = built.run(ctx).unwrap().to_vec().unwrap();
        let b = text.run(ctx).unwrap().to_vec().unwrap();
        assert_close(ctx, "builder vs text", &a, &b, Gate::new(0.0, 0.0));
        let seed = ArrayD::from_elem(IxDyn(&[3, 6, 4]), 1.0f32);
        let ga = built.grad(ctx, &seed).unwrap();
        let gb = text.grad(ctx, &seed).unwrap();
        assert_close(
            ctx,
            "builder grad",
            &ga["x2"].to_vec().unwrap(),
            &gb["decay"].to_vec().unwrap(),
            Gate::new(0.0, 0.0),
        );
    });
    // Builder type errors are errors, not panics.
    let mut b = Body::builder(&[Ty::F32, Ty::vector(4), Ty::vector(3)]);
    let (x, y) = (b.param(1), b.param(2));
    assert!(matches!(
        b.binary(Binary::Add, x, y),
        Err(Error::Syntax { code: "E-TYPE-001", .. })
    ));
    let h = b.param(0);
    assert!(matches!(
        b.reduce(Reduce::Sum, h, false),
        Err(Error::Syntax { code: "E-SCAN-008", .. })
    ));
}

#[test]
fn element_scan_ir_lists_the_body_under_an_element_scan_node() {
    let mut rng = Rng::new(508);
    let scan = ElementScan::from_sexpr(SEED2, &seed2_bindings(&mut rng, 1, 2, 1)).unwrap();
    let ir = scan.ir();
    let at = ir.find("element_scan(").expect("an element_scan node");
    let body = &ir[at..];
    for op in ["state", "mul", "add", "sum", "sqrt", "max", "div", "f32[16]"] {
        assert!(body.contains(op), "{op} missing from\n{ir}");
    }
    // The kernel's WGSL validates (naga) and is shared by equal bodies.
    for w in scan.wgsl() {
        wgsl_compute::kernel::check_wgsl(&cpu(), "element_scan", &w).unwrap();
    }
}

/// A random well-typed body: tanh of a random expression, so states stay bounded.
fn random_body(rng: &mut Rng, params: &[Ty]) -> Body {
    let mut b = Body::builder(params);
    let mut pool: Vec<_> = (0..params.len()).map(|i| b.param(i)).collect();
    let vector = params[0].width > 0;
    for _ in 0..(3 + rng.below(10)) {
        let pick = |rng: &mut Rng, pool: &Vec<_>| pool[rng.below(pool.len())];
        let (x, y) = (pick(rng, &pool), pick(rng, &pool));
        let c = b.constant(rng.range(-1.5, 1.5) as f32);
        let one = b.constant(1.0);
        let id = match rng.below(14) {
            0 => b.binary(Binary::Add, x, y),
            1 => b.binary(Binary::Sub, x, c),
            2 => b.binary(Binary::Mul, x, y),
            3 => b.unary(Unary::Tanh, x),
            4 => b.unary(Unary::Sigmoid, x),
            5 => b.unary(Unary::Sin, x),
            6 => b.binary(Binary::Max, x, y),
            7 => b.binary(Binary::Min, x, c),
            8 => {
                let ax = b.unary(Unary::Abs, y).unwrap();
                let d = b.binary(Binary::Add, one, ax).unwrap();
                b.binary(Binary::Div, x, d)
            }
            9 => {
                let cond = b.binary(Binary::Lt, x, y).unwrap();
                let n = b.unary(Unary::Neg, y).unwrap();
                b.select(cond, x, n)
            }
            10 => {
                let cond = b.binary(Binary::Gt, x, c).unwrap();
                let f = b.unary(Unary::ToF32, cond).unwrap();
                b.binary(Binary::Mul, f, y)
            }
            11 if vector => {
                let r = b
                    .reduce(if rng.below(2) == 0 { Reduce::Sum } else { Reduce::Max }, x, true)
                    .unwrap();
                let t = b.unary(Unary::Tanh, r).unwrap();
                b.binary(Binary::Mul, t, y)
            }
            12 => {
                let ax = b.unary(Unary::Abs, x).unwrap();
                let l = b.binary(Binary::Add, one, ax).unwrap();
                b.unary(Unary::Log, l)
            }
            _ => b.unary(Unary::Cos, x),
        };
        pool.push(id.unwrap());
    }
    let last = *pool.last().unwrap();
    let h = b.param(0);
    let mixed = b.binary(Binary::Add, last, h).unwrap();
    let r = b.unary(Unary::Tanh, mixed).unwrap();
    let r = b.splat(r, params[0].width).unwrap();
    b.finish(r).unwrap()
}

#[test]
fn element_scan_random_bodies_gpu_matches_interpreter() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(509);
        for case in 0..12 {
            let vector = case % 2 == 1;
            let nseq = 1 + rng.below(3);
            let (lanes_a, lanes_b, t) = (1 + rng.below(4), 1 + rng.below(20), 1 + rng.below(12));
            let n = if vector { 1 + rng.below(16) } else { 0 };
            let mut params = vec![if vector { Ty::vector(n as u8) } else { Ty::F32 }];
            let mut seqs = vec![];
            for _ in 0..nseq {
                let w = if vector && rng.below(3) == 0 { 1 } else { n };
                params.push(if vector { Ty::vector(w as u8) } else { Ty::F32 });
                let shape = if vector {
                    vec![lanes_a, t, lanes_b, w]
                } else {
                    vec![lanes_a, t, lanes_b]
                };
                seqs.push(random(&mut rng, &shape, -1.5, 1.5));
            }
            let init_shape = if vector {
                vec![lanes_a, lanes_b, n]
            } else {
                vec![lanes_a, lanes_b]
            };
            let init = random(&mut rng, &init_shape, -1.0, 1.0);
            let body = random_body(&mut rng, &params);
            let opts = ScanOptions {
                axis: 1,
                vector_state: vector,
                reverse: rng.below(2) == 0,
            };
            let scan = ElementScan::from_body(body.clone(), opts, init, seqs).unwrap();
            let want = scan.run(&cpu()).unwrap().to_vec().unwrap();
            let got = scan.run(ctx).unwrap().to_vec().unwrap();
            assert_close(
                ctx,
                &format!("random body {case}:\n{body}\n"),
                &got,
                &want,
                Gate::new(1e-4, 1e-4),
            );
            let seed = random(&mut rng, scan.shape(), -1.0, 1.0);
            let gw = scan.grad(&cpu(), &seed).unwrap();
            let gg = scan.grad(ctx, &seed).unwrap();
            for (name, w) in &gw {
                assert_close(
                    ctx,
                    &format!("random body {case} d/d{name}:\n{body}\n"),
                    &gg[name].to_vec().unwrap(),
                    &w.to_vec().unwrap(),
                    Gate::new(1e-4, 1e-4),
                );
            }
        }
    });
}

/// Parses `text` with the seed-1 bindings; any error must carry a position.
fn parse_never_panics(text: &str, bind: &Bindings) {
    match ElementScan::from_sexpr(text, bind) {
        Ok(_) => {}
        Err(Error::Syntax { position, code, .. }) => {
            assert!(
                position.contains(':') && position.contains("byte"),
                "{code}: no position in {position:?} for {text:?}"
            );
        }
        Err(e) => panic!("non-syntax error {e} for {text:?}"),
    }
}

#[test]
fn element_scan_parser_fuzz_never_panics_and_errors_have_positions() {
    let mut rng = Rng::new(510);
    let bind = seed1_bindings(&mut rng, 2, 3, 4);
    let pieces = [
        "(",
        ")",
        "[",
        "]",
        " ",
        "element-scan",
        "lambda",
        "let",
        "list",
        "x",
        "h",
        "a",
        "initial",
        "decay",
        ":axis",
        "1",
        "-1",
        "1.5e3",
        "(tanh",
        "(+",
        "(sum",
        ":axes",
        "[-1]",
        ":keepdims",
        "true",
        "\n",
        ";c\n",
        "\"",
        ":",
        "shape",
        "broadcast-to",
        "zeros",
        "slice",
        "-",
        "1e999",
        "#",
        "é",
        "(where (< h x) h x)",
    ];
    for _ in 0..1500 {
        let n = rng.below(30);
        let text: String = (0..n)
            .map(|_| pieces[rng.below(pieces.len())])
            .collect::<Vec<_>>()
            .join(" ");
        parse_never_panics(&text, &bind);
    }
    for base in [SEED1, SEED2, SEED3] {
        let chars: Vec<char> = base.chars().collect();
        for _ in 0..400 {
            let mut c = chars.clone();
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(c.len());
                match rng.below(3) {
                    0 => {
                        c.remove(i);
                    }
                    1 => c.insert(i, ['(', ')', '[', ']', ' ', ':', '1', 'x', '-'][rng.below(9)]),
                    _ => {
                        let j = rng.below(c.len());
                        c.swap(i, j)
                    }
                }
            }
            parse_never_panics(&c.into_iter().collect::<String>(), &bind);
        }
    }
    // Deep nesting is an error, not a stack overflow.
    let deep = "(".repeat(100_000);
    assert!(matches!(
        ElementScan::from_sexpr(&deep, &bind),
        Err(Error::Syntax { code: "E-READ-001", .. })
    ));
}

/// The error `text` gives with `bind`: its code and position, checked against `at`, the text
/// of the offending form (its first occurrence).
#[track_caller]
fn expect_error(text: &str, bind: &Bindings, code: &str, at: &str, says: &str) {
    let e = ElementScan::from_sexpr(text, bind)
        .err()
        .unwrap_or_else(|| panic!("{code}: no error for {text}"));
    let msg = e.to_string();
    let Error::Syntax {
        code: got,
        position,
        message,
    } = e
    else {
        panic!("{code}: not a syntax error: {msg}")
    };
    assert_eq!(got, code, "{msg}");
    let byte = text.find(at).unwrap_or_else(|| panic!("`{at}` not in text"));
    let line = 1 + text[..byte].matches('\n').count();
    let col = 1 + byte - text[..byte].rfind('\n').map(|i| i + 1).unwrap_or(0);
    assert_eq!(position, format!("{line}:{col} (byte {byte})"), "{code}: {msg}");
    assert!(
        message.contains(says),
        "{code}: message {message:?} should name `{says}`"
    );
}

#[test]
fn element_scan_errors_carry_the_seed_codes_and_positions() {
    let mut rng = Rng::new(511);
    let bind = seed1_bindings(&mut rng, 2, 3, 4)
        .parameter("w", random(&mut rng, &[4], -1.0, 1.0))
        .context_scalar("lr", 0.1);
    let scan = |body: &str| {
        format!("(element-scan (lambda (h x a) {body})\n  initial (list x (broadcast-to decay (shape x))) :axis 1)")
    };
    expect_error(&scan("(+ h (* x decay))"), &bind, "E-FLOW-002", "decay))", "decay");
    expect_error(&scan("(* w h)"), &bind, "E-SCAN-001", "w h", "w");
    expect_error(&scan("(* lr h)"), &bind, "E-SCAN-001", "lr h", "lr");
    expect_error(&scan("(matmul h x)"), &bind, "E-SCAN-002", "(matmul", "matmul");
    expect_error(&scan("(+ h (index x 0))"), &bind, "E-SCAN-003", "(index", "index");
    expect_error(
        &scan("(element-scan (lambda (g y) y) h (list x) :axis 0)"),
        &bind,
        "E-SCAN-004",
        "(element-scan (lambda (g",
        "element-scan",
    );
    expect_error(
        &scan("(stop-gradient h)"),
        &bind,
        "E-SCAN-005",
        "(stop-gradient",
        "stop-gradient",
    );
    expect_error(
        &scan("(+ h (random-normal))"),
        &bind,
        "E-SCAN-006",
        "(random-normal",
        "random-normal",
    );
    expect_error(&scan("(metric h)"), &bind, "E-SCAN-007", "(metric", "metric");
    expect_error(&scan("(+ h (sum x :axes [-1]))"), &bind, "E-SCAN-008", "(sum", "sum");
    expect_error(
        &scan("(with-numerics :precision :bf16 (tanh h))"),
        &bind,
        "E-SCAN-011",
        "(with-numerics",
        "bf16",
    );
    // A 17-value vector state; a sequence 17 wide.
    let bind2 = seed2_bindings(&mut rng, 2, 3, 2);
    let wide = SEED2.replace("(zeros [batch heads 16])", "(zeros [batch heads 17])");
    expect_error(&wide, &bind2, "E-SCAN-009", "(element-scan", "17");
    let bind17 = Bindings::new()
        .tensor("x", random(&mut rng, &[2, 3, 2, 17], -1.0, 1.0))
        .tensor("decay", random(&mut rng, &[3, 2, 1], 0.0, 1.0))
        .number("batch", 2.0)
        .number("time", 3.0)
        .number("heads", 2.0);
    expect_error(SEED2, &bind17, "E-SCAN-009", "(element-scan", "17");
    // The initial state does not fit the sequences.
    let bad = seed1_bindings(&mut rng, 2, 3, 4).tensor("initial", random(&mut rng, &[2, 5], 0.0, 1.0));
    expect_error(SEED1, &bad, "E-SCAN-010", "(element-scan", "[2, 5]");
    // Reader and name errors point at the offending character or symbol.
    expect_error(
        "(element-scan (lambda (h x a) h)",
        &bind,
        "E-READ-001",
        "(element-scan",
        "never closed",
    );
    expect_error(&scan("(+ h y)"), &bind, "E-NAME-001", "y)", "y");
    expect_error(&scan("(tanh h x)"), &bind, "E-FORM-001", "(tanh", "tanh");
    let unknown_keyword = scan("h").replace(":axis 1)", ":axis 1\n  :bogus 2)");
    expect_error(&unknown_keyword, &bind, "E-FORM-001", ":bogus", "bogus");
    // Around the scan, a bf16 region is fine: the recurrence still computes in f32.
    let region = format!("(with-numerics :precision :bf16 {SEED1})");
    let (a, b) = (
        ElementScan::from_sexpr(&region, &bind)
            .unwrap()
            .run(&cpu())
            .unwrap()
            .to_vec()
            .unwrap(),
        ElementScan::from_sexpr(SEED1, &bind)
            .unwrap()
            .run(&cpu())
            .unwrap()
            .to_vec()
            .unwrap(),
    );
    assert_eq!(a, b);
    // Captured numbers and functions are fine.
    let ok = "(let ((k 0.5) (f (lambda (u v) (* k (+ u v)))))
                (element-scan (lambda (h x a) (f h (* a x))) initial (list x (broadcast-to decay (shape x))) :axis 1))";
    assert!(ElementScan::from_sexpr(ok, &bind).is_ok());
}

#[test]
fn element_scan_captured_functions_inline() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(512);
        let bind = seed1_bindings(&mut rng, 3, 8, 5);
        let text = "(let ((k 0.5) (mix (lambda (u v) (tanh (+ u (* k v))))))
                      (element-scan (lambda (h x a) (mix x (* a h))) initial (list x (broadcast-to decay (shape x))) :axis 1))";
        let scan = ElementScan::from_sexpr(text, &bind).unwrap();
        check_against_interpreter(ctx, "captured function", &scan, &mut rng);
        let _: BTreeMap<String, wgsl_compute::Tensor> = scan.grad(ctx, &ArrayD::ones(IxDyn(scan.shape()))).unwrap();
    });
}

#[test]
fn element_scan_repeated_sequences_accumulate_gradients() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(513);
        let bind = seed1_bindings(&mut rng, 2, 9, 6);
        let twice = ElementScan::from_sexpr(
            "(element-scan (lambda (h a b) (tanh (+ (* a h) b))) initial (list x x) :axis 1)",
            &bind,
        )
        .unwrap();
        let once = ElementScan::from_sexpr(
            "(element-scan (lambda (h a) (tanh (+ (* a h) a))) initial (list x) :axis 1)",
            &bind,
        )
        .unwrap();
        let seed = random(&mut rng, &[2, 9, 6], -1.0, 1.0);
        let (g2, g1) = (twice.grad(ctx, &seed).unwrap(), once.grad(ctx, &seed).unwrap());
        assert_close(
            ctx,
            "repeated x",
            &g2["x"].to_vec().unwrap(),
            &g1["x"].to_vec().unwrap(),
            Gate::new(1e-6, 1e-5),
        );
    });
}

#[test]
fn element_scan_past_the_storage_buffer_limit_is_a_fallback() {
    // 15 sequences: the kernel binds 17 storage buffers (initial, 15 sequences, output).
    let names: Vec<String> = (1..=15).map(|i| format!("s{i}")).collect();
    let text = format!(
        "(element-scan (lambda (h {}) (tanh (+ (* 0.5 h) {}))) initial (list {}) :axis 0)",
        names.join(" "),
        names.join(" "),
        names.join(" ")
    );
    let mut rng = Rng::new(514);
    let mut bind = Bindings::new().tensor("initial", random(&mut rng, &[3], -1.0, 1.0));
    for n in &names {
        bind = bind.tensor(n, random(&mut rng, &[4, 3], -0.2, 0.2));
    }
    let scan = ElementScan::from_sexpr(&text, &bind).unwrap();
    let want = scan.run(&cpu()).unwrap().to_vec().unwrap();
    each_adapter(|ctx| match scan.run(ctx) {
        Ok(t) => {
            assert!(ctx.info().max_storage_buffers >= 17);
            assert_close(ctx, "15 sequences", &t.to_vec().unwrap(), &want, GATE);
        }
        Err(Error::Fallback { reason, .. }) => {
            assert!(ctx.info().max_storage_buffers < 17, "{reason}");
            assert!(reason.contains("17 storage buffers"), "{reason}");
        }
        Err(e) => panic!("{e}"),
    });
}

#[test]
fn element_scan_ties_split_the_gradient_evenly() {
    let pairwise = ElementScan::from_sexpr(
        "(element-scan (lambda (h x) (maximum h x)) initial (list x) :axis 0)",
        &Bindings::new()
            .tensor("initial", ArrayD::from_elem(IxDyn(&[3]), 1.0))
            .tensor(
                "x",
                ArrayD::from_shape_vec(IxDyn(&[1, 3]), vec![1.0, 0.5, 2.0]).unwrap(),
            ),
    )
    .unwrap();
    let reduce = ElementScan::from_sexpr(
        "(element-scan (lambda (h x) (+ h (max x :axes [-1] :keepdims true))) initial (list x) :axis 0 :state-axis -1)",
        &Bindings::new().tensor("initial", ArrayD::zeros(IxDyn(&[4]))).tensor(
            "x",
            ArrayD::from_shape_vec(IxDyn(&[1, 4]), vec![1.0, 3.0, 3.0, 2.0]).unwrap(),
        ),
    )
    .unwrap();
    let mut contexts = vec![cpu()];
    each_adapter(|ctx| contexts.push(ctx.clone()));
    for ctx in &contexts {
        let g = pairwise.grad(ctx, &ArrayD::ones(IxDyn(&[1, 3]))).unwrap();
        assert_eq!(g["initial"].to_vec().unwrap(), vec![0.5, 1.0, 0.0], "{ctx:?}");
        assert_eq!(g["x"].to_vec().unwrap(), vec![0.5, 0.0, 1.0], "{ctx:?}");
        let g = reduce.grad(ctx, &ArrayD::ones(IxDyn(&[1, 4]))).unwrap();
        assert_eq!(g["x"].to_vec().unwrap(), vec![0.0, 2.0, 2.0, 0.0], "{ctx:?}");
    }
}

#[test]
fn element_scan_kernels_are_cached_by_the_body_hash() {
    let mut rng = Rng::new(515);
    let kernel = |scan: &ElementScan| {
        let ir = scan.ir();
        let at = ir.find("kernel=").expect("a kernel name");
        ir[at..].split_whitespace().next().unwrap().to_string()
    };
    let small = ElementScan::from_sexpr(SEED1, &seed1_bindings(&mut rng, 1, 2, 3)).unwrap();
    let large = ElementScan::from_sexpr(SEED1, &seed1_bindings(&mut rng, 4, 9, 70)).unwrap();
    let other = ElementScan::from_sexpr(&SEED1.replace("tanh", "sigmoid"), &seed1_bindings(&mut rng, 1, 2, 3)).unwrap();
    assert_eq!(kernel(&small), kernel(&large));
    assert_ne!(kernel(&small), kernel(&other));
    // On a fresh context, a second shape builds no new pipeline.
    let Some(ctx) = pollster::block_on(Context::each_adapter()).unwrap().into_iter().next() else {
        assert!(
            !wgsl_compute::context::require_gpu(),
            "ENGINE_REQUIRE_GPU=1 but no adapter"
        );
        return;
    };
    small.run(&ctx).unwrap().to_vec().unwrap();
    let built = ctx.pipelines_built();
    assert!(built >= 1);
    large.run(&ctx).unwrap().to_vec().unwrap();
    assert_eq!(ctx.pipelines_built(), built);
    other.run(&ctx).unwrap().to_vec().unwrap();
    assert_eq!(ctx.pipelines_built(), built + 1);
}

/// Translates generated WGSL to MSL and HLSL with naga (Metal and DX12 are not on this
/// machine), so a backend problem in the code generator shows up here.
fn translate_for_metal_and_dx12(wgsl: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let mut validator =
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
    let info = validator.validate(&module).map_err(|e| e.emit_to_string(wgsl))?;
    let msl_pipeline = naga::back::msl::PipelineOptions::default();
    naga::back::msl::write_string(&module, &info, &naga::back::msl::Options::default(), &msl_pipeline)
        .map_err(|e| format!("MSL: {e}"))?;
    let mut hlsl = String::new();
    naga::back::hlsl::Writer::new(
        &mut hlsl,
        &naga::back::hlsl::Options::default(),
        &naga::back::hlsl::PipelineOptions::default(),
    )
    .write(&module, &info, None)
    .map_err(|e| format!("HLSL: {e}"))?;
    Ok(())
}

#[test]
fn element_scan_generated_kernels_translate_for_metal_and_dx12() {
    let mut rng = Rng::new(516);
    let programs = [
        ElementScan::from_sexpr(SEED1, &seed1_bindings(&mut rng, 1, 2, 3)).unwrap(),
        ElementScan::from_sexpr(SEED2, &seed2_bindings(&mut rng, 1, 2, 1)).unwrap(),
        ElementScan::from_sexpr(SEED3, &seed3_bindings(&mut rng, 1, 2, 3)).unwrap(),
    ];
    for p in &programs {
        // The forward kernels and the gradient's (a second-order program holds both).
        let seed = ArrayD::ones(IxDyn(p.shape()));
        let grad = p.grad_program(p.inputs()[0], &seed).unwrap();
        for w in p.wgsl().iter().chain(&grad.wgsl()) {
            translate_for_metal_and_dx12(w).unwrap_or_else(|e| panic!("{e}\n{w}"));
        }
        assert!(grad.wgsl().len() > p.wgsl().len());
    }
}
