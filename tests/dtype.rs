//! Half-precision tensors: conversions on the device against the `half` crate on the host
//! (subnormals, infinities, NaN, odd lengths and odd view offsets), the ops that read F16
//! and BF16 operands against the f64 reference on the widened values, the errors of the ops
//! that do not, and GPT-2 with half weights against the same model in f32.

use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::generate::Generate;
use wgsl_compute::generate::Sampling;
use wgsl_compute::models::gpt2::{self, Config, Gpt2, StepOptions, Weights};
use wgsl_compute::ops::{self, MatmulPath};
use wgsl_compute::{reference, Context, DType, Error, Tensor};

use crate::common::{assert_close, each_adapter};

/// The products read exact halves, so the only error is f32 accumulation: as for f32 matmul.
const GATE: Gate = Gate::new(1e-4, 1e-4);

/// f32 values that exercise every branch of the conversions: zeros, normals, ties, the
/// overflow boundary, f16 and bf16 subnormals, values that round to zero, infinities, NaN.
fn special_values() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -2.5,
        65504.0, // largest f16
        65519.0, // rounds down to 65504
        65520.0, // rounds to infinity in f16
        1e30,    // f16 infinity, bf16 normal
        3.0e38,  // near f32 max: bf16 rounds up to infinity? (checked against `half`)
        6.1e-5,  // near the smallest normal f16
        5.96e-8, // the smallest f16 subnormal
        2.98e-8, // half of it: ties to zero
        2.99e-8, // just above half: rounds up
        1.0e-9,  // zero in f16
        1.0e-40, // an f32 subnormal: zero in f16, a bf16 subnormal
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0x3f80_1000), // 1 + 2^-11: an f16 tie (to even: 1)
        f32::from_bits(0x3f80_3000), // 1 + 3 * 2^-11: a tie up
        f32::from_bits(0x3f80_8000), // a bf16 tie
        f32::from_bits(0x3f81_8000), // a bf16 tie up
        f32::from_bits(0x0000_0001), // the smallest f32 subnormal
    ];
    let mut rng = Rng::new(7);
    v.extend(rng.vec_range(40, -70000.0, 70000.0));
    v.extend(rng.vec_range(40, -1e-4, 1e-4));
    v
}

fn host_bits(dtype: DType, x: f32) -> u16 {
    match dtype {
        DType::F16 => f16::from_f32(x).to_bits(),
        _ => bf16::from_f32(x).to_bits(),
    }
}

fn host_value(dtype: DType, b: u16) -> f32 {
    match dtype {
        DType::F16 => f16::from_bits(b).to_f32(),
        _ => bf16::from_bits(b).to_f32(),
    }
}

/// Same bits, or both NaN (the payload of a converted NaN is not specified).
fn same_half(dtype: DType, got: u16, want: u16) -> bool {
    got == want || (host_value(dtype, got).is_nan() && host_value(dtype, want).is_nan())
}

fn on_every_context(mut f: impl FnMut(&Context)) {
    f(&Context::cpu());
    each_adapter(f);
}

#[test]
fn dtype_round_trips_match_the_half_crate() {
    on_every_context(|ctx| {
        let values = special_values();
        // Odd and even lengths, one element, none.
        for n in [0, 1, 2, 7, values.len() - 1, values.len()] {
            let x = Tensor::from_slice(ctx, &[n], &values[..n]).unwrap();
            for dtype in [DType::F16, DType::BF16] {
                let h = x.to_dtype(dtype).unwrap();
                assert_eq!(h.dtype(), dtype);
                let got = h.to_halves().unwrap();
                for (i, (&g, &x)) in got.iter().zip(&values[..n]).enumerate() {
                    let want = host_bits(dtype, x);
                    assert!(
                        same_half(dtype, g, want),
                        "{dtype} of {x:e} (element {i} of {n}) on {}: {g:#06x}, the half crate {want:#06x}",
                        ctx.info().name
                    );
                }
                // Widening is exact: back to f32 on the device, and through to_vec.
                let back = h.to_dtype(DType::F32).unwrap().to_vec().unwrap();
                let widened = h.to_vec().unwrap();
                for (i, &g) in got.iter().enumerate() {
                    let want = host_value(dtype, g);
                    for b in [back[i], widened[i]] {
                        assert!(
                            b.to_bits() == want.to_bits() || (b.is_nan() && want.is_nan()),
                            "{dtype} {g:#06x} widened on {}: {b:e}, want {want:e}",
                            ctx.info().name
                        );
                    }
                }
                // From the host patterns: the same words back, and a half-to-half conversion.
                let up = Tensor::from_halves(ctx, &[n], dtype, &got).unwrap();
                assert_eq!(up.to_halves().unwrap(), got);
                let other = if dtype == DType::F16 { DType::BF16 } else { DType::F16 };
                let across = up.to_dtype(other).unwrap().to_halves().unwrap();
                for (i, &g) in across.iter().enumerate() {
                    let want = host_bits(other, host_value(dtype, got[i]));
                    assert!(same_half(other, g, want), "{dtype} -> {other} of {:#06x}", got[i]);
                }
            }
        }
    });
}

