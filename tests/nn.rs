//! GELU and the fused elementwise graphs, softmax, layer norm (alone and fused after a
//! projection's residual add), argmax, embedding, attention and copy_into against the f64
//! reference.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::ops::AttentionPath;
use wgsl_compute::{fused, ops, reference, Context, DType, Tensor};

use crate::common::{assert_close, each_adapter, each_adapter_alone};

const GATE: Gate = Gate::new(1e-5, 1e-4);

fn random(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> ArrayD<f32> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, lo, hi)).unwrap()
}

fn flat(a: &ArrayD<f32>) -> Vec<f32> {
    a.iter().copied().collect()
}

#[test]
fn gelu_and_fused_graphs_are_one_launch_each() {
    each_adapter_alone(|ctx| {
        let mut rng = Rng::new(71);
        for n in [1usize, 15, 255, 256, 257, 1000, 70_001] {
            let x = random(&mut rng, &[n], -6.0, 6.0);
            let got = ops::gelu(&Tensor::from_array(ctx, &x).unwrap()).unwrap();
            assert_close(
                ctx,
                &format!("gelu {n}"),
                &got.to_vec().unwrap(),
                &flat(&reference::nn::gelu(&x.view())),
                GATE,
            );
        }
        // bias + GELU with the bias broadcast over rows, on a transposed view.
        let x = random(&mut rng, &[17, 63], -3.0, 3.0);
        let b = random(&mut rng, &[17], -1.0, 1.0);
        let tx = Tensor::from_array(ctx, &x).unwrap().transpose(0, 1).unwrap(); // (63, 17)
        let got = fused::run(&fused::bias_gelu_graph(), &[&tx, &Tensor::from_array(ctx, &b).unwrap()]).unwrap();
        let want = reference::nn::gelu(&(&x.t() + &b).into_dyn().view());
        assert_eq!(got.shape(), &[63, 17]);
        assert_close(ctx, "bias_gelu", &got.to_vec().unwrap(), &flat(&want), GATE);
        // Residual add with the bias folded in.
        let (r, y, bb) = (
            random(&mut rng, &[5, 33], -1.0, 1.0),
            random(&mut rng, &[5, 33], -1.0, 1.0),
            random(&mut rng, &[33], -1.0, 1.0),
        );
        let ts: Vec<Tensor> = [&r, &y, &bb]
            .iter()
            .map(|a| Tensor::from_array(ctx, *a).unwrap())
            .collect();
        let before = ctx.pipelines_built();
        let got = fused::run(&fused::residual_bias_graph(), &[&ts[0], &ts[1], &ts[2]]).unwrap();
        assert_close(ctx, "residual", &got.to_vec().unwrap(), &flat(&(&r + &y + &bb)), GATE);
        // Same graph, another shape: the cached pipeline serves it (shapes are in the uniform).
        let built = ctx.pipelines_built();
        assert!(built <= before + 2, "at most the graph's kernel and a copy were built");
        let (r2, y2) = (ts[0].narrow(0, 1, 4).unwrap(), ts[1].narrow(0, 0, 3).unwrap());
        fused::run(&fused::residual_bias_graph(), &[&r2, &y2, &ts[2]]).unwrap();
        assert_eq!(ctx.pipelines_built(), built, "a second shape reuses the pipeline");
        let wgsl = fused::wgsl(&fused::gelu_graph()).unwrap();
        assert!(wgsl.contains("tanh") && wgsl.contains("fn main"), "{wgsl}");
        // Wrong number of inputs.
        let e = fused::run(&fused::gelu_graph(), &[&ts[0], &ts[1]])
            .unwrap_err()
            .to_string();
        assert!(e.contains("fused") && e.contains("inputs"), "{e}");
    });
}

