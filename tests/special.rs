//! Issue 32's wrong answers and special values, on the CPU context and every adapter: argmax
//! (NaN wins, first index on ties, always inside the row), layer norm on rows near f32::MAX,
//! NaN through tanh and sigmoid, `pow` with powf's special values (elementwise, both kernel
//! forms, and in element scans), and half patterns kept bit for bit. Inputs are built from
//! bit patterns, and every expected value is written here, not taken from the reference.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::element_scan::{Body, ElementScan, ElementScanOptions, Ty};
use wgsl_compute::ops;
use wgsl_compute::{reference, Context, DType, Tensor};
use wgsl_compute::{Binary, Unary};

use crate::common::each_adapter;

/// The CPU context, then every adapter.
fn each_context(mut f: impl FnMut(&Context)) {
    f(&Context::cpu());
    each_adapter(f);
}

fn name(ctx: &Context) -> String {
    format!("{} ({:?})", ctx.info().name, ctx.info().backend)
}

/// A quiet NaN, a negative one with a payload and a signalling one, by bits.
const NANS: [u32; 3] = [0x7fc0_0000, 0xffc0_0123, 0x7f80_0001];

/// The torch rule, written out: the first NaN if any, else the first maximum.
fn argmax_torch(row: &[f32]) -> f32 {
    if let Some(i) = row.iter().position(|v| v.is_nan()) {
        return i as f32;
    }
    let mut best = 0;
    for (i, &v) in row.iter().enumerate() {
        if v > row[best] {
            best = i;
        }
    }
    best as f32
}

#[test]
fn special_argmax_is_in_range_and_nan_wins() {
    let nan = f32::from_bits(NANS[0]);
    let neg_nan = f32::from_bits(NANS[1]);
    let inf = f32::INFINITY;
    let rows: Vec<Vec<f32>> = vec![
        vec![-inf, -inf],
        vec![-f32::MAX, -f32::MAX],
        vec![-3.2e38, -3.1e38],
        vec![-inf],
        vec![1.0, nan, 3.0, inf],
        vec![1.0, 3.0, inf, nan],
        vec![5.0, neg_nan, 7.0],
        vec![nan, nan],
        vec![-0.0, 0.0],
        vec![0.0, -0.0],
        vec![-inf, -f32::MAX, -inf],
        vec![f32::MIN_POSITIVE / 4.0, f32::MIN_POSITIVE / 2.0],
    ];
    // Long rows: several columns per invocation, NaN and ties across invocations.
    let mut long = vec![vec![-inf; 1000]];
    let mut r = vec![-1.0f32; 300];
    r[290] = f32::from_bits(NANS[2]);
    r[280] = nan;
    r[7] = inf;
    long.push(r);
    let mut r = vec![-f32::MAX; 513];
    r[300] = 2.0;
    r[257] = 2.0;
    long.push(r);
    each_context(|ctx| {
        for row in rows.iter().chain(&long) {
            let t = Tensor::from_slice(ctx, &[1, row.len()], row).unwrap();
            let got = ops::argmax_last(&t).unwrap().to_vec().unwrap();
            let want = argmax_torch(row);
            let show: Vec<f32> = row.iter().copied().take(6).collect();
            assert_eq!(got, [want], "argmax of {show:?} (len {}) on {}", row.len(), name(ctx));
        }
        // Every row of one batch, so rows share a dispatch.
        let cols = 4;
        let batch: Vec<Vec<f32>> = rows.iter().filter(|r| r.len() <= cols).cloned().collect();
        let mut flat = vec![];
        for r in &batch {
            let mut padded = r.clone();
            padded.resize(cols, -inf);
            flat.extend(padded);
        }
        let t = Tensor::from_slice(ctx, &[batch.len(), cols], &flat).unwrap();
        let got = ops::argmax_last(&t).unwrap().to_vec().unwrap();
        let want: Vec<f32> = flat.chunks(cols).map(argmax_torch).collect();
        assert_eq!(got, want, "batched argmax on {}", name(ctx));
    });
    // GPT-2's host greedy pick follows the same rule.
    for row in rows.iter().chain(&long) {
        assert_eq!(wgsl_compute::generate::argmax(row) as f32, argmax_torch(row), "{row:?}");
    }
}