#[test]
fn dtype_views_at_odd_offsets_read_and_copy() {
    on_every_context(|ctx| {
        let mut rng = Rng::new(3);
        let data = rng.vec_range(7 * 5, -4.0, 4.0);
        for dtype in [DType::F16, DType::BF16] {
            let t = Tensor::from_slice_as(ctx, &[7, 5], &data, dtype).unwrap();
            let exact: Vec<f32> = data.iter().map(|&x| host_value(dtype, host_bits(dtype, x))).collect();
            assert_eq!(t.to_vec().unwrap(), exact);
            // Row 1 starts at element 5 (odd); a column view is strided; a transpose too.
            let row = t.narrow(0, 1, 2).unwrap();
            assert_eq!(row.layout().offset, 5);
            assert_eq!(row.to_vec().unwrap(), exact[5..10].to_vec());
            let col = t.narrow(1, 3, 4).unwrap();
            let want: Vec<f32> = (0..7).map(|r| exact[r * 5 + 3]).collect();
            assert_eq!(col.to_vec().unwrap(), want);
            let dense = col.contiguous().unwrap();
            assert_eq!((dense.dtype(), dense.layout().offset), (dtype, 0));
            assert_eq!(dense.to_vec().unwrap(), want);
            let tt = t.transpose(0, 1).unwrap();
            let want: Vec<f32> = (0..5)
                .flat_map(|c| (0..7).map(move |r| (r, c)))
                .map(|(r, c)| exact[r * 5 + c])
                .collect();
            assert_eq!(tt.to_vec().unwrap(), want);
            assert_eq!(tt.reshape(&[35]).unwrap().to_vec().unwrap(), want);
            let bits: Vec<u16> = want.iter().map(|&x| host_bits(dtype, x)).collect();
            assert_eq!(tt.to_halves().unwrap(), bits);
        }
    });
}

fn random(rng: &mut Rng, shape: &[usize]) -> Vec<f32> {
    rng.vec_range(shape.iter().product(), -1.0, 1.0)
}

/// The f64 reference of `a @ b` on the values the tensors hold (widened exactly).
fn reference_matmul(a: &Tensor, b: &Tensor) -> Vec<f32> {
    let want = reference::matmul::matmul(&a.to_array().unwrap().view(), &b.to_array().unwrap().view()).unwrap();
    want.iter().copied().collect()
}