#[test]
fn softmax_last_with_and_without_causal_mask() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(72);
        for shape in [
            &[1usize][..],
            &[3, 15],
            &[16, 16],
            &[2, 17, 17],
            &[63, 255],
            &[4, 256],
            &[2, 257],
            &[3, 1000],
        ] {
            // Large offsets: a naive exp would overflow; the max-subtracted one must not.
            let x = random(&mut rng, shape, -30.0, 60.0);
            let tx = Tensor::from_array(ctx, &x).unwrap();
            let cols = shape[shape.len() - 1];
            let rows_per = if shape.len() >= 2 { shape[shape.len() - 2] } else { 1 };
            for causal in [None, Some(0), Some(cols.saturating_sub(rows_per)), Some(3)] {
                let want = reference::nn::softmax_last(&x.view(), causal);
                let got = ops::softmax_last(&tx, causal).unwrap();
                assert_close(
                    ctx,
                    &format!("softmax {shape:?} {causal:?}"),
                    &got.to_vec().unwrap(),
                    &flat(&want),
                    GATE,
                );
            }
        }
        // A transposed view goes through a copy and still matches.
        let x = random(&mut rng, &[20, 9], -2.0, 2.0);
        let tx = Tensor::from_array(ctx, &x).unwrap().transpose(0, 1).unwrap();
        let want = reference::nn::softmax_last(&x.t().into_dyn().view(), Some(1));
        assert_close(
            ctx,
            "softmax view",
            &ops::softmax_last(&tx, Some(1)).unwrap().to_vec().unwrap(),
            &flat(&want),
            GATE,
        );
        let e = ops::softmax_last(&Tensor::zeros(ctx, &[]).unwrap(), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("softmax_last") && e.contains("rank >= 1"), "{e}");
    });
}

/// `ops::softmax_backward` against y (g - sum(g y)) in f64 on the host, at rows that are not
/// a multiple of a workgroup's rows, a masked (zero) upper triangle, and a transposed g.
#[test]
fn softmax_backward_matches_the_host_formula() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(73);
        for shape in [&[1usize][..], &[3, 15], &[33, 40], &[2, 17, 17], &[5, 300]] {
            let x = random(&mut rng, shape, -4.0, 4.0);
            let g = random(&mut rng, shape, -1.0, 1.0);
            let y = ops::softmax_last(&Tensor::from_array(ctx, &x).unwrap(), Some(0)).unwrap();
            let yv = y.to_vec().unwrap();
            let gv = flat(&g);
            let cols = shape[shape.len() - 1];
            let mut want = vec![0.0f32; yv.len()];
            for (r, (yr, gr)) in yv.chunks(cols).zip(gv.chunks(cols)).enumerate() {
                let s: f64 = yr.iter().zip(gr).map(|(&a, &b)| f64::from(a) * f64::from(b)).sum();
                for c in 0..cols {
                    want[r * cols + c] = (f64::from(yr[c]) * (f64::from(gr[c]) - s)) as f32;
                }
            }
            let got = ops::softmax_backward(&y, &Tensor::from_array(ctx, &g).unwrap()).unwrap();
            assert_close(
                ctx,
                &format!("softmax_backward {shape:?}"),
                &got.to_vec().unwrap(),
                &want,
                GATE,
            );
        }
        // g as a transposed view: copied first, the same result.
        let y = ops::softmax_last(
            &Tensor::from_array(ctx, &random(&mut rng, &[9, 9], -2.0, 2.0)).unwrap(),
            None,
        )
        .unwrap();
        let gt = Tensor::from_array(ctx, &random(&mut rng, &[9, 9], -1.0, 1.0)).unwrap();
        let dense = gt.transpose(0, 1).unwrap().contiguous().unwrap();
        assert_close(
            ctx,
            "softmax_backward of a view",
            &ops::softmax_backward(&y, &gt.transpose(0, 1).unwrap())
                .unwrap()
                .to_vec()
                .unwrap(),
            &ops::softmax_backward(&y, &dense).unwrap().to_vec().unwrap(),
            GATE,
        );
        let e = ops::softmax_backward(&y, &Tensor::zeros(ctx, &[9, 8]).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("softmax_backward") && e.contains("[9, 9]"), "{e}");
        // g from another context is an error, not a binding of a foreign buffer.
        let other = Tensor::zeros(&Context::cpu(), &[9, 9]).unwrap();
        let e = ops::softmax_backward(&y, &other).unwrap_err().to_string();
        assert!(e.contains("softmax_backward") && e.contains('g'), "{e}");
    });
}