/// Layer norm of one row in f64, written out (gamma 1, beta 0 unless given).
fn layer_norm_row(row: &[f32], gamma: &[f32], beta: &[f32], eps: f64) -> Vec<f32> {
    let n = row.len() as f64;
    let mean = row.iter().map(|&v| v as f64).sum::<f64>() / n;
    let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
    let rstd = 1.0 / (var + eps).sqrt();
    row.iter()
        .enumerate()
        .map(|(c, &v)| ((v as f64 - mean) * rstd * gamma[c] as f64 + beta[c] as f64) as f32)
        .collect()
}

#[test]
fn special_layer_norm_does_not_overflow_near_f32_max() {
    let mut rng = wgsl_compute::check::Rng::new(3201);
    let mut rows: Vec<Vec<f32>> = vec![
        vec![1e30, -1e30],
        vec![3e19, -3e19],
        vec![f32::MAX, -f32::MAX],
        vec![f32::MAX, f32::MAX],
        vec![-f32::MAX, f32::MAX, 0.0],
        vec![1e-30, -1e-30, 0.5],
    ];
    // A long row of huge values, and one mixing huge and ordinary magnitudes.
    rows.push(rng.vec_range(300, -3e38, 3e38));
    let mut mixed = rng.vec_range(517, -1.0, 1.0);
    mixed[3] = 2e37;
    mixed[400] = -3e37;
    rows.push(mixed);
    let gate = wgsl_compute::check::Gate::new(1e-5, 1e-4);
    each_context(|ctx| {
        for row in &rows {
            let n = row.len();
            let g = rng.vec_range(n, 0.5, 1.5);
            let b = rng.vec_range(n, -1.0, 1.0);
            let want = layer_norm_row(row, &g, &b, 1e-5);
            let t = |v: &[f32], s: &[usize]| Tensor::from_slice(ctx, s, v).unwrap();
            let got = ops::layer_norm(&t(row, &[1, n]), &t(&g, &[n]), &t(&b, &[n]), 1e-5)
                .unwrap()
                .to_vec()
                .unwrap();
            let show: Vec<f32> = row.iter().copied().take(4).collect();
            crate::common::assert_close(ctx, &format!("layer_norm of {show:?} (len {n})"), &got, &want, gate);
        }
        // The fused residual + layer norm: y = residual + x @ w + bias, h = layer_norm(y).
        let (m, k, n) = (2, 3, 8);
        let x = rng.vec_range(m * k, -1.0, 1.0);
        let w = rng.vec_range(k * n, -1.0, 1.0);
        let bias = rng.vec_range(n, -1.0, 1.0);
        let residual: Vec<f32> = (0..m * n)
            .map(|i| if i % 2 == 0 { 1e30 } else { -2e30 } * (1.0 + i as f32 / 16.0))
            .collect();
        let (g, b) = (rng.vec_range(n, 0.5, 1.5), rng.vec_range(n, -1.0, 1.0));
        let t = |v: &[f32], s: &[usize]| Tensor::from_slice(ctx, s, v).unwrap();
        let (y, h) = ops::linear_residual_layer_norm(
            &t(&x, &[m, k]),
            &t(&w, &[k, n]),
            &t(&bias, &[n]),
            &t(&residual, &[m, n]),
            &t(&g, &[n]),
            &t(&b, &[n]),
            1e-5,
        )
        .unwrap();
        let y = y.to_vec().unwrap();
        let want: Vec<f32> = y.chunks(n).flat_map(|r| layer_norm_row(r, &g, &b, 1e-5)).collect();
        crate::common::assert_close(
            ctx,
            "residual layer_norm of rows near 1e30",
            &h.to_vec().unwrap(),
            &want,
            gate,
        );
    });
}