#[test]
fn dtype_half_matmul_every_path_matches_the_reference() {
    let sizes = [
        (1, 1, 1),
        (1, 17, 63),
        (15, 16, 17),
        (17, 15, 63),
        (64, 64, 64),
        (65, 33, 130),
        (3, 1000, 17),
        (130, 68, 132),
    ];
    each_adapter(|ctx| {
        let mut rng = Rng::new(11);
        for dtype in [DType::F16, DType::BF16] {
            for (m, k, n) in sizes {
                let a32 = random(&mut rng, &[m, k]);
                let bv = random(&mut rng, &[k, n]);
                let b = Tensor::from_slice_as(ctx, &[k, n], &bv, dtype).unwrap();
                let a_half = Tensor::from_slice_as(ctx, &[m, k], &a32, dtype).unwrap();
                let a_f32 = Tensor::from_slice(ctx, &[m, k], &a32).unwrap();
                // b^T as a view, read in place (a strided half operand).
                let bt = Tensor::from_slice_as(ctx, &[n, k], &random(&mut rng, &[n, k]), dtype).unwrap();
                let bt = bt.transpose(0, 1).unwrap();
                let mut paths = vec![MatmulPath::Auto, MatmulPath::Tiled16, MatmulPath::RegisterTiled];
                if m == 1 {
                    paths.push(MatmulPath::Matvec);
                }
                for (which, a, b) in [
                    ("f32 a", &a_f32, &b),
                    ("half a", &a_half, &b),
                    ("f32 a, b^T", &a_f32, &bt),
                ] {
                    let want = reference_matmul(a, b);
                    // The large tile reads whole vec4s of both operands: dense inner axes.
                    let large = k % 4 == 0 && n % 4 == 0 && which != "f32 a, b^T";
                    for &path in paths.iter().chain(large.then_some(&MatmulPath::LargeTile)) {
                        let case = format!("{dtype} {which} ({m}x{k}) @ ({k}x{n}) {path:?}");
                        let got = ops::matmul_with(a, b, path).unwrap_or_else(|e| panic!("{case}: {e}"));
                        assert_eq!(got.dtype(), DType::F32);
                        assert_close(ctx, &case, &got.to_vec().unwrap(), &want, GATE);
                    }
                }
            }
        }
    });
}