/// `ops::softmax_backward` with NaN, +-inf and f32::MAX in g gives every adapter the CPU
/// context's answer: NaN where it has NaN, the same infinity, finite values within a gate
/// relative to the row's largest |g| (the row sum's order differs, and g - sum(g y) cancels).
#[test]
fn softmax_backward_keeps_nan_inf_and_max_as_the_cpu_does() {
    let (rows, cols) = (5, 37);
    let mut rng = Rng::new(74);
    let x = rng.vec_range(rows * cols, -3.0, 3.0);
    let mut g = rng.vec_range(rows * cols, -1.0, 1.0);
    g[3] = f32::NAN; // row 0
    g[cols + 1] = f32::INFINITY; // row 1
    g[2 * cols + 5] = f32::NEG_INFINITY; // row 2
    g[3 * cols] = f32::MAX; // row 3: sum(g y) finite, g - sum near MAX
    g[3 * cols + 1] = f32::MAX;
    for (j, v) in g[4 * cols..].iter_mut().enumerate() {
        // Row 4: +-MAX alternating, so g - sum(g y) overflows to +-inf away from any boundary.
        *v = if j % 2 == 0 { f32::MAX } else { -f32::MAX };
    }
    let run = |ctx: &Context| -> Vec<f32> {
        let y = ops::softmax_last(&Tensor::from_slice(ctx, &[rows, cols], &x).unwrap(), None).unwrap();
        let gt = Tensor::from_slice(ctx, &[rows, cols], &g).unwrap();
        ops::softmax_backward(&y, &gt).unwrap().to_vec().unwrap()
    };
    let want = run(&Context::cpu());
    each_adapter(|ctx| {
        let got = run(ctx);
        for (i, (&a, &b)) in got.iter().zip(&want).enumerate() {
            let row = &g[i / cols * cols..][..cols];
            let scale = row.iter().filter(|v| v.is_finite()).fold(1.0f32, |m, v| m.max(v.abs()));
            let same = (a.is_nan() && b.is_nan())
                || (a.is_infinite() && a == b)
                || (a.is_finite() && b.is_finite() && (a - b).abs() <= 1e-5 * (b.abs() + scale));
            assert!(
                same,
                "softmax_backward element {i} on {}: {a} against the CPU's {b}",
                ctx.info().name
            );
        }
    });
}

#[test]
fn layer_norm_over_awkward_rows() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(73);
        for shape in [
            &[1usize][..],
            &[2, 15],
            &[16, 16],
            &[3, 17],
            &[5, 63],
            &[2, 3, 768],
            &[1, 1000],
            &[4, 257],
        ] {
            // An offset mean checks the two-pass variance.
            let x = random(&mut rng, shape, 3.0, 5.0);
            let c = shape[shape.len() - 1];
            let (g, b) = (random(&mut rng, &[c], 0.5, 1.5), random(&mut rng, &[c], -1.0, 1.0));
            let want = reference::nn::layer_norm(&x.view(), &g.view(), &b.view(), 1e-5).unwrap();
            let got = ops::layer_norm(
                &Tensor::from_array(ctx, &x).unwrap(),
                &Tensor::from_array(ctx, &g).unwrap(),
                &Tensor::from_array(ctx, &b).unwrap(),
                1e-5,
            )
            .unwrap();
            // Normalised values are O(1) but 1/std amplifies f32 rounding of the centred x.
            assert_close(
                ctx,
                &format!("layer_norm {shape:?}"),
                &got.to_vec().unwrap(),
                &flat(&want),
                Gate::new(1e-4, 1e-4),
            );
        }
        let x = Tensor::zeros(ctx, &[2, 5]).unwrap();
        let e = ops::layer_norm(
            &x,
            &Tensor::zeros(ctx, &[4]).unwrap(),
            &Tensor::zeros(ctx, &[5]).unwrap(),
            1e-5,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("layer_norm") && e.contains("gamma") && e.contains("[4]"),
            "{e}"
        );
    });
}

