//! Element scans on device tensors: programs bound to `Tensor`s (views included) give what the
//! host-array path gives, a matmul's output feeds a scan without a readback, and walks longer
//! than the software adapters' loop limit (65,535 iterations) are split by the recurrence
//! launch and stay correct, forward and gradients, against the f64 interpreter.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::element_scan::spec_programs::TANH_SCAN;
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::{ops, Context, Tensor};

use crate::common::{assert_close, each_adapter};

/// GPU against the interpreter, forward and gradients (the element-scan gate).
const GATE: Gate = Gate::new(1e-5, 1e-5);
/// The same kernel over the same values, read through views or uploads: equal up to rounding
/// of nothing (the gate only guards against a different summation order in reductions).
const SAME: Gate = Gate::new(1e-6, 1e-6);

fn random(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> ArrayD<f32> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, lo, hi)).unwrap()
}

/// x (b, t, w), decay (t, w), initial (b, w) as host arrays: the inputs of [`TANH_SCAN`],
/// the spec's first program, h = tanh(x + a h) along axis 1.
fn tanh_host(rng: &mut Rng, b: usize, t: usize, w: usize) -> [ArrayD<f32>; 3] {
    [
        random(rng, &[b, t, w], -1.0, 1.0),
        random(rng, &[t, w], 0.2, 1.0),
        random(rng, &[b, w], -1.0, 1.0),
    ]
}

fn tanh_bindings(host: &[ArrayD<f32>; 3]) -> Bindings {
    Bindings::new()
        .tensor("x", host[0].clone())
        .tensor("decay", host[1].clone())
        .tensor("initial", host[2].clone())
}

/// `a` and `b` element by element within `gate`, named.
fn close(ctx: &Context, case: &str, got: &Tensor, want: &Tensor, gate: Gate) {
    assert_eq!(got.shape(), want.shape(), "{case}");
    assert_close(ctx, case, &got.to_vec().unwrap(), &want.to_vec().unwrap(), gate);
}

/// Forward and every gradient of `scan` on `ctx` against the interpreter.
fn check_against_interpreter(ctx: &Context, case: &str, scan: &ElementScan, seed: &ArrayD<f32>) {
    let cpu = Context::cpu();
    close(
        ctx,
        &format!("{case} forward"),
        &scan.run(ctx).unwrap(),
        &scan.run(&cpu).unwrap(),
        GATE,
    );
    let want = scan.grad(&cpu, seed).unwrap();
    let got = scan.grad(ctx, seed).unwrap();
    assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
    for (name, w) in &want {
        close(ctx, &format!("{case} d/d{name}"), &got[name], w, GATE);
    }
}

#[test]
fn element_scan_longer_than_the_software_loop_limit_is_split_and_correct() {
    // Mesa's software adapters (lavapipe, llvmpipe GL) end a shader's loops after 65,535
    // iterations without a word; one 70,000-trip dispatch returned zeros from about trip
    // 65,523 on. The launch splits the walk, forward and in the gradient's reverse scan.
    let mut rng = Rng::new(70);
    let t = 70_000;
    let host = tanh_host(&mut rng, 1, t, 2);
    let scan = ElementScan::from_sexpr(TANH_SCAN, &tanh_bindings(&host)).unwrap();
    let seed = random(&mut rng, scan.shape(), -1.0, 1.0);
    each_adapter(|ctx| check_against_interpreter(ctx, "spec program 1 T = 70,000", &scan, &seed));

    // A reverse scan along axis 0: h = tanh(x - 0.5 h) from the last trip to the first.
    let x = random(&mut rng, &[t, 3], -1.0, 1.0);
    let initial = random(&mut rng, &[3], -1.0, 1.0);
    let bind = Bindings::new().tensor("x", x).tensor("initial", initial);
    let text = "(element-scan (lambda (h x) (tanh (- x (* 0.5 h)))) initial (list x) :axis 0 :reverse true)";
    let scan = ElementScan::from_sexpr(text, &bind).unwrap();
    let seed = random(&mut rng, scan.shape(), -1.0, 1.0);
    each_adapter(|ctx| check_against_interpreter(ctx, "reverse T = 70,000", &scan, &seed));
}

#[test]
fn element_scan_device_tensors_give_the_host_path() {
    let check = |ctx: &Context| {
        let mut rng = Rng::new(71);
        // Lanes 1, 63, 65 and two workgroups; trips 1 and longer.
        for (b, t, w) in [(1, 1, 1), (1, 5, 63), (2, 9, 65), (3, 40, 70)] {
            let host = tanh_host(&mut rng, b, t, w);
            let by_host = ElementScan::from_sexpr(TANH_SCAN, &tanh_bindings(&host)).unwrap();
            let dev: Vec<Tensor> = host.iter().map(|a| Tensor::from_array(ctx, a).unwrap()).collect();
            let bind = Bindings::new()
                .device("x", &dev[0])
                .device_parameter("decay", &dev[1])
                .device("initial", &dev[2]);
            let by_device = ElementScan::from_sexpr(TANH_SCAN, &bind).unwrap();
            let case = format!("spec program 1 {:?}", [b, t, w]);
            let want = by_host.run(ctx).unwrap();
            close(
                ctx,
                &format!("{case} forward"),
                &by_device.run(ctx).unwrap(),
                &want,
                SAME,
            );
            // The seed as a host array and as a device tensor.
            let seed = random(&mut rng, by_host.shape(), -1.0, 1.0);
            let want = by_host.grad(ctx, &seed).unwrap();
            let got = by_device
                .grad_tensor(ctx, &Tensor::from_array(ctx, &seed).unwrap())
                .unwrap();
            assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
            for (name, w) in &want {
                close(ctx, &format!("{case} d/d{name}"), &got[name], w, SAME);
            }
        }
    };
    each_adapter(check);
    check(&Context::cpu());
}