/// `MatmulPath::Cooperative` (f16 operands on the matrix units) against the f64 reference
/// where the context has cooperative matrices (run with ENGINE_EXPERIMENTAL=cooperative-matrix
/// on an adapter that offers them: an H100 or H200; the large shapes take the staged kernel):
/// block and step edges, a batch, a narrowed view,
/// the fused epilogues, and `Auto` picking it. Everywhere: the refusals name their reason.
#[test]
fn dtype_cooperative_matmul_matches_the_reference_or_refuses() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(23);
        let half = |rng: &mut Rng, shape: &[usize]| {
            Tensor::from_slice_as(ctx, shape, &random(rng, shape), DType::F16).unwrap()
        };
        let refused = |a: &Tensor, b: &Tensor, why: &str| match ops::matmul_with(a, b, MatmulPath::Cooperative) {
            Err(Error::Fallback { reason, .. }) => assert!(reason.contains(why), "{why}: {reason}"),
            other => panic!(
                "expected a refusal naming `{why}`, got {:?}",
                other.map(|t| t.shape().to_vec())
            ),
        };
        if !ctx.info().cooperative_matrix {
            let (a, b) = (half(&mut rng, &[64, 16]), half(&mut rng, &[16, 64]));
            refused(&a, &b, "no cooperative matrices");
            return;
        }
        for (m, k, n) in [(64, 16, 64), (128, 48, 192), (192, 160, 64), (64, 512, 128)] {
            let (a, b) = (half(&mut rng, &[m, k]), half(&mut rng, &[k, n]));
            let want = reference_matmul(&a, &b);
            for path in [MatmulPath::Cooperative, MatmulPath::Auto] {
                let case = format!("({m}x{k}) @ ({k}x{n}) {path:?}");
                let got = ops::matmul_with(&a, &b, path).unwrap_or_else(|e| panic!("{case}: {e}"));
                assert_close(ctx, &case, &got.to_vec().unwrap(), &want, GATE);
            }
        }
        // A batch, and a view narrowed to rows 8.. (offset 8 x K, a multiple of 8).
        let (a, b) = (half(&mut rng, &[3, 64, 32]), half(&mut rng, &[3, 32, 128]));
        let got = ops::matmul_with(&a, &b, MatmulPath::Cooperative).unwrap();
        assert_close(ctx, "batched", &got.to_vec().unwrap(), &reference_matmul(&a, &b), GATE);
        let a = half(&mut rng, &[72, 32]).narrow(0, 8, 72).unwrap();
        let b0 = b.narrow(0, 0, 1).unwrap().reshape(&[32, 128]).unwrap();
        let got = ops::matmul_with(&a, &b0, MatmulPath::Cooperative).unwrap();
        assert_close(
            ctx,
            "narrowed a",
            &got.to_vec().unwrap(),
            &reference_matmul(&a, &b0),
            GATE,
        );
        // The epilogues, through linear with f16 x and w.
        let (m, k, n) = (128, 64, 192);
        let (x, w) = (half(&mut rng, &[m, k]), half(&mut rng, &[k, n]));
        let bias = Tensor::from_slice(ctx, &[n], &random(&mut rng, &[n])).unwrap();
        let res = Tensor::from_slice(ctx, &[m, n], &random(&mut rng, &[m, n])).unwrap();
        let prod = reference_matmul(&x, &w);
        let (bv, rv) = (bias.to_vec().unwrap(), res.to_vec().unwrap());
        let biased: Vec<f32> = prod.iter().enumerate().map(|(i, &p)| p + bv[i % n]).collect();
        let got = ops::linear(&x, &w, Some(&bias)).unwrap().to_vec().unwrap();
        assert_close(ctx, "linear", &got, &biased, GATE);
        let gelu: Vec<f32> = biased
            .iter()
            .map(|&v| reference::nn::gelu_scalar(v as f64) as f32)
            .collect();
        let got = ops::linear_gelu(&x, &w, Some(&bias)).unwrap().to_vec().unwrap();
        assert_close(ctx, "linear_gelu", &got, &gelu, GATE);
        let summed: Vec<f32> = biased.iter().zip(&rv).map(|(a, b)| a + b).collect();
        let got = ops::linear_residual(&x, &w, &bias, &res).unwrap().to_vec().unwrap();
        assert_close(ctx, "linear_residual", &got, &summed, GATE);
        // Products large enough for the staged kernel (256 x 128 tiles, 128 of them): a batch
        // of views narrowed along K (offset 8, row stride 56) against a broadcast b, and the
        // fused epilogue with a residual.
        let a = half(&mut rng, &[128, 256, 56]).narrow(2, 8, 56).unwrap();
        let b = half(&mut rng, &[48, 128]);
        let got = ops::matmul_with(&a, &b, MatmulPath::Cooperative).unwrap();
        assert_close(ctx, "staged", &got.to_vec().unwrap(), &reference_matmul(&a, &b), GATE);
        let (m, k, n) = (128 * 256, 32, 128);
        let (x, w) = (half(&mut rng, &[m, k]), half(&mut rng, &[k, n]));
        let bias = Tensor::from_slice(ctx, &[n], &random(&mut rng, &[n])).unwrap();
        let res = Tensor::from_slice(ctx, &[m, n], &random(&mut rng, &[m, n])).unwrap();
        let (bv, rv) = (bias.to_vec().unwrap(), res.to_vec().unwrap());
        let want: Vec<f32> = reference_matmul(&x, &w)
            .iter()
            .enumerate()
            .map(|(i, &p)| p + bv[i % n] + rv[i])
            .collect();
        let got = ops::linear_residual(&x, &w, &bias, &res).unwrap().to_vec().unwrap();
        assert_close(ctx, "staged linear_residual", &got, &want, GATE);
        // Transposed views read as they lie (column-major blocks): a^T, b^T and both, through
        // the direct kernel and, for a batch of 128 blocks of 256 x 128, the staged one.
        for (batch, m, k, n) in [(1, 128, 48, 192), (128, 256, 48, 128)] {
            let at = half(&mut rng, &[batch, k, m]).transpose(1, 2).unwrap(); // (batch, M, K), M dense
            let bt = half(&mut rng, &[batch, n, k]).transpose(1, 2).unwrap(); // (batch, K, N), K dense
            let a = half(&mut rng, &[batch, m, k]);
            let b = half(&mut rng, &[batch, k, n]);
            for (name, x, y) in [("a^T @ b", &at, &b), ("a @ b^T", &a, &bt), ("a^T @ b^T", &at, &bt)] {
                let case = format!("{name}, batch {batch}, {m}x{k}x{n}");
                let got = ops::matmul_with(x, y, MatmulPath::Cooperative).unwrap_or_else(|e| panic!("{case}: {e}"));
                assert_close(ctx, &case, &got.to_vec().unwrap(), &reference_matmul(x, y), GATE);
            }
        }
        // What it refuses, and why.
        refused(
            &half(&mut rng, &[65, 16]),
            &half(&mut rng, &[16, 64]),
            "multiples of 64",
        );
        refused(&half(&mut rng, &[64, 24]), &half(&mut rng, &[24, 64]), "K of 16");
        // An f32 a with f16 b is a product the other kernels take, not this one.
        let a32 = Tensor::from_slice(ctx, &[64, 16], &random(&mut rng, &[64, 16])).unwrap();
        refused(&a32, &half(&mut rng, &[16, 64]), "F16 operands");
        // Rows 20 halves apart: not 16-byte aligned.
        let narrowed = half(&mut rng, &[64, 20]).narrow(1, 4, 20).unwrap();
        refused(&narrowed, &half(&mut rng, &[16, 64]), "one axis dense");
    });
}

