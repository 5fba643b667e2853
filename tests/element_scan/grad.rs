//! Element-scan gradients: the interpreter's against finite differences (first and second
//! order), repeated sequences, and ties of `maximum` splitting the gradient evenly.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::element_scan::{Bindings, ElementScan};

use super::{
    cpu, max_plus_reverse_scan_bindings, norm_capped_scan_bindings, perturb, random, tanh_scan_bindings,
    MAX_PLUS_REVERSE_SCAN, NORM_CAPPED_SCAN, TANH_SCAN,
};
use crate::common::{assert_close, each_adapter};

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
    check_finite_differences(
        "spec program 1",
        TANH_SCAN,
        &tanh_scan_bindings(&mut rng, 2, 7, 3),
        &mut rng,
        1e-2,
    );
    check_finite_differences(
        "spec program 2",
        NORM_CAPPED_SCAN,
        &norm_capped_scan_bindings(&mut rng, 2, 5, 2),
        &mut rng,
        1e-2,
    );
    // Max-plus is piecewise linear: small steps stay on one piece.
    check_finite_differences(
        "spec program 3",
        MAX_PLUS_REVERSE_SCAN,
        &max_plus_reverse_scan_bindings(&mut rng, 2, 6, 3),
        &mut rng,
        1e-3,
    );
}

#[test]
fn element_scan_second_gradient_matches_finite_differences() {
    let mut rng = Rng::new(504);
    let bind = tanh_scan_bindings(&mut rng, 2, 5, 3);
    let shape = [2usize, 5, 3];
    let seed1 = random(&mut rng, &shape, -1.0, 1.0);
    let seed2 = random(&mut rng, &shape, -1.0, 1.0);
    // g(x, decay, initial) = d<seed1, scan>/dx; second order: d<seed2, g>/d(decay, initial, x).
    let first = |b: &Bindings| {
        ElementScan::from_sexpr(TANH_SCAN, b)
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

#[test]
fn element_scan_repeated_sequences_accumulate_gradients() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(513);
        let bind = tanh_scan_bindings(&mut rng, 2, 9, 6);
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
