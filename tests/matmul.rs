//! Matrix products on every path against the f64 reference: awkward sizes, transposed and
//! narrowed views, batch broadcast, the fused epilogues, and bad input.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::ops::{self, MatmulPath};
use wgsl_compute::{reference, Context, Tensor};

use crate::common::{assert_close, each_adapter};

/// f32 accumulation over up to 1000 products of values in [-1, 1].
const GATE: Gate = Gate::new(1e-4, 1e-4);

fn random(rng: &mut Rng, shape: &[usize]) -> ArrayD<f32> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, -1.0, 1.0)).unwrap()
}

/// Runs `a @ b` on `path` and checks it against the reference product of the same views.
fn check(ctx: &Context, case: &str, a: &Tensor, b: &Tensor, path: MatmulPath) {
    let want = reference::matmul::matmul(&a.to_array().unwrap().view(), &b.to_array().unwrap().view()).unwrap();
    let got = ops::matmul_with(a, b, path).unwrap_or_else(|e| panic!("{case} {path:?}: {e}"));
    assert_eq!(got.shape(), want.shape(), "{case} {path:?}");
    let want: Vec<f32> = want.iter().copied().collect();
    assert_close(ctx, &format!("{case} {path:?}"), &got.to_vec().unwrap(), &want, GATE);
}

fn paths(m: usize) -> Vec<MatmulPath> {
    let mut p = vec![MatmulPath::Auto, MatmulPath::Tiled16, MatmulPath::RegisterTiled];
    if m == 1 {
        p.push(MatmulPath::Matvec);
    }
    p
}

#[test]
fn matmul_every_path_at_awkward_sizes() {
    let sizes = [
        (1, 1, 1),
        (1, 17, 63),
        (15, 16, 17),
        (16, 16, 16),
        (17, 15, 63),
        (63, 17, 1),
        (64, 64, 64),
        (65, 33, 130),
        (1, 1000, 15),
        (3, 1000, 17),
        (128, 20, 68),
    ];
    each_adapter(|ctx| {
        let mut rng = Rng::new(61);
        for (m, k, n) in sizes {
            let a = Tensor::from_array(ctx, &random(&mut rng, &[m, k])).unwrap();
            let b = Tensor::from_array(ctx, &random(&mut rng, &[k, n])).unwrap();
            for path in paths(m) {
                check(ctx, &format!("({m}x{k}) @ ({k}x{n})"), &a, &b, path);
            }
        }
    });
}

#[test]
fn matmul_large_tile_across_its_tile_and_step_edges() {
    // M and N around the 128 tile, K around the 16 step (K and N multiples of 4: the kernel
    // reads both operands as vec4s), K over many steps ending in a partial one of 8, 16 or
    // 32 (520 = 16 * 32 + 8), a batch, and an epilogue through linear.
    let sizes = [
        (1, 4, 4),
        (127, 16, 128),
        (129, 20, 132),
        (200, 68, 260),
        (256, 36, 128),
        (256, 520, 384),
    ];
    each_adapter(|ctx| {
        let mut rng = Rng::new(64);
        for (m, k, n) in sizes {
            let a = Tensor::from_array(ctx, &random(&mut rng, &[m, k])).unwrap();
            let b = Tensor::from_array(ctx, &random(&mut rng, &[k, n])).unwrap();
            check(ctx, &format!("({m}x{k}) @ ({k}x{n})"), &a, &b, MatmulPath::LargeTile);
        }
        let a = Tensor::from_array(ctx, &random(&mut rng, &[3, 130, 24])).unwrap();
        let b = Tensor::from_array(ctx, &random(&mut rng, &[3, 24, 136])).unwrap();
        check(ctx, "batched (3x130x24) @ (3x24x136)", &a, &b, MatmulPath::LargeTile);
    });
}

#[test]
fn matmul_large_tile_refuses_operands_it_cannot_read_as_vec4() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(65);
        // K = 18 is not a multiple of 4; a transposed b has a strided N axis.
        let a = Tensor::from_array(ctx, &random(&mut rng, &[130, 18])).unwrap();
        let b = Tensor::from_array(ctx, &random(&mut rng, &[18, 132])).unwrap();
        let bt = Tensor::from_array(ctx, &random(&mut rng, &[132, 20]))
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        let a20 = Tensor::from_array(ctx, &random(&mut rng, &[130, 20])).unwrap();
        for (case, x, y) in [("K = 18", &a, &b), ("b transposed", &a20, &bt)] {
            match ops::matmul_with(x, y, MatmulPath::LargeTile) {
                Err(e) => assert!(e.to_string().contains("vec4"), "{case}: {e}"),
                Ok(_) => panic!("{case}: the large-tile path ran on operands it cannot read as vec4"),
            }
            // Auto takes another kernel and gets the product right.
            check(ctx, case, x, y, MatmulPath::Auto);
        }
    });
}