/// The layer and RMS norms' one-launch backward against the f64 reference at awkward rows, a
/// half gamma, rows near f32::MAX (scaled like the forward, so they stay finite) and constant
/// rows of 1e30 (where the scaled eps underflows); a g of another shape is an error naming the
/// op.
#[test]
fn layer_norm_backward_matches_the_reference() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(74);
        for rms in [false, true] {
            for (shape, big, gamma_dtype) in [
                (&[1usize][..], 0.0, DType::F32),
                (&[3, 17], 0.0, DType::F32),
                (&[2, 3, 300], 0.0, DType::BF16),
                (&[5, 769], 0.0, DType::F16),
                (&[2, 40], 1e37, DType::F32),
                (&[3, 2], -1e30, DType::F32), // constant rows
            ] {
                // One column: the RMS norm's dx is rstd gw (1 - xhat^2) = rstd gw eps / (x^2 + eps),
                // all cancellation in f32 (the layer norm's is exactly 0).
                if rms && shape == [1] {
                    continue;
                }
                let mut x = random(&mut rng, shape, 3.0, 5.0);
                if big > 0.0 {
                    x.mapv_inplace(|v| v * big);
                } else if big < 0.0 {
                    x.fill(-big);
                }
                let c = shape[shape.len() - 1];
                let g = random(&mut rng, shape, -1.0, 1.0);
                let gamma = Tensor::from_array(ctx, &random(&mut rng, &[c], 0.5, 1.5))
                    .unwrap()
                    .to_dtype(gamma_dtype)
                    .unwrap();
                let gamma_host = gamma.to_array().unwrap();
                let (want_dx, want_gxhat) =
                    reference::nn::norm_backward(&x.view(), &gamma_host.view(), &g.view(), 1e-5, rms).unwrap();
                let backward = if rms {
                    ops::rms_norm_backward
                } else {
                    ops::layer_norm_backward
                };
                let (dx, gxhat) = backward(
                    &Tensor::from_array(ctx, &x).unwrap(),
                    &gamma,
                    &Tensor::from_array(ctx, &g).unwrap(),
                    1e-5,
                )
                .unwrap();
                let name = format!(
                    "{} {shape:?} gamma {gamma_dtype}{}",
                    if rms {
                        "rms_norm_backward"
                    } else {
                        "layer_norm_backward"
                    },
                    if big != 0.0 {
                        format!(" at {big:e}")
                    } else {
                        String::new()
                    }
                );
                // dx's scale is rstd (1/std of the row, about 1e-37 for the big rows).
                let dx_scale = flat(&want_dx)
                    .iter()
                    .fold(0f32, |m, v| m.max(v.abs()))
                    .max(f32::MIN_POSITIVE);
                let dx_got: Vec<f32> = dx.to_vec().unwrap().iter().map(|v| v / dx_scale).collect();
                let dx_want: Vec<f32> = flat(&want_dx).iter().map(|v| v / dx_scale).collect();
                assert_close(ctx, &format!("{name} dx"), &dx_got, &dx_want, Gate::new(1e-4, 1e-4));
                assert_close(
                    ctx,
                    &format!("{name} g xhat"),
                    &gxhat.to_vec().unwrap(),
                    &flat(&want_gxhat),
                    Gate::new(1e-4, 1e-4),
                );
            }
        }
        let x = Tensor::zeros(ctx, &[2, 5]).unwrap();
        let e = ops::rms_norm_backward(&x, &Tensor::zeros(ctx, &[4]).unwrap(), &x, 1e-5)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rms_norm_backward") && e.contains("weight") && e.contains("[4]"),
            "{e}"
        );
        let e = ops::layer_norm_backward(
            &x,
            &Tensor::zeros(ctx, &[5]).unwrap(),
            &Tensor::zeros(ctx, &[2, 4]).unwrap(),
            1e-5,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("layer_norm_backward") && e.contains("[2, 4]"), "{e}");
    });
}

/// RMS norm (Llama's) against the f64 reference at odd rows, every weight dtype, and its
/// errors; rows near f32::MAX are `special.rs`'s.
#[test]
fn rms_norm_over_awkward_rows() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(74);
        for shape in [
            &[1usize][..],
            &[2, 15],
            &[3, 17],
            &[5, 63],
            &[2, 3, 768],
            &[4, 257],
            &[1, 1000],
        ] {
            let x = random(&mut rng, shape, -3.0, 5.0);
            let c = shape[shape.len() - 1];
            let w = random(&mut rng, &[c], 0.5, 1.5);
            let want = reference::nn::rms_norm(&x.view(), &w.view(), 1e-6).unwrap();
            let xt = Tensor::from_array(ctx, &x).unwrap();
            let wt = Tensor::from_array(ctx, &w).unwrap();
            for dtype in [DType::F32, DType::F16, DType::BF16] {
                // A half weight: the reference of its rounded values.
                let wd = wt.to_dtype(dtype).unwrap();
                let wr = wd.to_dtype(DType::F32).unwrap().to_vec().unwrap();
                let wr = ArrayD::from_shape_vec(IxDyn(&[c]), wr).unwrap();
                let want = match dtype {
                    DType::F32 => want.clone(),
                    _ => reference::nn::rms_norm(&x.view(), &wr.view(), 1e-6).unwrap(),
                };
                let got = ops::rms_norm(&xt, &wd, 1e-6).unwrap();
                assert_close(
                    ctx,
                    &format!("rms_norm {shape:?} {dtype:?}"),
                    &got.to_vec().unwrap(),
                    &flat(&want),
                    Gate::new(1e-5, 1e-5),
                );
            }
        }
        let x = Tensor::zeros(ctx, &[2, 5]).unwrap();
        let e = ops::rms_norm(&x, &Tensor::zeros(ctx, &[4]).unwrap(), 1e-5)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rms_norm") && e.contains("weight") && e.contains("[4]"),
            "{e}"
        );
        let e = ops::rms_norm(&x, &Tensor::zeros(ctx, &[5]).unwrap(), -1.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("rms_norm") && e.contains("eps"), "{e}");
    });
}