#[test]
fn dtype_half_linear_embedding_layer_norm_match_the_reference() {
    on_every_context(|ctx| {
        let mut rng = Rng::new(19);
        for dtype in [DType::F16, DType::BF16] {
            // linear and linear_gelu with half weights; M = 64, K = 512 takes the split-K path.
            for (m, k, n) in [(1, 48, 144), (5, 48, 144), (64, 512, 64)] {
                let x = Tensor::from_slice(ctx, &[m, k], &random(&mut rng, &[m, k])).unwrap();
                let w = Tensor::from_slice_as(ctx, &[k, n], &random(&mut rng, &[k, n]), dtype).unwrap();
                let bias = Tensor::from_slice(ctx, &[n], &random(&mut rng, &[n])).unwrap();
                let prod = reference_matmul(&x, &w);
                let bv = bias.to_vec().unwrap();
                let want: Vec<f32> = prod.iter().enumerate().map(|(i, &p)| p + bv[i % n]).collect();
                let got = ops::linear(&x, &w, Some(&bias)).unwrap().to_vec().unwrap();
                assert_close(ctx, &format!("{dtype} linear {m}x{k}x{n}"), &got, &want, GATE);
                let res = Tensor::from_slice(ctx, &[m, n], &random(&mut rng, &[m, n])).unwrap();
                let rv = res.to_vec().unwrap();
                let got = ops::linear_residual(&x, &w, &bias, &res).unwrap().to_vec().unwrap();
                let want_r: Vec<f32> = want.iter().zip(&rv).map(|(a, b)| a + b).collect();
                assert_close(
                    ctx,
                    &format!("{dtype} linear_residual {m}x{k}x{n}"),
                    &got,
                    &want_r,
                    GATE,
                );
            }
            // Embedding with half tables.
            let (v, p, c) = (50, 9, 12);
            let wte = Tensor::from_slice_as(ctx, &[v, c], &random(&mut rng, &[v, c]), dtype).unwrap();
            let wpe = Tensor::from_slice_as(ctx, &[p, c], &random(&mut rng, &[p, c]), dtype).unwrap();
            let ids = [3u32, 49, 0, 7];
            let (e, pe) = (wte.to_array().unwrap(), wpe.to_array().unwrap());
            let want = reference::nn::embedding(&e.view(), &pe.view(), &ids, 2).unwrap();
            let got = ops::embedding(&wte, &wpe, &ids, 2).unwrap();
            assert_eq!(got.dtype(), DType::F32);
            assert_eq!(
                got.to_vec().unwrap(),
                want.iter().copied().collect::<Vec<_>>(),
                "{dtype} embedding"
            );
            // Layer norm with half gamma and beta (an odd width: the last word is padded).
            let (rows, cols) = (3, 37);
            let xv = random(&mut rng, &[rows, cols]);
            let x = Tensor::from_slice(ctx, &[rows, cols], &xv).unwrap();
            let g = Tensor::from_slice_as(ctx, &[cols], &random(&mut rng, &[cols]), dtype).unwrap();
            let b = Tensor::from_slice_as(ctx, &[cols], &random(&mut rng, &[cols]), dtype).unwrap();
            let xa = ArrayD::from_shape_vec(IxDyn(&[rows, cols]), xv).unwrap();
            let want = reference::nn::layer_norm(
                &xa.view(),
                &g.to_array().unwrap().view(),
                &b.to_array().unwrap().view(),
                1e-5,
            )
            .unwrap();
            let got = ops::layer_norm(&x, &g, &b, 1e-5).unwrap().to_vec().unwrap();
            let want: Vec<f32> = want.iter().copied().collect();
            assert_close(ctx, &format!("{dtype} layer_norm"), &got, &want, Gate::new(1e-5, 1e-5));
        }
    });
}