#[test]
fn matmul_one_thousand_in_each_dimension_on_the_fast_path() {
    // 1000 in one dimension at a time: the software adapters run a 1000^3 product for many
    // seconds, longer than the GL backend's context lock tolerates under parallel tests.
    each_adapter(|ctx| {
        let mut rng = Rng::new(62);
        for (m, k, n) in [(1000, 20, 65), (70, 1000, 68), (66, 24, 1000)] {
            let a = Tensor::from_array(ctx, &random(&mut rng, &[m, k])).unwrap();
            let b = Tensor::from_array(ctx, &random(&mut rng, &[k, n])).unwrap();
            check(
                ctx,
                &format!("({m}x{k}) @ ({k}x{n})"),
                &a,
                &b,
                MatmulPath::RegisterTiled,
            );
        }
    });
}

#[test]
fn matmul_reads_transposed_and_narrowed_views_in_place() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(63);
        for path in [MatmulPath::Tiled16, MatmulPath::RegisterTiled] {
            // a^T with a stored (K, M); b a column window of a wider matrix.
            let at = Tensor::from_array(ctx, &random(&mut rng, &[33, 70]))
                .unwrap()
                .transpose(0, 1)
                .unwrap();
            let b = Tensor::from_array(ctx, &random(&mut rng, &[33, 100]))
                .unwrap()
                .narrow(1, 3, 68)
                .unwrap();
            check(ctx, "a^T @ narrowed b", &at, &b, path);
            // b^T (dense K axis) and a row window of a.
            let a = Tensor::from_array(ctx, &random(&mut rng, &[90, 64]))
                .unwrap()
                .narrow(0, 5, 72)
                .unwrap();
            let bt = Tensor::from_array(ctx, &random(&mut rng, &[65, 64]))
                .unwrap()
                .transpose(0, 1)
                .unwrap();
            check(ctx, "narrowed a @ b^T", &a, &bt, path);
            // Aligned dense operands at an offset that is a multiple of 4 (vec4 loads).
            let a = Tensor::from_array(ctx, &random(&mut rng, &[70, 64]))
                .unwrap()
                .narrow(0, 4, 68)
                .unwrap();
            let b = Tensor::from_array(ctx, &random(&mut rng, &[64, 128])).unwrap();
            check(ctx, "aligned narrowed a @ b", &a, &b, path);
        }
        // The matrix-vector kernel in both modes: dense N axis and dense K axis (b^T).
        let x = Tensor::from_array(ctx, &random(&mut rng, &[3, 257]))
            .unwrap()
            .narrow(0, 1, 2)
            .unwrap();
        let w = Tensor::from_array(ctx, &random(&mut rng, &[257, 300])).unwrap();
        check(ctx, "row @ w", &x, &w, MatmulPath::Matvec);
        let wt = Tensor::from_array(ctx, &random(&mut rng, &[1001, 257]))
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        check(ctx, "row @ wte^T", &x, &wt, MatmulPath::Matvec);
    });
}

/// The register-tiled kernel loads a transpose as it lies, as vec4s along its dense axis (a
/// dense along M, b along K), alone, with the other operand in either orientation and over a
/// batch, at sizes off the tile (M 68, K 36 and 20, N 70) and through `Auto` (which then
/// copies nothing).
#[test]
fn matmul_loads_transposes_as_vec4s_at_tile_edges() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(67);
        let t = |rng: &mut Rng, stored: &[usize]| {
            let x = Tensor::from_array(ctx, &random(rng, stored)).unwrap();
            x.transpose(x.rank() - 2, x.rank() - 1).unwrap()
        };
        let dense = |rng: &mut Rng, shape: &[usize]| Tensor::from_array(ctx, &random(rng, shape)).unwrap();
        let cases = [
            ("a^T @ b", t(&mut rng, &[36, 68]), dense(&mut rng, &[36, 70])),
            ("a^T @ b^T", t(&mut rng, &[20, 68]), t(&mut rng, &[72, 20])),
            ("a @ b^T", dense(&mut rng, &[68, 36]), t(&mut rng, &[70, 36])),
            (
                "a^T @ b, a's M not a multiple of 4",
                t(&mut rng, &[36, 70]),
                dense(&mut rng, &[36, 68]),
            ),
            (
                "batched a^T @ b^T",
                t(&mut rng, &[3, 20, 68]),
                t(&mut rng, &[3, 72, 20]),
            ),
        ];
        for (case, a, b) in &cases {
            for path in [MatmulPath::Auto, MatmulPath::RegisterTiled] {
                check(ctx, case, a, b, path);
            }
        }
    });
}