/// Rotary embedding and its adjoint against the f64 reference at odd sizes (heads and D not
/// multiples of 4), the adjoint checked as one: <rope(x), y> = <x, rope_adjoint(y)>; SwiGLU's
/// gate against its formula; and their errors.
#[test]
fn rope_and_swiglu_match_the_reference() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(75);
        for [t, heads, d] in [[1usize, 1, 2], [3, 5, 6], [7, 3, 18], [2, 4, 64]] {
            let x = rng.vec_range(t * heads * d, -2.0, 2.0);
            let y = rng.vec_range(t * heads * d, -2.0, 2.0);
            let cos = rng.vec_range(t * d, -1.0, 1.0);
            let sin = rng.vec_range(t * d, -1.0, 1.0);
            let up = |v: &[f32], s: &[usize]| Tensor::from_slice(ctx, s, v).unwrap();
            let (xt, yt, ct, st) = (
                up(&x, &[t, heads, d]),
                up(&y, &[t, heads, d]),
                up(&cos, &[t, d]),
                up(&sin, &[t, d]),
            );
            for adjoint in [false, true] {
                let want = reference::nn::rope(&x, &cos, &sin, [t, heads, d], adjoint);
                let got = match adjoint {
                    false => ops::rope(&xt, &ct, &st),
                    true => ops::rope_adjoint(&xt, &ct, &st),
                }
                .unwrap();
                let name = format!("rope {:?} adjoint {adjoint}", [t, heads, d]);
                assert_close(ctx, &name, &got.to_vec().unwrap(), &want, Gate::new(1e-6, 1e-6));
            }
            let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(&p, &q)| p as f64 * q as f64).sum::<f64>();
            let fwd = ops::rope(&xt, &ct, &st).unwrap().to_vec().unwrap();
            let adj = ops::rope_adjoint(&yt, &ct, &st).unwrap().to_vec().unwrap();
            let (l, r) = (dot(&fwd, &y), dot(&x, &adj));
            assert!(
                (l - r).abs() <= 1e-4 * (1.0 + l.abs()),
                "<rope x, y> {l} vs <x, rope^T y> {r}"
            );
        }
        // Operands read in place from offsets: a column block of one row, rows of a table.
        let (heads, d) = (3, 8);
        let wide = rng.vec_range(6 + heads * d, -2.0, 2.0);
        let table_cos = rng.vec_range(4 * d, -1.0, 1.0);
        let table_sin = rng.vec_range(4 * d, -1.0, 1.0);
        let row = Tensor::from_slice(ctx, &[1, 6 + heads * d], &wide).unwrap();
        let x = row
            .narrow(1, 6, 6 + heads * d)
            .unwrap()
            .reshape(&[1, heads, d])
            .unwrap();
        let cos = Tensor::from_slice(ctx, &[4, d], &table_cos)
            .unwrap()
            .narrow(0, 2, 3)
            .unwrap();
        let sin = Tensor::from_slice(ctx, &[4, d], &table_sin)
            .unwrap()
            .narrow(0, 2, 3)
            .unwrap();
        let want = reference::nn::rope(
            &wide[6..],
            &table_cos[2 * d..3 * d],
            &table_sin[2 * d..3 * d],
            [1, heads, d],
            false,
        );
        let got = ops::rope(&x, &cos, &sin).unwrap().to_vec().unwrap();
        assert_close(ctx, "rope of views at offsets", &got, &want, Gate::new(1e-6, 1e-6));
        let g = Tensor::from_slice(ctx, &[3, 7], &rng.vec_range(21, -6.0, 6.0)).unwrap();
        let u = Tensor::from_slice(ctx, &[3, 7], &rng.vec_range(21, -2.0, 2.0)).unwrap();
        let want: Vec<f32> = g
            .to_vec()
            .unwrap()
            .iter()
            .zip(u.to_vec().unwrap())
            .map(|(&a, b)| (a as f64 / (1.0 + (-a as f64).exp()) * b as f64) as f32)
            .collect();
        assert_close(
            ctx,
            "swiglu",
            &ops::swiglu(&g, &u).unwrap().to_vec().unwrap(),
            &want,
            Gate::new(1e-5, 1e-5),
        );
        let odd = Tensor::zeros(ctx, &[2, 3, 5]).unwrap();
        let e = ops::rope(
            &odd,
            &Tensor::zeros(ctx, &[2, 5]).unwrap(),
            &Tensor::zeros(ctx, &[2, 5]).unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("rope") && e.contains("D even"), "{e}");
        let x = Tensor::zeros(ctx, &[2, 3, 4]).unwrap();
        let e = ops::rope(
            &x,
            &Tensor::zeros(ctx, &[3, 4]).unwrap(),
            &Tensor::zeros(ctx, &[2, 4]).unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("rope") && e.contains("cos") && e.contains("[2, 4]"), "{e}");
        let e = ops::swiglu(&g, &Tensor::zeros(ctx, &[7, 3]).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("swiglu") && e.contains("up"), "{e}");
    });
}