fn dtype_error(r: Result<Tensor, Error>) -> (String, String, String) {
    match r {
        Err(Error::DType {
            op,
            arg,
            actual,
            expected,
        }) => (format!("{op}/{arg}"), actual, expected),
        Err(e) => panic!("expected a dtype error, got {e}"),
        Ok(_) => panic!("expected a dtype error, got a result"),
    }
}

#[test]
fn dtype_ops_without_half_inputs_refuse_them_by_name() {
    on_every_context(|ctx| {
        let x = Tensor::from_slice(ctx, &[2, 4], &[1., 2., 3., 4., 5., 6., 7., 8.]).unwrap();
        let h = x.to_dtype(DType::F16).unwrap();
        let b = x.to_dtype(DType::BF16).unwrap();
        let w = Tensor::from_slice(ctx, &[4, 4], &[0.5; 16]).unwrap();
        let cases: Vec<(&str, Result<Tensor, Error>, &str)> = vec![
            ("add", ops::add(&x, &h), "add/"),
            ("softmax", ops::softmax_last(&h, None), "softmax"),
            ("sum", ops::sum_last(&b), "sum"),
            ("gelu", ops::gelu(&h), "gelu"),
            ("half a, f32 b", ops::matmul(&h, &w), "matmul/a"),
            (
                "f16 a, bf16 b",
                ops::matmul(&h, &w.to_dtype(DType::BF16).unwrap()),
                "matmul/a",
            ),
            (
                "half bias",
                ops::linear(&x, &w, Some(&h.narrow(0, 0, 1).unwrap().reshape(&[4]).unwrap())),
                "linear/bias",
            ),
            (
                "layer_norm x",
                ops::layer_norm(
                    &h,
                    &x.narrow(0, 0, 1).unwrap().reshape(&[4]).unwrap(),
                    &x.narrow(0, 1, 2).unwrap().reshape(&[4]).unwrap(),
                    1e-5,
                ),
                "layer_norm/x",
            ),
        ];
        for (case, r, want_op) in cases {
            let (at, actual, expected) = dtype_error(r);
            assert!(at.starts_with(want_op), "{case}: {at}");
            assert!(actual == "F16" || actual == "BF16", "{case}: {actual}");
            assert!(expected.contains("F32"), "{case}: {expected}");
        }
        let e = ops::copy_into(&x, &h).unwrap_err().to_string();
        assert!(e.contains("copy_into") && e.contains("src") && e.contains("F16"), "{e}");
        assert!(Tensor::from_halves(ctx, &[1], DType::F32, &[0]).is_err());
        assert!(x.to_halves().is_err());
    });
}

fn small_config() -> Config {
    Config {
        vocab_size: 300,
        n_positions: 40,
        n_embd: 48,
        n_layer: 2,
        n_head: 3,
        ..Config::default()
    }
}

