//! Row reductions against the f64 reference.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::{ops, reference, Tensor};

use crate::common::{assert_close, each_adapter};

#[test]
fn sum_last_at_awkward_sizes() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(21);
        for shape in [
            &[1usize][..],
            &[255],
            &[256],
            &[257],
            &[3, 1000],
            &[17, 1],
            &[2, 3, 4097],
            &[70000, 3],
        ] {
            let n = shape.iter().product();
            let x = ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, -1.0, 1.0)).unwrap();
            let want = reference::reduce::sum_last(&x.view());
            let got = ops::sum_last(&Tensor::from_array(ctx, &x).unwrap()).unwrap();
            assert_eq!(got.shape(), want.shape());
            let want: Vec<f32> = want.iter().copied().collect();
            // f32 accumulation over up to 4097 terms of size 1.
            assert_close(
                ctx,
                &format!("sum_last {shape:?}"),
                &got.to_vec().unwrap(),
                &want,
                Gate::new(1e-4, 1e-5),
            );
        }
    });
}

#[test]
fn sum_last_of_a_scalar_is_an_error() {
    each_adapter(|ctx| {
        let x = Tensor::zeros(ctx, &[]).unwrap();
        let e = ops::sum_last(&x).unwrap_err().to_string();
        assert!(e.contains("sum_last") && e.contains("rank >= 1"), "{e}");
    });
}
