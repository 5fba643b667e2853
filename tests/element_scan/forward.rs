//! Element scans forward: the spec's example programs and other programs on every adapter against the
//! f64 interpreter, final-state slices, `:reverse` against flip-scan-flip, any trip axis.

use std::collections::BTreeMap;

use ndarray::{ArrayD, Axis, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::element_scan::{Bindings, ElementScan};

use super::{
    check_against_interpreter, flat, flip1, max_plus_reverse_scan_bindings, norm_capped_scan_bindings, perturb, random,
    tanh_scan_bindings, GATE, MAX_PLUS_REVERSE_SCAN, NORM_CAPPED_SCAN, TANH_SCAN,
};
use crate::common::{assert_close, each_adapter};

#[test]
fn element_scan_spec_programs_match_the_interpreter() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(501);
        // Lanes 1, 63, 64, 65 and more than two workgroups; trips 1 and longer.
        for (b, t, w) in [(1, 1, 1), (1, 5, 63), (2, 3, 32), (5, 2, 13), (2, 40, 70)] {
            let scan = ElementScan::from_sexpr(TANH_SCAN, &tanh_scan_bindings(&mut rng, b, t, w)).unwrap();
            assert_eq!(scan.shape(), &[b, t, w]);
            check_against_interpreter(ctx, &format!("spec program 1 {:?}", [b, t, w]), &scan, &mut rng);
        }
        for (b, t, h) in [(1, 1, 1), (2, 6, 3), (3, 17, 5)] {
            let scan =
                ElementScan::from_sexpr(NORM_CAPPED_SCAN, &norm_capped_scan_bindings(&mut rng, b, t, h)).unwrap();
            assert_eq!(scan.shape(), &[b, t, h, 16]);
            check_against_interpreter(ctx, &format!("spec program 2 {:?}", [b, t, h]), &scan, &mut rng);
        }
        for (b, t, w) in [(1, 1, 1), (3, 9, 65), (2, 33, 7)] {
            let scan = ElementScan::from_sexpr(
                MAX_PLUS_REVERSE_SCAN,
                &max_plus_reverse_scan_bindings(&mut rng, b, t, w),
            )
            .unwrap();
            check_against_interpreter(ctx, &format!("spec program 3 {:?}", [b, t, w]), &scan, &mut rng);
        }
    });
}

#[test]
fn element_scan_final_state_slices_keep_the_axis() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(502);
        let (b, t, w) = (2, 6, 5);
        let fwd = format!("(let ((states {TANH_SCAN})) (slice states 1 (- time 1) time))");
        let bind = tanh_scan_bindings(&mut rng, b, t, w);
        let last = ElementScan::from_sexpr(&fwd, &bind).unwrap();
        assert_eq!(last.shape(), &[b, 1, w]);
        let all = ElementScan::from_sexpr(TANH_SCAN, &bind)
            .unwrap()
            .run(ctx)
            .unwrap()
            .to_array()
            .unwrap();
        let want: Vec<f32> = all.index_axis(Axis(1), t - 1).iter().copied().collect();
        assert_close(
            ctx,
            "spec program 1 final state",
            &last.run(ctx).unwrap().to_vec().unwrap(),
            &want,
            GATE,
        );
        check_against_interpreter(ctx, "spec program 1 final state", &last, &mut rng);

        let rev = format!("(let ((states {MAX_PLUS_REVERSE_SCAN})) (slice states 1 0 1))");
        let bind = max_plus_reverse_scan_bindings(&mut rng, b, t, w);
        let first = ElementScan::from_sexpr(&rev, &bind).unwrap();
        let all = ElementScan::from_sexpr(MAX_PLUS_REVERSE_SCAN, &bind)
            .unwrap()
            .run(ctx)
            .unwrap()
            .to_array()
            .unwrap();
        let want: Vec<f32> = all.index_axis(Axis(1), 0).iter().copied().collect();
        assert_close(
            ctx,
            "spec program 3 final state",
            &first.run(ctx).unwrap().to_vec().unwrap(),
            &want,
            GATE,
        );
        check_against_interpreter(ctx, "spec program 3 final state", &first, &mut rng);
    });
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
            let rev = ElementScan::from_sexpr(MAX_PLUS_REVERSE_SCAN, &bind(&x, &cost))
                .unwrap()
                .run(ctx)
                .unwrap()
                .to_array()
                .unwrap();
            let fwd_text = MAX_PLUS_REVERSE_SCAN.replace(":reverse true", ":reverse false");
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
        let text = NORM_CAPPED_SCAN.replace(":state-axis -1", ":state-axis -1 :reverse true");
        let bind = norm_capped_scan_bindings(&mut rng, 2, 7, 3);
        let scan = ElementScan::from_sexpr(&text, &bind).unwrap();
        check_against_interpreter(ctx, "spec program 2 reversed", &scan, &mut rng);
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
            &ElementScan::from_sexpr(NORM_CAPPED_SCAN, &flipped)
                .unwrap()
                .run(ctx)
                .unwrap()
                .to_array()
                .unwrap(),
        );
        let got = scan.run(ctx).unwrap().to_vec().unwrap();
        assert_close(
            ctx,
            "spec program 2 reverse vs flip",
            &got,
            &flat(&want),
            Gate::new(1e-6, 1e-6),
        );
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
fn element_scan_captured_functions_inline() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(512);
        let bind = tanh_scan_bindings(&mut rng, 3, 8, 5);
        let text = "(let ((k 0.5) (mix (lambda (u v) (tanh (+ u (* k v))))))
                      (element-scan (lambda (h x a) (mix x (* a h))) initial (list x (broadcast-to decay (shape x))) :axis 1))";
        let scan = ElementScan::from_sexpr(text, &bind).unwrap();
        check_against_interpreter(ctx, "captured function", &scan, &mut rng);
        let _: BTreeMap<String, wgsl_compute::Tensor> = scan.grad(ctx, &ArrayD::ones(IxDyn(scan.shape()))).unwrap();
    });
}