/// RMS norm of rows up to f32::MAX stays finite and exact to f32 rounding: the kernel scales
/// each row by a power of two before squaring.
#[test]
fn special_rms_norm_does_not_overflow_near_f32_max() {
    let mut rng = wgsl_compute::check::Rng::new(3202);
    let mut rows: Vec<Vec<f32>> = vec![
        vec![1e30, -1e30],
        vec![f32::MAX, -f32::MAX],
        vec![1e37, 3e37, -2e37],
        vec![1e-30, -1e-30, 0.5],
        vec![0.0, 0.0, 0.0],
    ];
    rows.push(rng.vec_range(300, -3e38, 3e38));
    let mut mixed = rng.vec_range(517, -1.0, 1.0);
    mixed[3] = 2e37;
    rows.push(mixed);
    let gate = wgsl_compute::check::Gate::new(1e-5, 1e-4);
    each_context(|ctx| {
        for row in &rows {
            let n = row.len();
            let w = rng.vec_range(n, 0.5, 1.5);
            let ms = row.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / n as f64;
            let rstd = 1.0 / (ms + 1e-5).sqrt();
            let want: Vec<f32> = row
                .iter()
                .zip(&w)
                .map(|(&v, &g)| (v as f64 * rstd * g as f64) as f32)
                .collect();
            let t = |v: &[f32], s: &[usize]| Tensor::from_slice(ctx, s, v).unwrap();
            let got = ops::rms_norm(&t(row, &[1, n]), &t(&w, &[n]), 1e-5)
                .unwrap()
                .to_vec()
                .unwrap();
            let show: Vec<f32> = row.iter().copied().take(4).collect();
            crate::common::assert_close(ctx, &format!("rms_norm of {show:?} (len {n})"), &got, &want, gate);
        }
    });
}

/// NaN and infinities through RMS norm and rotary embedding give the f64 reference's classes
/// on the CPU context and every adapter: NaN where it is NaN, the same infinity where it is
/// infinite, the finite values within f32 rounding. An infinite entry makes its row's rstd 0,
/// so that entry is inf * 0 = NaN and the rest of the row 0.
#[test]
fn special_rms_norm_and_rope_keep_nan_and_infinities() {
    let same = |ctx: &Context, what: &str, got: &[f32], want: &[f32]| {
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            let ok = if w.is_nan() {
                g.is_nan()
            } else if w.is_infinite() {
                g == w
            } else {
                (g - w).abs() <= 1e-5 * (1.0 + w.abs())
            };
            assert!(ok, "{what} on {}: [{i}] = {g}, the reference {w}", ctx.info().name);
        }
    };
    let rows: [&[f32]; 4] = [
        &[f32::NAN, 1.0, 2.0, -3.0],
        &[f32::INFINITY, 1.0, 2.0, 0.5],
        &[-f32::INFINITY, 0.25, 0.0, 1.0],
        &[f32::MAX, 1.0, -f32::MAX, 2.0],
    ];
    let w = [0.5f32, 1.5, 1.0, 2.0];
    each_context(|ctx| {
        let t = |v: &[f32], s: &[usize]| Tensor::from_slice(ctx, s, v).unwrap();
        for row in rows {
            let x = ArrayD::from_shape_vec(IxDyn(&[1, 4]), row.to_vec()).unwrap();
            let wa = ArrayD::from_shape_vec(IxDyn(&[4]), w.to_vec()).unwrap();
            let want: Vec<f32> = reference::nn::rms_norm(&x.view(), &wa.view(), 1e-5)
                .unwrap()
                .iter()
                .copied()
                .collect();
            let got = ops::rms_norm(&t(row, &[1, 4]), &t(&w, &[4]), 1e-5)
                .unwrap()
                .to_vec()
                .unwrap();
            same(ctx, &format!("rms_norm of {row:?}"), &got, &want);
            // One position, one head of D = 4: each entry meets its partner half a head away.
            let (cos, sin) = ([0.5f32, -0.25, 0.5, -0.25], [0.75f32, 1.0, 0.75, 1.0]);
            for adjoint in [false, true] {
                let want = reference::nn::rope(row, &cos, &sin, [1, 1, 4], adjoint);
                let (x, c, s) = (t(row, &[1, 1, 4]), t(&cos, &[1, 4]), t(&sin, &[1, 4]));
                let got = match adjoint {
                    false => ops::rope(&x, &c, &s),
                    true => ops::rope_adjoint(&x, &c, &s),
                };
                same(
                    ctx,
                    &format!("rope (adjoint {adjoint}) of {row:?}"),
                    &got.unwrap().to_vec().unwrap(),
                    &want,
                );
            }
        }
    });
}

