//! The Tensor API a user reaches for: methods that run the ops, scalar operands, `cat`,
//! `where_`, a stable `softplus`, whole-tensor sums and means, comparisons, in-place writes
//! (a plan's inputs between replays, and the error for a result read before the first
//! replay), seeded random tensors and the crate-root re-exports. Each op against its f64
//! reference on every adapter present and on the CPU context.

use ndarray::{ArrayD, Axis, IxDyn};
use wgsl_compute::autograd::{Tape, Var};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::plan::Plan;
use wgsl_compute::{ops, Binary, Context, DType, Error, Tensor, Unary};

use crate::common::{assert_close, each_adapter};

const GATE: Gate = Gate::new(1e-6, 1e-5);

/// Runs `f` on every adapter present, then on the CPU reference context.
fn every_context(mut f: impl FnMut(&Context)) {
    each_adapter(&mut f);
    f(&Context::cpu());
}

fn random(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> ArrayD<f32> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, lo, hi)).unwrap()
}

fn to_f32(v: impl IntoIterator<Item = f64>) -> Vec<f32> {
    v.into_iter().map(|x| x as f32).collect()
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec().unwrap().iter().map(|x| x.to_bits()).collect()
}

/// The stable softplus in f64: `max(x, 0) + log1p(e^-|x|)`.
fn softplus_f64(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

#[test]
fn tensor_api_methods_are_the_ops() {
    every_context(|ctx| {
        let mut rng = Rng::new(101);
        let x = Tensor::from_array(ctx, &random(&mut rng, &[3, 257], -2.0, 2.0)).unwrap();
        let y = Tensor::from_array(ctx, &random(&mut rng, &[257], 0.5, 2.0)).unwrap();
        let w = Tensor::from_array(ctx, &random(&mut rng, &[257, 5], -1.0, 1.0)).unwrap();
        let b = Tensor::from_array(ctx, &random(&mut rng, &[5], -1.0, 1.0)).unwrap();
        let pairs: Vec<(&str, Tensor, Tensor)> = vec![
            ("add", x.add(&y).unwrap(), ops::add(&x, &y).unwrap()),
            ("sub", x.sub(&y).unwrap(), ops::sub(&x, &y).unwrap()),
            ("mul", x.mul(&y).unwrap(), ops::mul(&x, &y).unwrap()),
            ("div", x.div(&y).unwrap(), ops::div(&x, &y).unwrap()),
            ("maximum", x.maximum(&y).unwrap(), ops::maximum(&x, &y).unwrap()),
            ("lt", x.lt(&y).unwrap(), ops::lt(&x, &y).unwrap()),
            ("exp", x.exp().unwrap(), ops::exp(&x).unwrap()),
            ("tanh", x.tanh().unwrap(), ops::tanh(&x).unwrap()),
            ("softplus", x.softplus().unwrap(), ops::softplus(&x).unwrap()),
            ("gelu", x.gelu().unwrap(), ops::gelu(&x).unwrap()),
            ("matmul", x.matmul(&w).unwrap(), ops::matmul(&x, &w).unwrap()),
            (
                "linear",
                x.linear(&w, Some(&b)).unwrap(),
                ops::linear(&x, &w, Some(&b)).unwrap(),
            ),
            (
                "linear_gelu",
                x.linear_gelu(&w, Some(&b)).unwrap(),
                ops::linear_gelu(&x, &w, Some(&b)).unwrap(),
            ),
            ("sum_last", x.sum_last().unwrap(), ops::sum_last(&x).unwrap()),
            (
                "softmax_last",
                x.softmax_last().unwrap(),
                ops::softmax_last(&x, None).unwrap(),
            ),
            ("argmax_last", x.argmax_last().unwrap(), ops::argmax_last(&x).unwrap()),
            ("sum_all", x.sum_all().unwrap(), ops::sum_all(&x).unwrap()),
        ];
        for (name, method, op) in pairs {
            assert_eq!(method.shape(), op.shape(), "{name}");
            assert_eq!(bits(&method), bits(&op), "{name} on {:?}", ctx.info().name);
        }
    });
}

/// A scalar method's name, its result and its f64 rule.
type ScalarCase = (&'static str, Tensor, fn(f64, f64) -> f64);

#[test]
fn tensor_api_scalar_operands_match_the_reference() {
    every_context(|ctx| {
        let mut rng = Rng::new(102);
        for n in [1usize, 255, 256, 257, 1001] {
            let xs = rng.vec_range(n, 0.25, 3.0);
            let x = Tensor::from_slice(ctx, &[n], &xs).unwrap();
            let s = rng.range(0.5, 2.0) as f32;
            let cases: Vec<ScalarCase> = vec![
                ("add_scalar", x.add_scalar(s).unwrap(), |a, b| a + b),
                ("sub_scalar", x.sub_scalar(s).unwrap(), |a, b| a - b),
                ("mul_scalar", x.mul_scalar(s).unwrap(), |a, b| a * b),
                ("div_scalar", x.div_scalar(s).unwrap(), |a, b| a / b),
                ("pow_scalar", x.pow_scalar(s).unwrap(), |a, b| a.powf(b)),
                ("maximum_scalar", x.maximum_scalar(s).unwrap(), f64::max),
                ("minimum_scalar", x.minimum_scalar(s).unwrap(), f64::min),
                ("gt_scalar", x.gt_scalar(s).unwrap(), |a, b| (a > b) as u8 as f64),
                ("le_scalar", x.le_scalar(s).unwrap(), |a, b| (a <= b) as u8 as f64),
            ];
            for (name, got, f) in cases {
                let want = to_f32(xs.iter().map(|&a| f(a as f64, s as f64)));
                assert_close(ctx, &format!("{name} n={n}"), &got.to_vec().unwrap(), &want, GATE);
            }
        }
        // A scalar op is the binary op against a broadcast one-element tensor, bit for bit.
        let x = Tensor::from_slice(ctx, &[4], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        let one = Tensor::full(ctx, &[1], 0.75).unwrap();
        assert_eq!(bits(&x.mul_scalar(0.75).unwrap()), bits(&x.mul(&one).unwrap()));
    });
}

#[test]
fn tensor_api_comparisons_give_one_where_the_relation_holds() {
    every_context(|ctx| {
        let a = Tensor::from_slice(ctx, &[2, 3], &[1., 2., 3., 4., 5., 6.]).unwrap();
        let b = Tensor::from_slice(ctx, &[3], &[2., 2., 7.]).unwrap(); // broadcast over rows
        let t = |v: [f32; 6]| v.to_vec();
        assert_eq!(a.lt(&b).unwrap().to_vec().unwrap(), t([1., 0., 1., 0., 0., 1.]));
        assert_eq!(a.le(&b).unwrap().to_vec().unwrap(), t([1., 1., 1., 0., 0., 1.]));
        assert_eq!(a.gt(&b).unwrap().to_vec().unwrap(), t([0., 0., 0., 1., 1., 0.]));
        assert_eq!(a.ge(&b).unwrap().to_vec().unwrap(), t([0., 1., 0., 1., 1., 0.]));
        assert_eq!(a.eq(&b).unwrap().to_vec().unwrap(), t([0., 1., 0., 0., 0., 0.]));
        assert_eq!(a.ne(&b).unwrap().to_vec().unwrap(), t([1., 0., 1., 1., 1., 1.]));
        assert_eq!(
            ops::binary(Binary::Ge, &a, &b).unwrap().to_vec().unwrap(),
            t([0., 1., 0., 1., 1., 0.])
        );
    });
}

#[test]
fn tensor_api_softplus_is_stable_at_the_extremes() {
    every_context(|ctx| {
        let extremes = [
            -1000.0f32, -100.0, -50.0, -20.0, -5.0, -1.0, 0.0, 1e-3, 1.0, 5.0, 20.0, 100.0, 1000.0,
        ];
        // n = 13 (scalar tail) and a (13, 4) transposed view (the scalar kernel form).
        let x = Tensor::from_slice(ctx, &[13], &extremes).unwrap();
        let got = x.softplus().unwrap().to_vec().unwrap();
        let want = to_f32(extremes.iter().map(|&v| softplus_f64(v as f64)));
        assert_close(ctx, "softplus extremes", &got, &want, GATE);
        assert!(got.iter().all(|v| v.is_finite()), "{got:?}");
        assert_eq!((got[0], got[12]), (0.0, 1000.0), "softplus(-1000), softplus(1000)");
        // Where 1 + e^x rounds to 1, softplus(x) is e^x to f32 precision (not 0).
        for (i, v) in [(2usize, -50.0f64), (3, -20.0)] {
            let rel = ((got[i] as f64 - v.exp()) / v.exp()).abs();
            assert!(
                rel < 1e-4,
                "softplus({v}) = {} vs e^{v} = {} (rel {rel})",
                got[i],
                v.exp()
            );
        }
        let mut rng = Rng::new(103);
        for n in [1usize, 255, 256, 257, 1001, 4099] {
            let xs = rng.vec_range(n, -30.0, 30.0);
            let t = Tensor::from_slice(ctx, &[n], &xs).unwrap();
            let want = to_f32(xs.iter().map(|&v| softplus_f64(v as f64)));
            assert_close(
                ctx,
                &format!("softplus n={n}"),
                &t.softplus().unwrap().to_vec().unwrap(),
                &want,
                GATE,
            );
        }
        let m = Tensor::from_slice(ctx, &[4, 13], &rng.vec_range(52, -1000.0, 1000.0)).unwrap();
        let mt = m.transpose(0, 1).unwrap(); // (13, 4) view
        let want = to_f32(mt.to_vec().unwrap().iter().map(|&v| softplus_f64(v as f64)));
        assert_close(
            ctx,
            "softplus of a view",
            &mt.softplus().unwrap().to_vec().unwrap(),
            &want,
            GATE,
        );
        assert_eq!(ops::unary(Unary::Softplus, &x).unwrap().to_vec().unwrap(), got);
        // Special values, from bit patterns: NaN in, NaN out; softplus(+inf) = inf, (-inf) = 0.
        let special = [
            f32::from_bits(0x7fc0_0000),
            f32::from_bits(0xffc0_0001),
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let s = Tensor::from_slice(ctx, &[4], &special)
            .unwrap()
            .softplus()
            .unwrap()
            .to_vec()
            .unwrap();
        assert!(s[0].is_nan() && s[1].is_nan(), "{s:?}");
        assert_eq!((s[2], s[3]), (f32::INFINITY, 0.0), "{s:?}");
    });
}

#[test]
fn tensor_api_where_selects_with_broadcasting() {
    every_context(|ctx| {
        let mut rng = Rng::new(104);
        for n in [1usize, 255, 256, 257, 1001] {
            let xs = random(&mut rng, &[3, n], -1.0, 1.0);
            let ys = random(&mut rng, &[n], -1.0, 1.0); // broadcast over the rows
            let x = Tensor::from_array(ctx, &xs).unwrap();
            let y = Tensor::from_array(ctx, &ys).unwrap();
            let cond = x.gt_scalar(0.0).unwrap();
            let got = x.where_(&cond, &y).unwrap();
            assert_eq!(got.shape(), &[3, n]);
            let want: Vec<f32> = xs
                .indexed_iter()
                .map(|(i, &v)| if v > 0.0 { v } else { ys[[i[1]]] })
                .collect();
            assert_eq!(got.to_vec().unwrap(), want, "where n={n}");
            assert_eq!(bits(&ops::where_(&cond, &x, &y).unwrap()), bits(&got));
        }
        // relu as a select: x where x > 0 else a broadcast scalar 0.
        let x = Tensor::from_slice(ctx, &[4], &[-2.0, -0.5, 0.5, 2.0]).unwrap();
        let zero = Tensor::zeros(ctx, &[1]).unwrap();
        assert_eq!(
            x.where_(&x.gt(&zero).unwrap(), &zero).unwrap().to_vec().unwrap(),
            vec![0., 0., 0.5, 2.]
        );
        let bad = Tensor::zeros(ctx, &[3]).unwrap();
        assert!(matches!(
            x.where_(&bad, &zero),
            Err(Error::Shape { .. } | Error::ShapeMismatch { .. })
        ));
    });
}

#[test]
fn tensor_api_where_takes_a_nan_condition_as_true_everywhere() {
    // Issue 41, item 2: lavapipe took a NaN condition for false (10 for
    // `[1].where_([NaN], [10])`); the docs and the CPU say non-zero, NaN included, is true.
    // Lengths 1 and 3 run the scalar kernel, 8 and 1024 the vec4 one where the layout allows.
    let conds = [
        f32::NAN,
        -f32::NAN,
        0.0,
        -0.0,
        f32::INFINITY,
        -1.0,
        1e-40,
        f32::from_bits(0x7fc0_0001),
    ];
    let truth = [true, true, false, false, true, true, true, true];
    every_context(|ctx| {
        for n in [1usize, 3, 8, 1024] {
            let c: Vec<f32> = (0..n).map(|i| conds[i % conds.len()]).collect();
            let a: Vec<f32> = (0..n).map(|i| 1.0 + i as f32).collect();
            let b: Vec<f32> = (0..n).map(|i| -10.0 - i as f32).collect();
            let want: Vec<f32> = (0..n)
                .map(|i| if truth[i % truth.len()] { a[i] } else { b[i] })
                .collect();
            let (ct, at, bt) = (
                Tensor::from_slice(ctx, &[n], &c).unwrap(),
                Tensor::from_slice(ctx, &[n], &a).unwrap(),
                Tensor::from_slice(ctx, &[n], &b).unwrap(),
            );
            let got = at.where_(&ct, &bt).unwrap().to_vec().unwrap();
            assert_eq!(
                got,
                want,
                "where n={n} on {} ({:?})",
                ctx.info().name,
                ctx.info().backend
            );
            // The gradient takes the same branch: d/da is 1 where the condition holds.
            let tape = Tape::new(ctx);
            let (va, vb) = (tape.var(&at).unwrap(), tape.var(&bt).unwrap());
            let grads = va.where_(&ct, &vb).unwrap().sum_all().unwrap().backward().unwrap();
            let da = grads.get(&va).unwrap().to_vec().unwrap();
            let db = grads.get(&vb).unwrap().to_vec().unwrap();
            let ones: Vec<f32> = (0..n).map(|i| if truth[i % truth.len()] { 1.0 } else { 0.0 }).collect();
            let rest: Vec<f32> = ones.iter().map(|x| 1.0 - x).collect();
            assert_eq!(
                (da, db),
                (ones, rest),
                "where's gradient n={n} on {} ({:?})",
                ctx.info().name,
                ctx.info().backend
            );
        }
    });
}

#[test]
fn tensor_api_cat_of_empty_tensors_is_empty() {
    // Issue 41, item 3: two (2, 0) tensors along axis 0 failed in `copy_into` (the (4, 0)
    // output's stride along axis 0 is 0) instead of giving (4, 0).
    every_context(|ctx| {
        let e = Tensor::zeros(ctx, &[2, 0]).unwrap();
        for (axis, want) in [(0, [4usize, 0]), (1, [2, 0])] {
            let got = Tensor::cat(&[&e, &e], axis).unwrap();
            assert_eq!(got.shape(), &want, "cat axis {axis}");
            assert!(got.to_vec().unwrap().is_empty());
        }
        // An input empty along another axis than the joined one, next to a non-empty one of
        // its shape elsewhere: (0, 3) and (2, 3) along axis 0.
        let a = Tensor::zeros(ctx, &[0, 3]).unwrap();
        let b = Tensor::from_slice(ctx, &[2, 3], &[1., 2., 3., 4., 5., 6.]).unwrap();
        let got = Tensor::cat(&[&a, &b, &a], 0).unwrap();
        assert_eq!(
            (got.shape(), got.to_vec().unwrap()),
            (&[2usize, 3][..], vec![1., 2., 3., 4., 5., 6.])
        );
        // The variables' cat and its gradient too.
        let tape = Tape::new(ctx);
        let (va, vb) = (tape.var(&e).unwrap(), tape.var(&e).unwrap());
        let y = Var::cat(&[&va, &vb], 0).unwrap();
        assert_eq!(y.tensor().shape(), &[4, 0]);
        let grads = y.sum_all().unwrap().backward().unwrap();
        assert_eq!(grads.get(&va).unwrap().shape(), &[2, 0]);
    });
}

#[test]
fn tensor_api_cat_joins_along_each_axis() {
    every_context(|ctx| {
        let mut rng = Rng::new(105);
        for n in [1usize, 255, 256, 257] {
            let a = random(&mut rng, &[2, n, 3], -1.0, 1.0);
            let b = random(&mut rng, &[2, n, 3], -1.0, 1.0);
            let c = random(&mut rng, &[2, n, 3], -1.0, 1.0);
            let (ta, tb, tc) = (
                Tensor::from_array(ctx, &a).unwrap(),
                Tensor::from_array(ctx, &b).unwrap(),
                Tensor::from_array(ctx, &c).unwrap(),
            );
            for axis in 0..3 {
                let got = Tensor::cat(&[&ta, &tb, &tc], axis).unwrap();
                let want = ndarray::concatenate(Axis(axis), &[a.view(), b.view(), c.view()]).unwrap();
                assert_eq!(got.shape(), want.shape(), "cat axis {axis} n={n}");
                let want: Vec<f32> = want.iter().copied().collect();
                assert_eq!(got.to_vec().unwrap(), want, "cat axis {axis} n={n}");
            }
        }
        // Views go in as they are: a transposed block and a narrowed one, and an empty part.
        let m = Tensor::from_array(ctx, &random(&mut rng, &[5, 4], -1.0, 1.0)).unwrap();
        let mt = m.transpose(0, 1).unwrap(); // (4, 5)
        let part = m.narrow(0, 1, 5).unwrap().transpose(0, 1).unwrap(); // (4, 4)
        let empty = Tensor::zeros(ctx, &[4, 0]).unwrap();
        let got = ops::cat(&[&mt, &empty, &part], 1).unwrap();
        let want = ndarray::concatenate(
            Axis(1),
            &[mt.to_array().unwrap().view(), part.to_array().unwrap().view()],
        )
        .unwrap();
        assert_eq!(got.to_vec().unwrap(), want.iter().copied().collect::<Vec<_>>());
        // Errors: nothing to join, an axis past the rank, a shape that differs off the axis.
        assert!(matches!(ops::cat(&[], 0), Err(Error::Value { .. })));
        assert!(matches!(ops::cat(&[&m], 2), Err(Error::Value { .. })));
        assert!(matches!(ops::cat(&[&m, &mt], 0), Err(Error::ShapeMismatch { .. })));
    });
}

#[test]
fn tensor_api_sum_all_and_means_match_the_reference() {
    every_context(|ctx| {
        let mut rng = Rng::new(106);
        for n in [1usize, 255, 256, 257, 1001, 4096, 4097, 3 * 4096 + 5, 100_003] {
            let xs = rng.vec_range(n, -1.0, 1.0);
            let x = Tensor::from_slice(ctx, &[n], &xs).unwrap();
            let sum: f64 = xs.iter().map(|&v| v as f64).sum();
            let s = x.sum_all().unwrap();
            assert_eq!(s.shape(), &[] as &[usize]);
            // f32 accumulation over n terms of magnitude <= 1.
            let gate = Gate::new(1e-6 * (n as f64).sqrt() * 4.0, 1e-5);
            assert_close(
                ctx,
                &format!("sum_all n={n}"),
                &s.to_vec().unwrap(),
                &[sum as f32],
                gate,
            );
            let m = x.mean_all().unwrap().to_vec().unwrap();
            assert_close(ctx, &format!("mean_all n={n}"), &m, &[(sum / n as f64) as f32], gate);
        }
        // Any view and rank: the sum of a transposed (3, 7, 5) block.
        let a = random(&mut rng, &[5, 7, 3], -1.0, 1.0);
        let t = Tensor::from_array(ctx, &a).unwrap().transpose(0, 2).unwrap();
        let sum: f64 = a.iter().map(|&v| v as f64).sum();
        assert_close(
            ctx,
            "sum_all of a view",
            &t.sum_all().unwrap().to_vec().unwrap(),
            &[sum as f32],
            GATE,
        );
        let got = t.mean_last().unwrap();
        assert_eq!(got.shape(), &[3, 7]);
        let want = a.permuted_axes(vec![2, 1, 0]).mean_axis(Axis(2)).unwrap();
        assert_close(
            ctx,
            "mean_last",
            &got.to_vec().unwrap(),
            &want.iter().copied().collect::<Vec<_>>(),
            GATE,
        );
        let empty = Tensor::zeros(ctx, &[0]).unwrap();
        assert_eq!(empty.sum_all().unwrap().to_vec().unwrap(), vec![0.0]);
        assert!(matches!(empty.mean_all(), Err(Error::Shape { .. })));
        assert!(matches!(
            Tensor::zeros(ctx, &[3, 0]).unwrap().mean_last(),
            Err(Error::Shape { .. })
        ));
    });
}

#[test]
fn tensor_api_linear_gelu_bias_is_optional() {
    every_context(|ctx| {
        let x = Tensor::randn(ctx, &[3, 33], 7).unwrap();
        let w = Tensor::randn(ctx, &[33, 9], 8).unwrap();
        let got = x.linear_gelu(&w, None).unwrap();
        let want = x.linear(&w, None).unwrap().gelu().unwrap();
        assert_eq!(bits(&got), bits(&want));
        let zero = Tensor::zeros(ctx, &[9]).unwrap();
        let fused = x.linear_gelu(&w, Some(&zero)).unwrap().to_vec().unwrap();
        assert_close(
            ctx,
            "linear_gelu with a zero bias",
            &fused,
            &want.to_vec().unwrap(),
            GATE,
        );
    });
}

#[test]
fn tensor_api_write_overwrites_in_place() {
    every_context(|ctx| {
        let mut rng = Rng::new(107);
        for n in [1usize, 255, 256, 257, 1001] {
            let x = Tensor::zeros(ctx, &[n]).unwrap();
            let view = x.clone(); // shares the buffer
            let v = rng.vec_range(n, -1.0, 1.0);
            x.write(&v).unwrap();
            assert_eq!(view.to_vec().unwrap(), v, "write n={n}");
        }
        // Into views: a row (dense from an offset), a row through a transpose, a column
        // (strided: uploaded, then copied in).
        let m = Tensor::zeros(ctx, &[3, 4]).unwrap();
        m.narrow(0, 1, 2).unwrap().write(&[1., 2., 3., 4.]).unwrap();
        m.transpose(0, 1)
            .unwrap()
            .narrow(1, 2, 3)
            .unwrap()
            .write(&[5., 6., 7., 8.])
            .unwrap();
        m.narrow(1, 3, 4).unwrap().write(&[10., 11., 12.]).unwrap();
        assert_eq!(
            m.to_vec().unwrap(),
            vec![0., 0., 0., 10., 1., 2., 3., 11., 5., 6., 7., 12.]
        );
        // Errors: a wrong length, a half tensor.
        assert!(matches!(m.write(&[1., 2.]), Err(Error::Value { arg: "data", .. })));
        let h = Tensor::from_slice_as(ctx, &[2], &[1., 2.], DType::F16).unwrap();
        assert!(matches!(h.write(&[1., 2.]), Err(Error::DType { .. })));
    });
}

#[test]
fn tensor_api_write_feeds_a_plan_and_results_wait_for_its_replay() {
    each_adapter(|ctx| {
        let x = Tensor::randn(ctx, &[4, 67], 11).unwrap();
        let w = Tensor::randn(ctx, &[134, 3], 12).unwrap();
        // Scalar operands, cat, where_ and sum_all inside a capture: none of them uploads.
        let f = |x: &Tensor| {
            let s = x.softplus()?.add_scalar(1.0)?;
            let c = Tensor::cat(&[&s, &x.where_(&x.gt_scalar(0.0)?, &s)?], 1)?; // (4, 134)
            c.matmul(&w)?.add(&x.sum_all()?)
        };
        let (plan, y) = Plan::capture(ctx, &[&x, &w], || f(&x)).unwrap();
        // Nothing computed yet: an error naming the cause, not the pool's leftovers.
        match y.to_vec() {
            Err(Error::Unsupported { op, message }) => {
                assert_eq!(op, "Tensor::to_vec");
                assert!(message.contains("replay"), "{message}");
            }
            other => panic!("reading before the first replay gave {other:?}"),
        }
        assert!(y.reshape(&[12]).unwrap().to_vec().is_err(), "a view of the result too");
        plan.replay(ctx).unwrap();
        assert_close(
            ctx,
            "replay",
            &y.to_vec().unwrap(),
            &f(&x).unwrap().to_vec().unwrap(),
            GATE,
        );
        for seed in [13, 14] {
            let v = Tensor::randn(ctx, &[4, 67], seed).unwrap().to_vec().unwrap();
            x.write(&v).unwrap();
            plan.replay(ctx).unwrap();
            let want = f(&Tensor::from_slice(ctx, &[4, 67], &v).unwrap()).unwrap();
            assert_close(
                ctx,
                "replay after write",
                &y.to_vec().unwrap(),
                &want.to_vec().unwrap(),
                GATE,
            );
        }
        // A write inside a capture cannot be replayed: the capture fails and says so.
        let err = Plan::capture(ctx, &[&x], || x.write(&vec![0.0; 4 * 67])).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Unsupported {
                    op: "Plan::capture",
                    ..
                }
            ),
            "{err}"
        );
    });
}

#[test]
fn tensor_api_random_tensors_are_seeded() {
    every_context(|ctx| {
        let a = Tensor::rand(ctx, &[3, 1001], 5).unwrap().to_vec().unwrap();
        assert_eq!(a, Tensor::rand(ctx, &[3, 1001], 5).unwrap().to_vec().unwrap());
        assert_ne!(a, Tensor::rand(ctx, &[3, 1001], 6).unwrap().to_vec().unwrap());
        assert!(a.iter().all(|v| (0.0..1.0).contains(v)));
        let mean = a.iter().map(|&v| v as f64).sum::<f64>() / a.len() as f64;
        assert!((mean - 0.5).abs() < 0.03, "uniform mean {mean}");
        let z = Tensor::randn(ctx, &[100_000], 9).unwrap().to_vec().unwrap();
        let m = z.iter().map(|&v| v as f64).sum::<f64>() / z.len() as f64;
        let var = z.iter().map(|&v| (v as f64 - m).powi(2)).sum::<f64>() / z.len() as f64;
        assert!(
            m.abs() < 0.02 && (var - 1.0).abs() < 0.02,
            "normal mean {m} variance {var}"
        );
        // The same values on every context: drawn on the host from the one generator.
        let r = wgsl_compute::Rng::new(9).vec_normal(8, 1.0);
        assert_eq!(&z[..8], &r[..]);
    });
}

#[test]
fn tensor_api_reexports_are_the_crates_own() {
    // One name for one type: the op vocabulary is `expr`'s, reached from the crate root.
    let _: wgsl_compute::expr::Binary = Binary::Add;
    let _: wgsl_compute::expr::Unary = Unary::Softplus;
    // The dependencies at the versions the engine uses.
    let a: wgsl_compute::ndarray::ArrayD<f32> = wgsl_compute::ndarray::ArrayD::zeros(IxDyn(&[2]));
    let ctx = Context::cpu();
    assert_eq!(Tensor::from_array(&ctx, &a).unwrap().to_vec().unwrap(), vec![0.0, 0.0]);
    let v = wgsl_compute::pollster::block_on(Tensor::zeros(&ctx, &[1]).unwrap().to_vec_async()).unwrap();
    assert_eq!(v, vec![0.0]);
    let _usage: wgsl_compute::wgpu::BufferUsages = wgsl_compute::wgpu::BufferUsages::STORAGE;
}

#[test]
fn tensor_api_sin_and_cos_are_functions_and_methods_as_every_float_unary() {
    // One table (expr::float_unaries) names the ops, the Tensor methods and the Var methods.
    let mut rng = Rng::new(31);
    let x = random(&mut rng, &[5, 7], -3.0, 3.0);
    let host: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    every_context(|ctx| {
        let t = Tensor::from_array(ctx, &x).unwrap();
        let want_sin = to_f32(host.iter().map(|v| v.sin()));
        let want_cos = to_f32(host.iter().map(|v| v.cos()));
        let gate = Gate::new(1e-5, 1e-5);
        assert_close(ctx, "Tensor::sin", &t.sin().unwrap().to_vec().unwrap(), &want_sin, gate);
        assert_close(
            ctx,
            "ops::cos",
            &ops::cos(&t).unwrap().to_vec().unwrap(),
            &want_cos,
            gate,
        );
        let v = Var::constant(&t).cos().unwrap();
        assert_close(ctx, "Var::cos", &v.tensor().to_vec().unwrap(), &want_cos, gate);
    });
}