#[test]
fn element_scan_reads_views_in_place() {
    let cpu = Context::cpu();
    let mut check = |ctx: &Context| {
        let mut rng = Rng::new(72);
        let (b, t, w) = (2, 33, 65);
        let host = tanh_host(&mut rng, b, t, w);
        let by_host = ElementScan::from_sexpr(TANH_SCAN, &tanh_bindings(&host)).unwrap();
        let want = by_host.run(ctx).unwrap();
        // x stored (t, b, w) and seen (b, t, w) through a transpose; decay a narrowed window
        // of a longer tensor; initial a transposed view of a (w, b) tensor.
        let x_tbw = host[0]
            .clone()
            .permuted_axes(IxDyn(&[1, 0, 2]))
            .as_standard_layout()
            .to_owned();
        let x = Tensor::from_array(ctx, &x_tbw).unwrap().transpose(0, 1).unwrap();
        assert!(!x.is_contiguous());
        let mut long = random(&mut rng, &[t + 5, w], 0.2, 1.0);
        long.slice_mut(ndarray::s![3..3 + t, ..]).assign(&host[1]);
        let decay = Tensor::from_array(ctx, &long).unwrap().narrow(0, 3, 3 + t).unwrap();
        let init_wb = host[2].t().as_standard_layout().to_owned();
        let initial = Tensor::from_array(ctx, &init_wb).unwrap().transpose(0, 1).unwrap();
        let bind = Bindings::new()
            .device("x", &x)
            .device("decay", &decay)
            .device("initial", &initial);
        let by_view = ElementScan::from_sexpr(TANH_SCAN, &bind).unwrap();
        close(ctx, "views forward", &by_view.run(ctx).unwrap(), &want, SAME);
        let seed = random(&mut rng, by_host.shape(), -1.0, 1.0);
        let want = by_host.grad(ctx, &seed).unwrap();
        let got = by_view.grad(ctx, &seed).unwrap();
        for (name, w) in &want {
            close(ctx, &format!("views d/d{name}"), &got[name], w, SAME);
        }
        // with_input rebinds one input of a built program to a device tensor.
        let rebound = by_host.clone().with_input("x", &x).unwrap();
        close(
            ctx,
            "with_input forward",
            &rebound.run(ctx).unwrap(),
            &by_host.run(ctx).unwrap(),
            SAME,
        );
        assert!(by_host.clone().with_input("x", &decay).is_err());
        assert!(by_host.clone().with_input("nope", &x).is_err());
    };
    each_adapter(&mut check);
    check(&cpu);
}

#[test]
fn element_scan_takes_a_matmul_output_without_a_readback() {
    let cpu = Context::cpu();
    let check = |ctx: &Context| {
        let mut rng = Rng::new(73);
        let (t, k, w) = (17, 8, 5);
        // x (1, t, w) = a (t, k) @ p (k, w), straight from the matmul into the scan.
        let a = Tensor::from_array(ctx, &random(&mut rng, &[t, k], -0.5, 0.5)).unwrap();
        let p = Tensor::from_array(ctx, &random(&mut rng, &[k, w], -0.5, 0.5)).unwrap();
        let x = ops::matmul(&a, &p).unwrap().reshape(&[1, t, w]).unwrap();
        let decay = random(&mut rng, &[t, w], 0.2, 1.0);
        let initial = random(&mut rng, &[1, w], -1.0, 1.0);
        let bind = Bindings::new()
            .device("x", &x)
            .tensor("decay", decay.clone())
            .tensor("initial", initial.clone());
        let got = ElementScan::from_sexpr(TANH_SCAN, &bind).unwrap().run(ctx).unwrap();
        let host = [x.to_array().unwrap(), decay, initial];
        let want = ElementScan::from_sexpr(TANH_SCAN, &tanh_bindings(&host))
            .unwrap()
            .run(ctx)
            .unwrap();
        close(ctx, "matmul -> scan", &got, &want, SAME);
        ElementScan::from_sexpr(TANH_SCAN, &bind).unwrap()
    };
    each_adapter(|ctx| {
        // A program bound to one context's tensors refuses another context.
        assert!(check(ctx).run(&cpu).is_err());
    });
    check(&cpu);
}
