//! Broadcasting elementwise ops against the f64 reference.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::ops;
use wgsl_compute::{reference, Tensor};
use wgsl_compute::{Binary, Unary};

use crate::common::{assert_close, each_adapter};

const GATE: Gate = Gate::new(1e-6, 1e-5);

fn random(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> ArrayD<f32> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, lo, hi)).unwrap()
}

#[test]
fn binary_ops_broadcast_like_numpy() {
    let shapes: &[(&[usize], &[usize])] = &[
        (&[1], &[1]),
        (&[255], &[255]),
        (&[256], &[1]),
        (&[257], &[257]),
        (&[3, 1000], &[1000]),
        (&[4, 1, 5], &[3, 1]),
        (&[2, 3, 4, 5], &[2, 1, 4, 1]),
        (&[7], &[2, 3, 7]),
    ];
    each_adapter(|ctx| {
        let mut rng = Rng::new(11);
        for op in Binary::ALL {
            for (sa, sb) in shapes {
                // Positive inputs keep log-like ops (pow) real.
                let a = random(&mut rng, sa, 0.5, 2.0);
                let b = random(&mut rng, sb, 0.5, 2.0);
                let want = reference::elementwise::binary(op, &a.view(), &b.view()).unwrap();
                let ta = Tensor::from_array(ctx, &a).unwrap();
                let tb = Tensor::from_array(ctx, &b).unwrap();
                let got = ops::binary(op, &ta, &tb).unwrap();
                assert_eq!(got.shape(), want.shape());
                let want: Vec<f32> = want.iter().copied().collect();
                assert_close(
                    ctx,
                    &format!("{op:?} {sa:?} {sb:?}"),
                    &got.to_vec().unwrap(),
                    &want,
                    GATE,
                );
            }
        }
    });
}

#[test]
fn unary_ops_match_the_reference() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(12);
        for op in Unary::ALL {
            for n in [1usize, 255, 256, 257, 1001] {
                let (lo, hi) = match op {
                    Unary::Log | Unary::Sqrt => (0.1, 4.0),
                    _ => (-4.0, 4.0),
                };
                let x = random(&mut rng, &[n], lo, hi);
                let want = reference::elementwise::unary(op, &x.view());
                let got = ops::unary(op, &Tensor::from_array(ctx, &x).unwrap()).unwrap();
                let want: Vec<f32> = want.iter().copied().collect();
                assert_close(ctx, &format!("{op:?} n={n}"), &got.to_vec().unwrap(), &want, GATE);
            }
        }
    });
}

#[test]
fn ops_read_transposed_and_sliced_views() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(13);
        let a = random(&mut rng, &[5, 6, 7], -1.0, 1.0);
        let b = random(&mut rng, &[7, 6], -1.0, 1.0);
        let ta = Tensor::from_array(ctx, &a).unwrap().narrow(0, 1, 4).unwrap(); // (3, 6, 7)
        let tb = Tensor::from_array(ctx, &b).unwrap().transpose(0, 1).unwrap(); // (6, 7)
        let got = ops::mul(&ta, &tb).unwrap();
        let av = a.slice(ndarray::s![1..4, .., ..]).into_dyn();
        let bv = b.t().into_dyn();
        let want = reference::elementwise::binary(Binary::Mul, &av, &bv).unwrap();
        let want: Vec<f32> = want.iter().copied().collect();
        assert_close(ctx, "mul of views", &got.to_vec().unwrap(), &want, GATE);
    });
}

#[test]
fn tanh_saturates_without_nan() {
    each_adapter(|ctx| {
        let x = Tensor::from_slice(ctx, &[4], &[-100.0, -20.0, 20.0, 100.0]).unwrap();
        assert_eq!(ops::tanh(&x).unwrap().to_vec().unwrap(), vec![-1.0, -1.0, 1.0, 1.0]);
    });
}

#[test]
fn mismatched_shapes_name_the_op_and_both_shapes() {
    each_adapter(|ctx| {
        let a = Tensor::zeros(ctx, &[2, 3]).unwrap();
        let b = Tensor::zeros(ctx, &[4]).unwrap();
        let e = ops::sub(&a, &b).unwrap_err().to_string();
        assert!(e.contains("sub") && e.contains("[2, 3]") && e.contains("[4]"), "{e}");
    });
}

#[test]
fn every_f32_op_of_the_expression_ir_runs_as_an_elementwise_op() {
    // The ops beyond the tensor tables (sin, cos, comparisons as 0/1) come from the one IR;
    // an op that needs bool operands is a type error, never a kernel.
    each_adapter(|ctx| {
        let mut rng = Rng::new(14);
        let (a, b) = (
            random(&mut rng, &[3, 257], -2.0, 2.0),
            random(&mut rng, &[257], -2.0, 2.0),
        );
        let (ta, tb) = (
            Tensor::from_array(ctx, &a).unwrap(),
            Tensor::from_array(ctx, &b).unwrap(),
        );
        for op in [Unary::Sin, Unary::Cos] {
            let want: Vec<f32> = reference::elementwise::unary(op, &a.view()).iter().copied().collect();
            let got = ops::unary(op, &ta).unwrap().to_vec().unwrap();
            assert_close(ctx, op.name(), &got, &want, GATE);
        }
        for op in [Binary::Lt, Binary::Le, Binary::Gt, Binary::Ge, Binary::Eq, Binary::Ne] {
            let want = reference::elementwise::binary(op, &a.view(), &b.view()).unwrap();
            let want: Vec<f32> = want.iter().copied().collect();
            assert!(want.iter().all(|v| *v == 0.0 || *v == 1.0));
            let got = ops::binary(op, &ta, &tb).unwrap().to_vec().unwrap();
            assert_close(ctx, op.name(), &got, &want, Gate::new(0.0, 0.0));
        }
        let e = ops::unary(Unary::Not, &ta).unwrap_err().to_string();
        assert!(e.contains("E-TYPE-001") && e.contains("not"), "{e}");
        assert!(ops::binary(Binary::And, &ta, &tb).is_err());
    });
}
