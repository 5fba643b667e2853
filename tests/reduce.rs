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

/// A bias's gradient over a batch is the column sums of the output's gradient
/// (`reduce_to`'s column-sum kernel on a GPU: 64-row chunks, then the chunk sums), at sizes
/// that leave a short last chunk and a second pass.
#[test]
fn a_bias_gradient_sums_the_columns_of_a_batch() {
    use wgsl_compute::autograd::{Tape, Var};
    each_adapter(|ctx| {
        let mut rng = Rng::new(22);
        for (batch, rows, n) in [(1, 1, 5), (3, 130, 70), (2, 4097, 3)] {
            let m = batch * rows;
            let tape = Tape::new(ctx);
            let x =
                Var::constant(&Tensor::from_slice(ctx, &[batch, rows, 4], &rng.vec_range(m * 4, -1.0, 1.0)).unwrap());
            let w = tape
                .var(&Tensor::from_slice(ctx, &[4, n], &rng.vec_range(4 * n, -1.0, 1.0)).unwrap())
                .unwrap();
            let b = tape.var(&Tensor::zeros(ctx, &[n]).unwrap()).unwrap();
            let c = rng.vec_range(m * n, -1.0, 1.0);
            let weights = Var::constant(&Tensor::from_slice(ctx, &[batch, rows, n], &c).unwrap());
            let loss = (&x.linear(&w, Some(&b)).unwrap() * &weights)
                .unwrap()
                .sum_all()
                .unwrap();
            let got = loss.backward().unwrap().get(&b).unwrap().to_vec().unwrap();
            let want: Vec<f32> = (0..n)
                .map(|j| (0..m).map(|r| c[r * n + j] as f64).sum::<f64>() as f32)
                .collect();
            assert_close(
                ctx,
                &format!("dbias ({batch}, {rows}, {n})"),
                &got,
                &want,
                Gate::new(1e-4, 1e-5),
            );
        }
    });
}

/// Column sums past 65,535 blocks of 64 columns (more than one grid dimension holds: the
/// blocks fold into two), as a broadcast bias's gradient over 2 rows.
#[test]
fn a_bias_gradient_of_more_columns_than_one_grid_dimension_holds() {
    use wgsl_compute::autograd::{Tape, Var};
    each_adapter(|ctx| {
        let n = 65_535 * 64 + 100;
        let mut rng = Rng::new(23);
        let c = rng.vec_range(2 * n, -1.0, 1.0);
        let tape = Tape::new(ctx);
        let b = tape.var(&Tensor::zeros(ctx, &[n]).unwrap()).unwrap();
        let weights = Var::constant(&Tensor::from_slice(ctx, &[2, n], &c).unwrap());
        let x = Var::constant(&Tensor::zeros(ctx, &[2, n]).unwrap());
        let loss = (&(&x + &b).unwrap() * &weights).unwrap().sum_all().unwrap();
        let got = loss.backward().unwrap().get(&b).unwrap().to_vec().unwrap();
        let want: Vec<f32> = (0..n).map(|j| c[j] + c[n + j]).collect();
        assert_close(ctx, "dbias (2, 4194340)", &got, &want, Gate::new(1e-6, 1e-7));
    });
}

/// The column sums keep NaN, the infinities and f32::MAX's overflow as the CPU context does:
/// a column of NaN, one of +inf and finite values, one of -inf, one of two f32::MAX (inf).
#[test]
fn a_bias_gradient_keeps_non_finite_values_as_the_cpu_context_does() {
    use wgsl_compute::autograd::{Tape, Var};
    use wgsl_compute::Context;
    let rows = 130;
    let mut c = vec![1.0f32; rows * 4];
    c[5 * 4] = f32::NAN;
    c[7 * 4 + 1] = f32::INFINITY;
    c[100 * 4 + 2] = f32::NEG_INFINITY;
    c[3 * 4 + 3] = f32::MAX;
    c[90 * 4 + 3] = f32::MAX;
    let dbias = |ctx: &Context| -> Vec<f32> {
        let tape = Tape::new(ctx);
        let b = tape.var(&Tensor::zeros(ctx, &[4]).unwrap()).unwrap();
        let x = Var::constant(&Tensor::zeros(ctx, &[rows, 4]).unwrap());
        let weights = Var::constant(&Tensor::from_slice(ctx, &[rows, 4], &c).unwrap());
        let loss = (&(&x + &b).unwrap() * &weights).unwrap().sum_all().unwrap();
        loss.backward().unwrap().get(&b).unwrap().to_vec().unwrap()
    };
    let want = dbias(&Context::cpu());
    assert!(want[0].is_nan() && want[1] == f32::INFINITY && want[2] == f32::NEG_INFINITY && want[3] == f32::INFINITY);
    each_adapter(|ctx| {
        let got = dbias(ctx);
        assert!(got[0].is_nan(), "NaN column on {}: {got:?}", ctx.info().name);
        assert_eq!(&got[1..], &want[1..], "on {}", ctx.info().name);
    });
}