#[test]
fn linear_residual_layer_norm_matches_the_reference() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(79);
        // (M, K, N): GPT-2's prefill projections (split over K into 8 and 32 slices), an
        // unsplit product, a slice count that is not a multiple of 8, and N % 4 != 0 (the
        // two-op fallback).
        for (m, k, n) in [(64, 768, 768), (64, 3072, 768), (3, 40, 36), (64, 384, 64), (5, 20, 18)] {
            let x = random(&mut rng, &[m, k], -1.0, 1.0);
            let w = random(&mut rng, &[k, n], -0.1, 0.1);
            let bias = random(&mut rng, &[n], -1.0, 1.0);
            let res = random(&mut rng, &[m, n], 2.0, 4.0);
            let (g, b) = (random(&mut rng, &[n], 0.5, 1.5), random(&mut rng, &[n], -1.0, 1.0));
            let mut y = ArrayD::<f32>::zeros(IxDyn(&[m, n]));
            for i in 0..m {
                for j in 0..n {
                    let dot: f64 = (0..k).map(|t| x[[i, t]] as f64 * w[[t, j]] as f64).sum();
                    y[[i, j]] = (dot + bias[[j]] as f64 + res[[i, j]] as f64) as f32;
                }
            }
            let h = reference::nn::layer_norm(&y.view(), &g.view(), &b.view(), 1e-5).unwrap();
            let t = |a: &ArrayD<f32>| Tensor::from_array(ctx, a).unwrap();
            let (got_y, got_h) =
                ops::linear_residual_layer_norm(&t(&x), &t(&w), &t(&bias), &t(&res), &t(&g), &t(&b), 1e-5).unwrap();
            let name = format!("linear_residual_layer_norm ({m}, {k}) @ ({k}, {n})");
            assert_close(
                ctx,
                &format!("{name} y"),
                &got_y.to_vec().unwrap(),
                &flat(&y),
                Gate::new(1e-4, 1e-4),
            );
            assert_close(
                ctx,
                &format!("{name} h"),
                &got_h.to_vec().unwrap(),
                &flat(&h),
                Gate::new(1e-3, 1e-3),
            );
        }
        let z = |shape: &[usize]| Tensor::zeros(ctx, shape).unwrap();
        let e = ops::linear_residual_layer_norm(
            &z(&[4, 8]),
            &z(&[8, 12]),
            &z(&[12]),
            &z(&[4, 8]),
            &z(&[12]),
            &z(&[12]),
            1e-5,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("residual") && e.contains("[4, 8]"), "{e}");
        // No rows: two empty outputs, no dispatch, no error.
        let (y, h) = ops::linear_residual_layer_norm(
            &z(&[0, 8]),
            &z(&[8, 12]),
            &z(&[12]),
            &z(&[0, 12]),
            &z(&[12]),
            &z(&[12]),
            1e-5,
        )
        .unwrap();
        assert_eq!((y.shape(), h.shape()), (&[0, 12][..], &[0, 12][..]));
    });
}

#[test]
fn argmax_last_takes_the_first_maximum() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(74);
        for shape in [
            &[1usize][..],
            &[3, 15],
            &[16, 16],
            &[2, 17],
            &[4, 255],
            &[2, 256],
            &[3, 257],
            &[2, 1000],
            &[1, 50257],
        ] {
            let mut x = random(&mut rng, shape, -1.0, 1.0);
            // Plant a tie for the maximum in every row: the first one must win.
            let cols = shape[shape.len() - 1];
            let last = ndarray::Axis(x.ndim() - 1);
            for mut row in x.lanes_mut(last) {
                let (i, j) = (rng.below(cols), rng.below(cols));
                row[i.min(j)] = 2.0;
                row[i.max(j)] = 2.0;
            }
            let want = reference::nn::argmax_last(&x.view());
            let got = ops::argmax_last(&Tensor::from_array(ctx, &x).unwrap()).unwrap();
            assert_eq!(got.shape(), want.shape());
            assert_eq!(got.to_vec().unwrap(), flat(&want), "argmax {shape:?}");
        }
    });
}