/// A tensor from bit patterns, on `ctx`, of shape (n,) or, with `strided`, a non-dense view
/// of them (column 0 of (n, 2)): the scalar form of the fused kernel instead of the vec4 one.
fn from_bits(ctx: &Context, bits: &[u32], strided: bool) -> Tensor {
    let v: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
    if !strided {
        return Tensor::from_slice(ctx, &[v.len()], &v).unwrap();
    }
    let wide: Vec<f32> = v.iter().flat_map(|&x| [x, 1.5]).collect();
    let t = Tensor::from_slice(ctx, &[v.len(), 2], &wide).unwrap();
    t.narrow(1, 0, 1).unwrap()
}

/// got matches want: NaN for NaN, exact bits for infinities and zeros (signs included),
/// within `rtol` otherwise (with an absolute floor of 1e-30 for results near zero).
#[track_caller]
fn assert_special(ctx: &Context, what: &str, got: &[f32], want: &[f32], rtol: f32) {
    assert_eq!(got.len(), want.len());
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() || w == 0.0 {
            g.to_bits() == w.to_bits()
        } else {
            (g - w).abs() <= rtol * w.abs() + 1e-30
        };
        assert!(
            ok,
            "{what}[{i}] on {}: got {g:e} ({:#x}), want {w:e} ({:#x})",
            name(ctx),
            g.to_bits(),
            w.to_bits()
        );
    }
}

#[test]
fn special_nan_passes_through_unary_ops() {
    let mut bits: Vec<u32> = NANS.to_vec();
    bits.extend([
        0x7f80_0000,
        0xff80_0000,
        0x0000_0000,
        0x8000_0000,
        0x3f00_0000,
        0xbf80_0000,
    ]);
    bits.extend(NANS); // eleven values: a vec4 form with a tail
                       // sqrt and log only inside their domain (NaN, positive values, +inf).
    let mut positive: Vec<u32> = NANS.to_vec();
    positive.extend([0x7f80_0000, 0x3f00_0000, 0x4000_0000, 0x7f7f_ffff, 0x0080_0000]);
    let ops_list = [
        Unary::Tanh,
        Unary::Sigmoid,
        Unary::Exp,
        Unary::Neg,
        Unary::Abs,
        Unary::Sqrt,
        Unary::Log,
    ];
    each_context(|ctx| {
        for strided in [false, true] {
            for op in ops_list {
                let bits = if matches!(op, Unary::Sqrt | Unary::Log) {
                    &positive
                } else {
                    &bits
                };
                let x = from_bits(ctx, bits, strided);
                let got = ops::unary(op, &x).unwrap().to_vec().unwrap();
                let want: Vec<f32> = bits.iter().map(|&b| op.eval(f32::from_bits(b) as f64) as f32).collect();
                // tanh and sigmoid saturate: 1e-6 of absolute slack for sigmoid(-inf) = 0.
                let got: Vec<f32> = got
                    .iter()
                    .zip(&want)
                    .map(|(&g, &w)| if w == 0.0 && g.abs() < 1e-6 { w } else { g })
                    .collect();
                assert_special(ctx, &format!("{op:?} (strided {strided})"), &got, &want, 1e-5);
            }
        }
    });
}