#[test]
fn matmul_long_k_small_output_splits_k_and_matches_the_reference() {
    // A weight gradient: x^T (Dm, B T) @ dy (B T, N) with a transposed view for x^T, and a
    // dense one; K = 4096 splits into slices on the Auto path (forced paths do not split).
    let gate = Gate::new(2e-4, 1e-4);
    each_adapter(|ctx| {
        let mut rng = Rng::new(66);
        for (m, k, n) in [(64, 4096, 64), (20, 3072, 100), (64, 1536, 8)] {
            let x = Tensor::from_array(ctx, &random(&mut rng, &[k, m])).unwrap();
            let b = Tensor::from_array(ctx, &random(&mut rng, &[k, n])).unwrap();
            let xt = x.transpose(0, 1).unwrap();
            let want =
                reference::matmul::matmul(&xt.to_array().unwrap().view(), &b.to_array().unwrap().view()).unwrap();
            let want: Vec<f32> = want.iter().copied().collect();
            for (name, a) in [("transposed view", xt.clone()), ("dense", xt.contiguous().unwrap())] {
                for path in [MatmulPath::Auto, MatmulPath::Tiled16] {
                    let got = ops::matmul_with(&a, &b, path).unwrap();
                    assert_eq!(got.shape(), [m, n]);
                    let case = format!("({m}x{k}) @ ({k}x{n}) {name} {path:?}");
                    assert_close(ctx, &case, &got.to_vec().unwrap(), &want, gate);
                }
            }
        }
    });
}

#[test]
fn matmul_batches_broadcast() {
    let cases: &[(&[usize], &[usize])] = &[
        (&[3, 17, 15], &[3, 15, 16]),
        (&[2, 3, 16, 17], &[17, 63]),
        (&[4, 1, 15, 17], &[1, 3, 17, 1]),
        (&[2, 1, 18], &[2, 18, 33]),
        (&[1, 65, 8], &[5, 8, 70]),
    ];
    each_adapter(|ctx| {
        let mut rng = Rng::new(64);
        for (sa, sb) in cases {
            let a = Tensor::from_array(ctx, &random(&mut rng, sa)).unwrap();
            let b = Tensor::from_array(ctx, &random(&mut rng, sb)).unwrap();
            let m = sa[sa.len() - 2];
            for path in paths(m) {
                check(ctx, &format!("{sa:?} @ {sb:?}"), &a, &b, path);
            }
        }
        // Per-head products over views: q (T, H, D) -> (H, T, D) and k^T from a (H, T, D) cache.
        let q = Tensor::from_array(ctx, &random(&mut rng, &[17, 3, 16]))
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        let k = Tensor::from_array(ctx, &random(&mut rng, &[3, 40, 16])).unwrap();
        let kt = k.narrow(1, 0, 21).unwrap().transpose(1, 2).unwrap();
        for path in [MatmulPath::Tiled16, MatmulPath::RegisterTiled] {
            check(ctx, "q @ k^T over views", &q, &kt, path);
        }
        let q1 = q.narrow(1, 16, 17).unwrap();
        check(ctx, "decode q @ k^T", &q1, &kt, MatmulPath::Matvec);
    });
}

#[test]
fn linear_fuses_bias_and_gelu() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(65);
        // The last case splits K into slices (few output tiles), its epilogue applied after the sum.
        for (lead, k, n) in [
            (&[1usize][..], 63usize, 17usize),
            (&[2, 17], 63, 65),
            (&[70], 16, 64),
            (&[64], 768, 72),
        ] {
            let mut xs = lead.to_vec();
            xs.push(k);
            let x = random(&mut rng, &xs);
            let w = random(&mut rng, &[k, n]);
            let b = random(&mut rng, &[n]);
            let mut want = reference::matmul::matmul(&x.view(), &w.view()).unwrap();
            want += &b;
            let want_gelu: Vec<f32> = reference::nn::gelu(&want.view()).iter().copied().collect();
            let want: Vec<f32> = want.iter().copied().collect();
            let (tx, tw, tb) = (
                Tensor::from_array(ctx, &x).unwrap(),
                Tensor::from_array(ctx, &w).unwrap(),
                Tensor::from_array(ctx, &b).unwrap(),
            );
            let got = ops::linear(&tx, &tw, Some(&tb)).unwrap();
            let mut ys = lead.to_vec();
            ys.push(n);
            assert_eq!(got.shape(), &ys[..]);
            assert_close(ctx, &format!("linear {xs:?}"), &got.to_vec().unwrap(), &want, GATE);
            // The residual add fused into the same epilogue (every path: matvec, both tiles, split K).
            let res = random(&mut rng, &ys);
            let want_res: Vec<f32> = want.iter().zip(res.iter()).map(|(a, b)| a + b).collect();
            let got = ops::linear_residual(&tx, &tw, &tb, &Tensor::from_array(ctx, &res).unwrap()).unwrap();
            assert_close(
                ctx,
                &format!("linear_residual {xs:?}"),
                &got.to_vec().unwrap(),
                &want_res,
                GATE,
            );
            let got = ops::linear_gelu(&tx, &tw, Some(&tb)).unwrap();
            assert_close(
                ctx,
                &format!("linear_gelu {xs:?}"),
                &got.to_vec().unwrap(),
                &want_gelu,
                GATE,
            );
        }
        // No bias, and a non-dense x (a transposed view) that goes in as a batch.
        let x = Tensor::from_array(ctx, &random(&mut rng, &[5, 3, 20]))
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        let w = Tensor::from_array(ctx, &random(&mut rng, &[20, 9])).unwrap();
        let want = reference::matmul::matmul(&x.to_array().unwrap().view(), &w.to_array().unwrap().view()).unwrap();
        let got = ops::linear(&x, &w, None).unwrap();
        assert_eq!(got.shape(), &[3, 5, 9]);
        let want: Vec<f32> = want.iter().copied().collect();
        assert_close(ctx, "linear on a view", &got.to_vec().unwrap(), &want, GATE);
    });
}

