//! Element scans built with the Rust builder: the same body as the text, type errors as errors,
//! and random well-typed bodies on every adapter against the interpreter.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::element_scan::{Bindings, Body, ElementScan, ElementScanOptions, Reduce, Ty};
use wgsl_compute::Error;
use wgsl_compute::{Binary, Unary};

use super::{check_against_interpreter, cpu, random};
use crate::common::{assert_close, each_adapter};

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
    let opts = ElementScanOptions {
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
            let opts = ElementScanOptions {
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

#[test]
fn element_scan_bodies_take_every_op_of_the_expression_ir() {
    // relu and identity come from the IR the elementwise ops share (the text has no name for
    // them); forward and gradients on every adapter against the interpreter.
    let mut b = Body::builder(&[Ty::F32, Ty::F32, Ty::F32]);
    let (h, x, a) = (b.param(0), b.param(1), b.param(2));
    let ah = b.binary(Binary::Mul, a, h).unwrap();
    let s = b.binary(Binary::Add, x, ah).unwrap();
    let r = b.unary(Unary::Relu, s).unwrap();
    let y = b.unary(Unary::Identity, r).unwrap();
    let body = b.finish(y).unwrap();
    assert!(body.to_string().contains("relu"), "{body}");
    let mut rng = Rng::new(517);
    let opts = ElementScanOptions {
        axis: 1,
        ..Default::default()
    };
    let scan = ElementScan::from_body(
        body,
        opts,
        random(&mut rng, &[3, 4], -1.0, 1.0),
        vec![
            random(&mut rng, &[3, 9, 4], -1.0, 1.0),
            random(&mut rng, &[3, 9, 4], 0.2, 1.0),
        ],
    )
    .unwrap();
    each_adapter(|ctx| check_against_interpreter(ctx, "relu body", &scan, &mut rng.clone()));
}

/// A per-channel `(W,)` parameter in the builder form broadcasts to the sequences' shape, as
/// `(broadcast-to decay (shape x))` does in the text (issue 45): the same output and the same
/// `(W,)` gradient, bit for bit, on the CPU context and every adapter, scalar and vector
/// states; a `(W + 1,)` parameter is still a shape error.
#[test]
fn element_scan_builder_broadcasts_a_per_channel_parameter() {
    let tanh_body = || {
        let mut b = Body::builder(&[Ty::F32, Ty::F32, Ty::F32]);
        let (h, x, a) = (b.param(0), b.param(1), b.param(2));
        let ah = b.binary(Binary::Mul, a, h).unwrap();
        let s = b.binary(Binary::Add, x, ah).unwrap();
        let y = b.unary(Unary::Tanh, s).unwrap();
        b.finish(y).unwrap()
    };
    let mut rng = Rng::new(45);
    for (batch, time, w) in [(1, 1, 1), (3, 6, 5), (2, 65, 4)] {
        let (x, d, i) = (
            random(&mut rng, &[batch, time, w], -1.0, 1.0),
            random(&mut rng, &[w], 0.0, 1.0),
            random(&mut rng, &[batch, w], -1.0, 1.0),
        );
        let opts = ElementScanOptions {
            axis: 1,
            ..Default::default()
        };
        let built = ElementScan::from_body(tanh_body(), opts, i.clone(), vec![x.clone(), d.clone()]).unwrap();
        let text = ElementScan::from_sexpr(
            wgsl_compute::element_scan::spec_programs::TANH_SCAN,
            &Bindings::new().tensor("x", x).tensor("decay", d).tensor("initial", i),
        )
        .unwrap();
        assert_eq!(built.shape(), &[batch, time, w]);
        let seed = random(&mut rng, &[batch, time, w], -1.0, 1.0);
        let check = |ctx: &wgsl_compute::Context| {
            let case = format!("({batch}, {time}, {w}) on {:?}", ctx.info().backend);
            let a = built.run(ctx).unwrap().to_vec().unwrap();
            let b = text.run(ctx).unwrap().to_vec().unwrap();
            assert_close(ctx, &format!("{case}: builder vs text"), &a, &b, Gate::new(0.0, 0.0));
            let (ga, gb) = (built.grad(ctx, &seed).unwrap(), text.grad(ctx, &seed).unwrap());
            assert_eq!(ga["x2"].shape(), &[w], "{case}: the gradient in the parameter's shape");
            let (da, db) = (ga["x2"].to_vec().unwrap(), gb["decay"].to_vec().unwrap());
            assert_close(ctx, &format!("{case}: d decay"), &da, &db, Gate::new(0.0, 0.0));
        };
        check(&cpu());
        each_adapter(check);
    }
    // A vector state: x (B, T, H, 4) with a per-width gate (4,) and a per-head one (H, 1).
    let mut b = Body::builder(&[Ty::vector(4), Ty::vector(4), Ty::vector(4), Ty::vector(1)]);
    let (h, x, a, g) = (b.param(0), b.param(1), b.param(2), b.param(3));
    let ah = b.binary(Binary::Mul, a, h).unwrap();
    let gx = b.binary(Binary::Mul, g, x).unwrap();
    let s = b.binary(Binary::Add, gx, ah).unwrap();
    let y = b.unary(Unary::Tanh, s).unwrap();
    let body = b.finish(y).unwrap();
    let (x, a, g, i) = (
        random(&mut rng, &[2, 5, 3, 4], -1.0, 1.0),
        random(&mut rng, &[4], 0.0, 1.0),
        random(&mut rng, &[3, 1], 0.0, 1.0),
        random(&mut rng, &[2, 3, 4], -1.0, 1.0),
    );
    let opts = ElementScanOptions {
        axis: 1,
        vector_state: true,
        ..Default::default()
    };
    let built = ElementScan::from_body(body.clone(), opts, i.clone(), vec![x.clone(), a.clone(), g.clone()]).unwrap();
    let text = ElementScan::from_sexpr(
        "(element-scan (lambda (h x a g) (tanh (+ (* g x) (* a h)))) initial
           (list x (broadcast-to a (shape x)) (broadcast-to g [2 5 3 1])) :axis 1 :state-axis -1)",
        &Bindings::new()
            .tensor("x", x.clone())
            .tensor("a", a)
            .tensor("g", g)
            .tensor("initial", i.clone()),
    )
    .unwrap();
    let seed = random(&mut rng, &[2, 5, 3, 4], -1.0, 1.0);
    let check = |ctx: &wgsl_compute::Context| {
        let (p, q) = (
            built.run(ctx).unwrap().to_vec().unwrap(),
            text.run(ctx).unwrap().to_vec().unwrap(),
        );
        assert_close(ctx, "vector state: builder vs text", &p, &q, Gate::new(0.0, 0.0));
        let (ga, gb) = (built.grad(ctx, &seed).unwrap(), text.grad(ctx, &seed).unwrap());
        assert_eq!((ga["x2"].shape(), ga["x3"].shape()), (&[4][..], &[3, 1][..]));
        for (k, n) in [("x2", "a"), ("x3", "g")] {
            let (da, db) = (ga[k].to_vec().unwrap(), gb[n].to_vec().unwrap());
            assert_close(ctx, &format!("vector state: d {n}"), &da, &db, Gate::new(0.0, 0.0));
        }
    };
    check(&cpu());
    each_adapter(check);
    // A parameter that does not broadcast is the shape error it was.
    let bad = random(&mut rng, &[5], 0.0, 1.0);
    let opts = ElementScanOptions {
        axis: 1,
        ..Default::default()
    };
    let x = random(&mut rng, &[3, 6, 4], -1.0, 1.0);
    let r = ElementScan::from_body(tanh_body(), opts, random(&mut rng, &[3, 4], -1.0, 1.0), vec![x, bad]);
    let e = r.unwrap_err();
    assert!(matches!(e, Error::Syntax { code: "E-SCAN-010", .. }), "{e}");
    assert!(e.to_string().contains("[5]"), "{e}");
}