/// (x, y) pairs covering every special case of powf.
fn pow_cases() -> Vec<(f32, f32)> {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    vec![
        (0.0, 0.0),
        (inf, 0.0),
        (nan, 0.0),
        (-2.0, 2.0),
        (1.0, nan),
        (nan, -0.0),
        (1.0, inf),
        (1.0, -inf),
        (-1.0, inf),
        (-1.0, -inf),
        (0.5, inf),
        (2.0, inf),
        (0.5, -inf),
        (2.0, -inf),
        (-0.5, inf),
        (-2.0, -inf),
        (0.0, 3.0),
        (-0.0, 3.0),
        (-0.0, 2.0),
        (0.0, -3.0),
        (-0.0, -3.0),
        (-0.0, -2.0),
        (0.0, -0.5),
        (-0.0, 0.5),
        (inf, 2.0),
        (inf, -2.0),
        (-inf, 3.0),
        (-inf, 2.0),
        (-inf, -3.0),
        (-inf, -2.0),
        (-inf, 0.5),
        (-2.0, 3.0),
        (-2.0, -3.0),
        (-2.0, 0.5),
        (-8.0, 1.0 / 3.0),
        (2.0, 10.0),
        (3.0, -2.0),
        (nan, 1.0),
        (2.0, nan),
        (-1.0, 33_554_432.0),
        (-3.0, 16_777_215.0),
        (-2.0, 1e10),
        (-0.5, 1e10),
        (1e30, 2.0),
        (2.0, 0.5),
        (10.0, -30.0),
        (-1.5, 7.0),
    ]
}

#[test]
fn special_pow_follows_powf() {
    let cases = pow_cases();
    let xb: Vec<u32> = cases.iter().map(|c| c.0.to_bits()).collect();
    let yb: Vec<u32> = cases.iter().map(|c| c.1.to_bits()).collect();
    let want: Vec<f32> = cases.iter().map(|&(x, y)| (x as f64).powf(y as f64) as f32).collect();
    // powf in f32 agrees with the f64 reference on every case.
    for (&(x, y), &w) in cases.iter().zip(&want) {
        let f = x.powf(y);
        assert!(
            f.to_bits() == w.to_bits() || (f.is_nan() && w.is_nan()) || (f - w).abs() <= 1e-6 * w.abs(),
            "powf({x}, {y})"
        );
    }
    each_context(|ctx| {
        for strided in [false, true] {
            let got = ops::binary(
                Binary::Pow,
                &from_bits(ctx, &xb, strided),
                &from_bits(ctx, &yb, strided),
            )
            .unwrap()
            .to_vec()
            .unwrap();
            // WGSL's pow is exp2(y log2 x): 1e-4 relative on the finite results.
            assert_special(ctx, &format!("pow (strided {strided})"), &got, &want, 1e-4);
        }
    });
}