#[test]
fn matmul_bad_input_names_op_and_shapes() {
    each_adapter(|ctx| {
        let t = |s: &[usize]| Tensor::zeros(ctx, s).unwrap();
        let e = ops::matmul(&t(&[2, 3]), &t(&[4, 5])).unwrap_err().to_string();
        assert!(
            e.contains("matmul") && e.contains("[2, 3]") && e.contains("[4, 5]"),
            "{e}"
        );
        let e = ops::matmul(&t(&[2, 2, 3]), &t(&[3, 3, 5])).unwrap_err().to_string();
        assert!(
            e.contains("matmul") && e.contains("batch") && e.contains("[2, 2, 3]"),
            "{e}"
        );
        let e = ops::matmul(&t(&[3]), &t(&[3, 5])).unwrap_err().to_string();
        assert!(e.contains("matmul") && e.contains("rank >= 2"), "{e}");
        let e = ops::matmul_with(&t(&[2, 3]), &t(&[3, 5]), MatmulPath::Matvec)
            .unwrap_err()
            .to_string();
        assert!(e.contains("M = 1"), "{e}");
        let e = ops::linear(&t(&[4, 3]), &t(&[4, 5]), None).unwrap_err().to_string();
        assert!(
            e.contains("linear") && e.contains("[4, 3]") && e.contains("[4, 5]"),
            "{e}"
        );
        let e = ops::linear(&t(&[4, 3]), &t(&[3, 5]), Some(&t(&[4])))
            .unwrap_err()
            .to_string();
        assert!(e.contains("linear") && e.contains("bias"), "{e}");
        // Five batch axes that no broadcast pattern lets merge: more than the kernels address.
        let a = t(&[2, 1, 2, 1, 2, 3, 4]);
        let b = t(&[1, 2, 1, 2, 1, 4, 5]);
        let e = ops::matmul(&a, &b).unwrap_err().to_string();
        assert!(
            e.contains("matmul") && e.contains("[2, 1, 2, 1, 2, 3, 4]") && e.contains("batch"),
            "{e}"
        );
    });
}

#[test]
fn matmul_on_the_cpu_context_is_the_reference() {
    let ctx = Context::cpu();
    let mut rng = Rng::new(66);
    let (a, b, bias) = (
        random(&mut rng, &[2, 5, 7]),
        random(&mut rng, &[7, 3]),
        random(&mut rng, &[3]),
    );
    // An independent triple loop in f64 (not the engine's reference, which the CPU context runs).
    let mut want = vec![0f32; 2 * 5 * 3];
    let mut want_bias = want.clone();
    for z in 0..2 {
        for i in 0..5 {
            for j in 0..3 {
                let s: f64 = (0..7).map(|k| a[[z, i, k]] as f64 * b[[k, j]] as f64).sum();
                want[(z * 5 + i) * 3 + j] = s as f32;
                want_bias[(z * 5 + i) * 3 + j] = (s + bias[[j]] as f64) as f32;
            }
        }
    }
    let (ta, tb, tbias) = (
        Tensor::from_array(&ctx, &a).unwrap(),
        Tensor::from_array(&ctx, &b).unwrap(),
        Tensor::from_array(&ctx, &bias).unwrap(),
    );
    let got = ops::matmul(&ta, &tb).unwrap();
    assert_eq!(got.shape(), &[2, 5, 3]);
    assert_close(&ctx, "matmul on the CPU context", &got.to_vec().unwrap(), &want, GATE);
    let got = ops::linear(&ta, &tb, Some(&tbias)).unwrap().to_vec().unwrap();
    assert_close(&ctx, "linear on the CPU context", &got, &want_bias, GATE);
}