/// The same checkpoint stored in f16: the model in f16 (the default, half the weight bytes)
/// reads exactly the values the f32 model holds, through the same kernels, so the logits of
/// every step agree to f32 rounding and the greedy tokens are equal; a BF16 model matches
/// the f64 reference run on the bf16-rounded weights within the logits gate.
#[test]
fn dtype_gpt2_half_weights_match_f32_and_the_reference() {
    let cfg = small_config();
    let weights = Weights::from_safetensors(
        cfg.clone(),
        &gpt2::random_checkpoint(&cfg, 9, DType::F16).unwrap(),
        "small",
    )
    .unwrap();
    assert_eq!(weights.dtype, DType::F16);
    let ids = [5u32, 17, 2, 250, 9];
    let reference = gpt2::reference::forward(&weights, &ids).unwrap();
    on_every_context(|ctx| {
        let half = Gpt2::new(ctx, &weights).unwrap();
        let full = Gpt2::with_dtype(ctx, &weights, DType::F32).unwrap();
        assert_eq!((half.dtype(), full.dtype()), (DType::F16, DType::F32));
        let (lh, lf) = (
            half.forward(&ids).unwrap().to_vec().unwrap(),
            full.forward(&ids).unwrap().to_vec().unwrap(),
        );
        assert_close(ctx, "f16 vs f32 model logits", &lh, &lf, Gate::new(1e-5, 1e-5));
        let want: Vec<f32> = reference.logits.iter().copied().collect();
        assert_close(
            ctx,
            "f16 model vs f64 reference",
            &lh,
            &want,
            wgsl_compute::check::gates::LOGITS,
        );
        // Step by step with the cache, and greedy generation (compiled where it pays off).
        let (mut ch, mut cf) = (half.new_cache().unwrap(), full.new_cache().unwrap());
        for &id in &ids {
            let a = half
                .step(&[id], &mut ch, StepOptions::default())
                .unwrap()
                .logits
                .to_vec()
                .unwrap();
            let b = full
                .step(&[id], &mut cf, StepOptions::default())
                .unwrap()
                .logits
                .to_vec()
                .unwrap();
            assert_close(ctx, "f16 vs f32 decode step", &a, &b, Gate::new(1e-5, 1e-5));
        }
        let gh = half.generate(&ids, 12, Sampling::Greedy, |_| {}).unwrap();
        let gf = full.generate(&ids, 12, Sampling::Greedy, |_| {}).unwrap();
        assert_eq!(gh, gf, "greedy tokens of the f16 and f32 models on {}", ctx.info().name);
        if ctx.is_gpu() {
            let ge = half.generate_eager(&ids, 12, Sampling::Greedy, |_| {}).unwrap();
            let mut g = gpt2::Generator::new(&half).unwrap();
            assert_eq!(
                g.generate(&ids, 12, Sampling::Greedy, |_| {}).unwrap(),
                ge,
                "f16 plan vs eager"
            );
            assert_eq!(ge, gf);
        }
        // BF16: converted on the device from the stored f16, checked against the reference
        // on the same bf16-rounded weights.
        let bf = Gpt2::with_dtype(ctx, &weights, DType::BF16).unwrap();
        let rounded = weights.rounded(DType::BF16);
        let want = gpt2::reference::forward(&rounded, &ids).unwrap();
        let want: Vec<f32> = want.logits.iter().copied().collect();
        let got = bf.forward(&ids).unwrap().to_vec().unwrap();
        assert_close(
            ctx,
            "bf16 model vs f64 reference on bf16 weights",
            &got,
            &want,
            wgsl_compute::check::gates::LOGITS,
        );
    });
}

/// The shipped Shakespeare model (stored f16, run in f16 by default) chooses the same greedy
/// tokens as the same weights widened to f32 on the device.
#[test]
fn dtype_shipped_model_greedy_tokens_equal_in_f16_and_f32() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/shakespeare");
    let weights = Weights::load(&dir).unwrap();
    assert_eq!(weights.dtype, DType::F16);
    let prompt = gpt2::Tokenizer::gpt2().unwrap().encode("ROMEO:");
    each_adapter(|ctx| {
        let half = Gpt2::new(ctx, &weights).unwrap();
        let full = Gpt2::with_dtype(ctx, &weights, DType::F32).unwrap();
        let a = half.generate(&prompt, 16, Sampling::Greedy, |_| {}).unwrap();
        let b = full.generate(&prompt, 16, Sampling::Greedy, |_| {}).unwrap();
        assert_eq!(a, b, "shipped model f16 vs f32 greedy on {}", ctx.info().name);
    });
}