#[test]
fn special_pow_and_tanh_in_element_scans() {
    // h' = pow(x, y) + 0 * h would fold NaN in from h; the body ignores h by design: each
    // trip's state is pow of that trip's inputs. Then a second body: h' = tanh(x).
    let cases = pow_cases();
    let t = cases.len();
    let x = ArrayD::from_shape_vec(IxDyn(&[t, 1]), cases.iter().map(|c| c.0).collect()).unwrap();
    let y = ArrayD::from_shape_vec(IxDyn(&[t, 1]), cases.iter().map(|c| c.1).collect()).unwrap();
    let want: Vec<f32> = cases.iter().map(|&(x, y)| (x as f64).powf(y as f64) as f32).collect();
    let mut b = Body::builder(&[Ty::F32, Ty::F32, Ty::F32]);
    let (xp, yp) = (b.param(1), b.param(2));
    let p = b.binary(Binary::Pow, xp, yp).unwrap();
    let body = b.finish(p).unwrap();
    let scan = ElementScan::from_body(
        body,
        ElementScanOptions::default(),
        ArrayD::from_elem(IxDyn(&[1]), 0.25),
        vec![x.clone(), y],
    )
    .unwrap();
    let nan_x = ArrayD::from_shape_vec(
        IxDyn(&[4, 1]),
        vec![f32::from_bits(NANS[0]), f32::from_bits(NANS[1]), f32::INFINITY, -1.0],
    )
    .unwrap();
    let mut b = Body::builder(&[Ty::F32, Ty::F32]);
    let xp = b.param(1);
    let th = b.unary(wgsl_compute::Unary::Tanh, xp).unwrap();
    let body = b.finish(th).unwrap();
    let tanh_scan = ElementScan::from_body(
        body,
        ElementScanOptions::default(),
        ArrayD::zeros(IxDyn(&[1])),
        vec![nan_x],
    )
    .unwrap();
    let tanh_want = [f32::NAN, f32::NAN, 1.0, (-1f64).tanh() as f32];
    each_context(|ctx| {
        let got = scan.run(ctx).unwrap().to_vec().unwrap();
        assert_special(ctx, "element-scan pow", &got, &want, 1e-4);
        let got = tanh_scan.run(ctx).unwrap().to_vec().unwrap();
        assert_special(ctx, "element-scan tanh", &got, &tanh_want, 1e-6);
    });
}

#[test]
fn special_half_patterns_round_trip_bit_for_bit() {
    // Every NaN pattern (signalling ones included) and a sweep of the others.
    let all: Vec<u16> = (0..=u16::MAX).collect();
    each_context(|ctx| {
        for dtype in [DType::F16, DType::BF16] {
            let t = Tensor::from_halves(ctx, &[all.len()], dtype, &all).unwrap();
            let back = t.to_halves().unwrap();
            let bad: Vec<(u16, u16)> = all
                .iter()
                .zip(&back)
                .filter(|(a, b)| a != b)
                .map(|(a, b)| (*a, *b))
                .take(5)
                .collect();
            assert!(
                bad.is_empty(),
                "{dtype} patterns on {} come back changed: {bad:x?}",
                name(ctx)
            );
        }
    });
}

#[test]
fn special_argmax_reference_matches_the_rule() {
    // The reference the CPU context runs, on rows with NaN, ties and infinities.
    let nan = f32::NAN;
    for row in [
        vec![1.0, nan, 3.0, f32::INFINITY],
        vec![2.0, 2.0],
        vec![-f32::INFINITY; 3],
        vec![0.0, nan, nan],
    ] {
        let a = ArrayD::from_shape_vec(IxDyn(&[1, row.len()]), row.clone()).unwrap();
        let got = reference::nn::argmax_last(&a.view());
        assert_eq!(got.iter().copied().collect::<Vec<_>>(), [argmax_torch(&row)], "{row:?}");
    }
}

#[test]
fn special_nan_passes_through_maximum_and_minimum() {
    // torch's maximum / minimum: a NaN operand gives NaN, whichever side it is on.
    let nan = f32::from_bits(NANS[1]);
    let (inf, big) = (f32::INFINITY, f32::MAX);
    let pairs = [
        (nan, 1.0),
        (1.0, nan),
        (nan, nan),
        (-inf, nan),
        (nan, inf),
        (big, -big),
        (-inf, inf),
        (2.0, -3.0),
        (-0.5, 0.25),
    ];
    let xb: Vec<u32> = pairs.iter().map(|p| p.0.to_bits()).collect();
    let yb: Vec<u32> = pairs.iter().map(|p| p.1.to_bits()).collect();
    let propagate = |x: f32, y: f32, f: fn(f32, f32) -> f32| if x.is_nan() || y.is_nan() { f32::NAN } else { f(x, y) };
    each_context(|ctx| {
        for strided in [false, true] {
            let (x, y) = (from_bits(ctx, &xb, strided), from_bits(ctx, &yb, strided));
            for (op, f) in [(Binary::Max, f32::max as fn(f32, f32) -> f32), (Binary::Min, f32::min)] {
                let got = ops::binary(op, &x, &y).unwrap().to_vec().unwrap();
                let want: Vec<f32> = pairs.iter().map(|&(a, b)| propagate(a, b, f)).collect();
                assert_special(ctx, &format!("{op:?} (strided {strided})"), &got, &want, 0.0);
            }
        }
    });
}

