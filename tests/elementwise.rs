//! Broadcasting elementwise ops against the f64 reference.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::ops::{self, Binary, Unary};
use wgsl_compute::{reference, Tensor};

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