#[test]
fn embedding_gathers_and_adds_positions() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(75);
        let (wte, wpe) = (
            random(&mut rng, &[50, 17], -1.0, 1.0),
            random(&mut rng, &[40, 17], -1.0, 1.0),
        );
        let (twte, twpe) = (
            Tensor::from_array(ctx, &wte).unwrap(),
            Tensor::from_array(ctx, &wpe).unwrap(),
        );
        for (t, offset) in [(1usize, 0usize), (15, 3), (16, 24), (17, 0), (1, 39)] {
            let ids: Vec<u32> = (0..t).map(|_| rng.below(50) as u32).collect();
            let want = reference::nn::embedding(&wte.view(), &wpe.view(), &ids, offset).unwrap();
            let got = ops::embedding(&twte, &twpe, &ids, offset).unwrap();
            assert_eq!(got.shape(), &[t, 17]);
            assert_close(
                ctx,
                &format!("embedding T={t} +{offset}"),
                &got.to_vec().unwrap(),
                &flat(&want),
                GATE,
            );
        }
        let e = ops::embedding(&twte, &twpe, &[3, 50], 0).unwrap_err().to_string();
        assert!(e.contains("embedding") && e.contains("50"), "{e}");
        let e = ops::embedding(&twte, &twpe, &[1, 2], 39).unwrap_err().to_string();
        assert!(e.contains("embedding") && e.contains("pos_offset"), "{e}");
    });
}

#[test]
fn attention_over_a_narrowed_kv_cache() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(76);
        // Tk = 300 crosses the fused kernel's 256-key blocks.
        let cases = [
            (1usize, 1usize, 16usize, 0usize),
            (3, 5, 16, 7),
            (2, 17, 15, 0),
            (2, 1, 64, 62),
            (1, 63, 17, 1),
            (2, 2, 8, 298),
        ];
        for (h, tq, d, past) in cases {
            let tk = past + tq;
            // q as (T, H, D) -> (H, T, D) view; k and v the first Tk positions of a longer cache.
            let q = Tensor::from_array(ctx, &random(&mut rng, &[tq, h, d], -1.0, 1.0))
                .unwrap()
                .transpose(0, 1)
                .unwrap();
            let kc = Tensor::from_array(ctx, &random(&mut rng, &[h, tk + 9, d], -1.0, 1.0)).unwrap();
            let vc = Tensor::from_array(ctx, &random(&mut rng, &[h, tk + 9, d], -1.0, 1.0)).unwrap();
            let (k, v) = (kc.narrow(1, 0, tk).unwrap(), vc.narrow(1, 0, tk).unwrap());
            let (qa, ka, va) = (q.to_array().unwrap(), k.to_array().unwrap(), v.to_array().unwrap());
            let want = reference::nn::attention(&qa.view(), &ka.view(), &va.view(), past).unwrap();
            let want = flat(&want);
            let got = ops::attention(&q, &k, &v, past).unwrap();
            assert_eq!(got.shape(), &[h, tq, d]);
            let case = format!("attention H{h} Tq{tq} D{d} past{past}");
            assert_close(ctx, &case, &got.to_vec().unwrap(), &want, Gate::new(1e-4, 1e-4));
            let got = ops::attention_with(&q, &k, &v, past, AttentionPath::Fused).unwrap();
            assert_close(
                ctx,
                &format!("fused {case}"),
                &got.to_vec().unwrap(),
                &want,
                Gate::new(1e-4, 1e-4),
            );
        }
        let t = |s: &[usize]| Tensor::zeros(ctx, s).unwrap();
        let e = ops::attention(&t(&[2, 3, 8]), &t(&[2, 4, 8]), &t(&[2, 4, 8]), 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("attention") && e.contains("past"), "{e}");
        let e = ops::attention(&t(&[2, 3, 8]), &t(&[2, 4, 7]), &t(&[2, 4, 7]), 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("attention") && e.contains("[2, 4, 7]"), "{e}");
        let big = t(&[1, 1, 257]);
        let e = ops::attention_with(&big, &big, &big, 0, AttentionPath::Fused)
            .unwrap_err()
            .to_string();
        assert!(e.contains("attention") && e.contains("D <= 256"), "{e}");
    });
}