#[test]
fn special_nan_passes_through_the_max_reduction_of_a_body() {
    // h' = splat(max over x's four components): NaN in any component gives NaN.
    let nan = f32::from_bits(NANS[0]);
    let inf = f32::INFINITY;
    let rows = [
        [1.0, nan, 3.0, 2.0],
        [nan, 1.0, inf, -inf],
        [1.0, 5.0, 3.0, 2.0],
        [-inf, -inf, -inf, -inf],
        [2.0, 3.0, 4.0, nan],
    ];
    let v = Ty::vector(4);
    let mut b = Body::builder(&[v, v]);
    let x = b.param(1);
    let m = b.reduce(wgsl_compute::element_scan::Reduce::Max, x, true).unwrap();
    let r = b.splat(m, 4).unwrap();
    let body = b.finish(r).unwrap();
    let seq: Vec<f32> = rows.iter().flatten().copied().collect();
    let opts = ElementScanOptions {
        axis: 0,
        vector_state: true,
        reverse: false,
    };
    let scan = ElementScan::from_body(
        body,
        opts,
        ArrayD::zeros(IxDyn(&[1, 4])),
        vec![ArrayD::from_shape_vec(IxDyn(&[rows.len(), 1, 4]), seq).unwrap()],
    )
    .unwrap();
    let want: Vec<f32> = rows
        .iter()
        .flat_map(|r| {
            let m = if r.iter().any(|v| v.is_nan()) {
                f32::NAN
            } else {
                r.iter().copied().fold(f32::NEG_INFINITY, f32::max)
            };
            [m; 4]
        })
        .collect();
    each_context(|ctx| {
        let got = scan.run(ctx).unwrap().to_vec().unwrap();
        assert_special(ctx, "max reduction in a body", &got, &want, 0.0);
    });
}

#[test]
fn special_sin_cos_in_element_scans_hold_wgsl_accuracy_on_minus_pi_to_pi() {
    // The range where docs/src/ops.md states the accuracy: WGSL's sin and cos have an absolute
    // error of at most 2^-11 on [-pi, pi]. Endpoints, zero and a seeded sweep.
    let pi = std::f32::consts::PI;
    let mut xs = vec![-pi, pi, 0.0, -0.0, pi / 2.0, -pi / 2.0];
    xs.extend(wgsl_compute::check::Rng::new(3209).vec_range(250, -pi as f64, pi as f64));
    let t = xs.len();
    let seq = ArrayD::from_shape_vec(IxDyn(&[t, 1]), xs.clone()).unwrap();
    for op in [wgsl_compute::Unary::Sin, wgsl_compute::Unary::Cos] {
        let mut b = Body::builder(&[Ty::F32, Ty::F32]);
        let x = b.param(1);
        let r = b.unary(op, x).unwrap();
        let body = b.finish(r).unwrap();
        let scan = ElementScan::from_body(
            body,
            ElementScanOptions::default(),
            ArrayD::zeros(IxDyn(&[1])),
            vec![seq.clone()],
        )
        .unwrap();
        let want: Vec<f32> = xs.iter().map(|&x| op.eval(x as f64) as f32).collect();
        each_context(|ctx| {
            let got = scan.run(ctx).unwrap().to_vec().unwrap();
            let gate = wgsl_compute::check::Gate::new(1.0 / 2048.0, 0.0);
            crate::common::assert_close(ctx, &format!("{op:?} on [-pi, pi]"), &got, &want, gate);
        });
    }
}