#[test]
fn copy_into_appends_to_a_cache() {
    let run = |ctx: &Context| {
        let mut rng = Rng::new(77);
        let cache0 = random(&mut rng, &[3, 10, 17], -1.0, 1.0);
        let cache = Tensor::from_array(ctx, &cache0).unwrap();
        // Source rows from a transposed view: (T, H, D) -> (H, T, D).
        let src = random(&mut rng, &[4, 3, 17], -1.0, 1.0);
        let tsrc = Tensor::from_array(ctx, &src).unwrap().transpose(0, 1).unwrap();
        ops::copy_into(&cache.narrow(1, 5, 9).unwrap(), &tsrc).unwrap();
        let mut want = cache0.clone();
        want.slice_mut(ndarray::s![.., 5..9, ..])
            .assign(&src.view().permuted_axes(IxDyn(&[1, 0, 2])));
        assert_eq!(cache.to_vec().unwrap(), flat(&want), "copy_into on {}", ctx.info().name);
        // Within one buffer: shift positions 0..4 to 6..10.
        ops::copy_into(&cache.narrow(1, 6, 10).unwrap(), &cache.narrow(1, 0, 4).unwrap()).unwrap();
        let moved = want.slice(ndarray::s![.., 0..4, ..]).to_owned();
        want.slice_mut(ndarray::s![.., 6..10, ..]).assign(&moved);
        assert_eq!(
            cache.to_vec().unwrap(),
            flat(&want),
            "copy_into within a buffer on {}",
            ctx.info().name
        );
        let e = ops::copy_into(&cache.narrow(1, 0, 2).unwrap(), &tsrc)
            .unwrap_err()
            .to_string();
        assert!(e.contains("copy_into") && e.contains("[3, 2, 17]"), "{e}");
    };
    run(&Context::cpu());
    each_adapter(run);
}

#[test]
fn contract_ops_on_the_cpu_context() {
    let ctx = Context::cpu();
    let mut rng = Rng::new(78);
    let x = random(&mut rng, &[4, 6], -2.0, 2.0);
    let tx = Tensor::from_array(&ctx, &x).unwrap();
    // Each op against a formula written here, not the engine's reference (which the CPU
    // context runs, so comparing with it would compare the reference with itself).
    let xs = flat(&x);
    let want: Vec<f32> = xs
        .iter()
        .map(|&v| {
            let v = v as f64;
            (0.5 * v * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v * v * v)).tanh())) as f32
        })
        .collect();
    assert_close(
        &ctx,
        "gelu on the CPU context",
        &ops::gelu(&tx).unwrap().to_vec().unwrap(),
        &want,
        GATE,
    );
    // Causal softmax with past 1: row i sees columns 0..=1 + i.
    let mut want = vec![0f32; 24];
    let mut want_argmax = vec![0f32; 4];
    for i in 0..4 {
        let row = &xs[i * 6..(i + 1) * 6];
        let seen = (i + 2).min(6);
        let total: f64 = row[..seen].iter().map(|&v| (v as f64).exp()).sum();
        for j in 0..seen {
            want[i * 6 + j] = ((row[j] as f64).exp() / total) as f32;
        }
        let best = (0..6).fold(0, |b, j| if row[j] > row[b] { j } else { b });
        want_argmax[i] = best as f32;
    }
    let got = ops::softmax_last(&tx, Some(1)).unwrap().to_vec().unwrap();
    assert_close(&ctx, "causal softmax on the CPU context", &got, &want, GATE);
    assert_eq!(ops::argmax_last(&tx).unwrap().to_vec().unwrap(), want_argmax);
    // Attention of one head, written out: softmax(q k^T / 2) v with a causal mask.
    let qa = random(&mut rng, &[1, 3, 4], -1.0, 1.0);
    let q = Tensor::from_array(&ctx, &qa).unwrap();
    let got = ops::attention(&q, &q, &q, 0).unwrap();
    assert_eq!(got.shape(), &[1, 3, 4]);
    let mut want = vec![0f32; 12];
    for i in 0..3 {
        let s: Vec<f64> = (0..=i)
            .map(|j| (0..4).map(|e| qa[[0, i, e]] as f64 * qa[[0, j, e]] as f64).sum::<f64>() / 2.0)
            .collect();
        let total: f64 = s.iter().map(|v| v.exp()).sum();
        for e in 0..4 {
            want[i * 4 + e] = ((0..=i).map(|j| s[j].exp() * qa[[0, j, e]] as f64).sum::<f64>() / total) as f32;
        }
    }
    assert_close(
        &ctx,
        "attention on the CPU context",
        &got.to_vec().unwrap(),
        &want,
        GATE,
    );
}
