//! The four scans, forward and backward: the quick parity subset on every adapter (every op,
//! every (k, v), odd T, both strategies), the route (kernel or reference), every bad-input
//! error, non-finite inputs, and the reference gradients against central finite differences.

use wgsl_compute::check::{compare, gates, Gate, Rng};
use wgsl_compute::parity::{self, scan::ScanCase, scan::ScanOp};
use wgsl_compute::reference::scan::{self as reference, AffineShape};
use wgsl_compute::scan::{self, Route, ScanOptions, Strategy};
use wgsl_compute::{Context, DeviceKind, Error, Tensor};

use crate::common::{assert_close, each_adapter, each_adapter_alone};

#[test]
fn scan_parity_quick_cases_pass() {
    let cases = parity::scan::scan_cases(false);
    // The subset still covers every (k, v), both strategies, both directions.
    for k in [1, 2, 4, 8, 16] {
        for v in [1, 2, 4, 8, 16] {
            assert!(cases
                .iter()
                .any(|c| c.op == ScanOp::Affine && c.k == k && c.v == v && c.backward));
        }
    }
    assert!(cases.iter().any(|c| matches!(c.strategy, Strategy::Chunked { .. })));
    assert!(cases.iter().any(|c| c.strategy == Strategy::Lanes));
    each_adapter(|ctx| assert_rows_pass(ctx, &cases));
}

/// Runs every parity case on `ctx` and fails with the table rows of those that did not pass.
fn assert_rows_pass(ctx: &Context, cases: &[ScanCase]) {
    let failed: Vec<String> = cases
        .iter()
        .map(|c| pollster::block_on(parity::scan::run_case(ctx, c)))
        .filter(|row| !row.passed)
        .map(|row| parity::markdown_row(&row))
        .collect();
    assert!(
        failed.is_empty(),
        "on {} ({:?}):\n{}",
        ctx.info().name,
        ctx.info().backend,
        failed.join("\n")
    );
}

#[test]
fn scan_specialised_kernels_cross_their_unrolls_and_blocks() {
    // matrix_scan's and k = 8's own kernels at T around their unrolled steps and staged
    // blocks, odd N, more lanes than a workgroup holds, both strategies and directions.
    // A subset (software adapters build every pipeline slowly); the parity suite runs all.
    let cases: Vec<ScanCase> = parity::scan::specialised_cases(&mut 5000)
        .into_iter()
        .filter(|c| (c.op == ScanOp::Matrix && c.t == 17) || ([4, 16].contains(&c.v) && [9, 33].contains(&c.t)))
        .collect();
    assert!(cases.iter().any(|c| c.op == ScanOp::Matrix && c.backward));
    assert!(cases.iter().any(|c| c.k == 8 && c.v == 16 && c.t == 33 && c.backward));
    each_adapter(|ctx| assert_rows_pass(ctx, &cases));
}

#[test]
fn scan_automatic_strategy_at_long_t_and_few_lanes() {
    // Few lanes and long T: auto picks the chunked plan here; the result must not care.
    each_adapter(|ctx| {
        for (op, k, v) in [(ScanOp::Affine, 4, 2), (ScanOp::Log, 1, 1), (ScanOp::Linear, 1, 1)] {
            for backward in [false, true] {
                let case = ScanCase {
                    op,
                    backward,
                    b: 1,
                    t: 1500,
                    n: 2,
                    k,
                    v,
                    h0: true,
                    strategy: Strategy::Auto,
                    seed: 77,
                    dtype: wgsl_compute::DType::F32,
                };
                let row = pollster::block_on(parity::scan::run_case(ctx, &case));
                assert!(row.passed, "{}", parity::markdown_row(&row));
            }
        }
    });
}

#[test]
fn scan_long_lane_walks_resume_across_segments() {
    // Software adapters split a long lane walk into dispatches (their loop limiter would cut
    // it short otherwise): k = 16 at T = 1000, and the channel scans (four channels per
    // invocation and one) at T = 8000 cross a boundary, and one-step chunks at T = 1500 are lengthened so the carry walk stays within budget.
    // Half walks resume from their f32 state, not from the rounded output: the channel scans
    // at two channels and one, and matrix_scan (segments of 5000 steps), which writes halves.
    use wgsl_compute::DType::{BF16, F16, F32};
    each_adapter(|ctx| {
        let one_step = Strategy::Chunked { chunk: Some(1) };
        for (op, t, n, k, v, strategy, dtype) in [
            (ScanOp::Affine, 1000, 1, 16, 2, Strategy::Lanes, F32),
            (ScanOp::Log, 8000, 3, 1, 1, Strategy::Lanes, F32),
            (ScanOp::Log, 8000, 4, 1, 1, Strategy::Lanes, F32),
            (ScanOp::Linear, 8001, 8, 1, 1, Strategy::Lanes, F32),
            (ScanOp::Linear, 8001, 3, 1, 1, Strategy::Lanes, F32),
            (ScanOp::Affine, 1500, 1, 16, 1, one_step, F32),
            (ScanOp::Linear, 8001, 2, 1, 1, Strategy::Lanes, F16),
            (ScanOp::Log, 8000, 3, 1, 1, Strategy::Lanes, BF16),
            (ScanOp::Matrix, 5003, 1, 2, 1, Strategy::Lanes, BF16),
        ] {
            for backward in [false, true] {
                let case = ScanCase {
                    op,
                    backward,
                    b: 1,
                    t,
                    n,
                    k,
                    v,
                    h0: true,
                    strategy,
                    seed: 78,
                    dtype,
                };
                let row = pollster::block_on(parity::scan::run_case(ctx, &case));
                assert!(row.passed, "{}", parity::markdown_row(&row));
            }
        }
    });
}

#[test]
fn scan_channel_kernels_carry_four_channels_only_when_the_walks_are_many() {
    // What the parity rows cannot see: which kernel ran. One channel per invocation unless D
    // divides into fours and B x D reaches 4 x 8192 walks (a quarter of them still fill a
    // GPU); linear_scan's backward is one walk that writes dA itself (no separate dA pass).
    // Nothing else runs meanwhile, so the counts are exact.
    let opts = ScanOptions {
        route: Some(Route::Gpu),
        strategy: Strategy::Lanes,
    };
    let scalar = (
        "scan/linear_scalar::scan_lanes",
        "scan/parallel_scan_log_scalar::scan_lanes",
    );
    let vec4 = ("scan/linear::scan_lanes", "scan/parallel_scan_log::scan_lanes");
    each_adapter_alone(|ctx| {
        let mut rng = Rng::new(31);
        for (b, d, (linear, log)) in [(2, 8, scalar), (2, 5, scalar), (2, 16_380, scalar), (2, 16_384, vec4)] {
            let t = 3;
            let seq =
                |rng: &mut Rng, t: usize| Tensor::from_slice(ctx, &[b, t, d], &rng.vec_range(b * t * d, -0.9, 0.9));
            let (a, x, lv) = (
                seq(&mut rng, t).unwrap(),
                seq(&mut rng, t).unwrap(),
                seq(&mut rng, t + 1).unwrap(),
            );
            ctx.reset_profile().unwrap();
            ctx.set_profiling(true);
            let h = scan::linear_scan_with(&a, &x, None, &opts).unwrap();
            let g = scan::linear_scan_backward_with(&a, None, &h, &x, &opts).unwrap();
            let lh = scan::parallel_scan_log_with(&a, &lv, &opts).unwrap();
            g.da.to_vec().unwrap();
            lh.to_vec().unwrap();
            let p = ctx.profile().unwrap();
            ctx.set_profiling(false);
            ctx.reset_profile().unwrap();
            let calls = |name: &str| p.kernel(name).map_or(0, |k| k.calls);
            assert_eq!(calls(linear), 2, "B = {b}, D = {d} on {}: {p}", ctx.info().name);
            assert_eq!(calls(log), 1, "B = {b}, D = {d} on {}: {p}", ctx.info().name);
            assert!(
                p.kernels.iter().all(|k| k.name == linear || k.name == log),
                "B = {b}, D = {d}: only the channel kernels run: {p}"
            );
        }
    });
}

#[test]
fn scan_lookback_is_one_pass_where_offered_and_matches_the_reference() {
    // Strategy::LookBack: on every adapter linear_scan and parallel_scan_log are a clear and
    // ONE look-back pass per direction (the fallback needs no forward-progress guarantee).
    // They match the reference, here at B2 T4099 D300 (75 vec4 walks a batch, so 150 lanes
    // of three workgroups a chunk, the last one part full) over 129 chunks of 32 and a
    // ragged last chunk.
    let opts = ScanOptions {
        route: Some(Route::Gpu),
        strategy: Strategy::LookBack,
    };
    each_adapter_alone(|ctx| {
        let offered = ctx.info().kind != DeviceKind::CpuReference;
        let (b, t, d) = (2, 4099, 300);
        let mut rng = Rng::new(41);
        let seq = |rng: &mut Rng| Tensor::from_slice(ctx, &[b, t, d], &rng.vec_range(b * t * d, -0.9, 0.9));
        let (a, x) = (seq(&mut rng).unwrap(), seq(&mut rng).unwrap());
        ctx.reset_profile().unwrap();
        ctx.set_profiling(true);
        let h = scan::linear_scan_with(&a, &x, None, &opts).unwrap();
        let g = scan::linear_scan_backward_with(&a, None, &h, &x, &opts).unwrap();
        let (hv, dav) = (h.to_vec().unwrap(), g.da.to_vec().unwrap());
        let p = ctx.profile().unwrap();
        ctx.set_profiling(false);
        ctx.reset_profile().unwrap();
        let calls = |name: &str| p.kernel(name).map_or(0, |k| k.calls);
        let expected = if offered { 2 } else { 0 };
        assert_eq!(
            calls("scan/linear_lookback_vec4.wgsl::scan_lookback"),
            expected,
            "on {}: {p}",
            ctx.info().name
        );
        assert_eq!(
            calls("scan/linear_lookback_vec4.wgsl::scan_lookback_clear"),
            expected,
            "{p}"
        );
        if offered {
            assert_eq!(p.kernels.len(), 2, "nothing but the look-back passes runs: {p}");
        }
        let shape = AffineShape { b, t, n: d, k: 1, v: 1 };
        let (av, xv) = (a.to_vec().unwrap(), x.to_vec().unwrap());
        let wide = |v: &[f32]| v.iter().map(|&e| f64::from(e)).collect::<Vec<f64>>();
        let narrow = |v: &[f64]| v.iter().map(|&e| e as f32).collect::<Vec<f32>>();
        let want = reference::affine_forward_f64(&shape, &wide(&av), &wide(&xv), None).unwrap();
        let (da, _, _) = reference::affine_backward_f64(&shape, &wide(&av), None, &want, &wide(&xv)).unwrap();
        assert_close(ctx, "lookback forward", &hv, &narrow(&want), gates::SCAN_AFFINE);
        assert_close(ctx, "lookback dA", &dav, &narrow(&da), gates::SCAN_AFFINE_BACKWARD);

        // parallel_scan_log: its own look-back passes, log-space forward, linear adjoint.
        let lc = Tensor::from_slice(ctx, &[b, t, d], &rng.vec_range(b * t * d, -0.5, -0.001)).unwrap();
        let lv = Tensor::from_slice(ctx, &[b, t + 1, d], &rng.vec_range(b * (t + 1) * d, -1.0, 1.0)).unwrap();
        ctx.set_profiling(true);
        let lh = scan::parallel_scan_log_with(&lc, &lv, &opts).unwrap();
        let lg = scan::parallel_scan_log_backward_with(&lc, &lv, &lh, &x, &opts).unwrap();
        let (lhv, dlcv) = (lh.to_vec().unwrap(), lg.d_log_coeffs.to_vec().unwrap());
        let p = ctx.profile().unwrap();
        ctx.set_profiling(false);
        ctx.reset_profile().unwrap();
        let calls = |name: &str| p.kernel(name).map_or(0, |k| k.calls);
        assert_eq!(
            calls("scan/parallel_scan_log_lookback_vec4.wgsl::scan_lookback"),
            expected,
            "{p}"
        );
        let (lca, lva) = (lc.to_array().unwrap(), lv.to_array().unwrap());
        let want = reference::parallel_scan_log(&lca.view(), &lva.view()).unwrap();
        let flat = |a: &ndarray::ArrayD<f32>| a.iter().copied().collect::<Vec<f32>>();
        assert_close(ctx, "log lookback forward", &lhv, &flat(&want), gates::SCAN_LOG);
        let (dlc, _) = reference::parallel_scan_log_backward(
            &lca.view(),
            &lva.view(),
            &want.view(),
            &x.to_array().unwrap().view(),
        )
        .unwrap();
        assert_close(ctx, "log lookback d lc", &dlcv, &flat(&dlc), gates::SCAN_LOG_BACKWARD);
    });
}

#[test]
fn scan_lookback_on_empty_inputs_returns_empty_outputs() {
    // No lanes (B = 0 or D = 0): the forced look-back neither fails nor hangs. No steps
    // (T = 0) is the scans' usual error, naming the op and the argument.
    let opts = ScanOptions {
        route: Some(Route::Gpu),
        strategy: Strategy::LookBack,
    };
    each_adapter(|ctx| {
        let empty_t = Tensor::zeros(ctx, &[2, 0, 3]).unwrap();
        expect_error(
            scan::linear_scan_with(&empty_t, &empty_t, None, &opts),
            &["linear_scan", "T >= 1"],
        );
        for (b, t, d) in [(0, 40, 3), (2, 40, 0)] {
            let a = Tensor::zeros(ctx, &[b, t, d]).unwrap();
            let h = scan::linear_scan_with(&a, &a, None, &opts).unwrap();
            assert_eq!(h.shape(), &[b, t, d]);
            assert!(h.to_vec().unwrap().is_empty());
            let lv = Tensor::zeros(ctx, &[b, t + 1, d]).unwrap();
            let lh = scan::parallel_scan_log_with(&a, &lv, &opts).unwrap();
            assert_eq!(lh.shape(), &[b, t, d]);
            let g = scan::parallel_scan_log_backward_with(&a, &lv, &lh, &lh, &opts).unwrap();
            assert_eq!(g.d_log_values.shape(), &[b, t + 1, d]);
        }
    });
}

fn affine_inputs(rng: &mut Rng, s: &AffineShape) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let steps = s.b * s.t * s.n;
    let scale = 0.6 / (s.k as f64).sqrt();
    (
        rng.vec_range(steps * s.k * s.k, -scale, scale),
        rng.vec_range(steps * s.k * s.v, -1.0, 1.0),
        rng.vec_range(s.b * s.n * s.k * s.v, -1.0, 1.0),
    )
}

#[test]
fn scan_route_cpu_gpu_and_auto_outside_the_envelope() {
    assert_eq!(Route::parse("CPU").unwrap(), Route::Cpu);
    // "eager" names the op-by-op path elsewhere (GPT-2's `--eager`), never the CPU route.
    assert!(Route::parse("eager").is_err());
    assert_eq!(Route::parse("gpu").unwrap(), Route::Gpu);
    assert_eq!(Route::parse("auto").unwrap(), Route::Auto);
    let e = Route::parse("triton").unwrap_err().to_string();
    assert!(e.contains("ENGINE_SCAN") && e.contains("triton"), "{e}");

    let mut rng = Rng::new(5);
    // k = 3 is outside the GPU envelope {1, 2, 4, 8, 16}.
    let s = AffineShape {
        b: 2,
        t: 9,
        n: 3,
        k: 3,
        v: 2,
    };
    let (a, b, h0) = affine_inputs(&mut rng, &s);
    let f64s = |x: &[f32]| x.iter().map(|&v| v as f64).collect::<Vec<_>>();
    let want: Vec<f32> = reference::affine_forward_f64(&s, &f64s(&a), &f64s(&b), Some(&f64s(&h0)))
        .unwrap()
        .iter()
        .map(|&v| v as f32)
        .collect();
    let run = |ctx: &Context, d: Route| {
        let at = Tensor::from_slice(ctx, &[2, 9, 3, 3, 3], &a).unwrap();
        let bt = Tensor::from_slice(ctx, &[2, 9, 3, 3, 2], &b).unwrap();
        let h0t = Tensor::from_slice(ctx, &[2, 3, 3, 2], &h0).unwrap();
        scan::matrix_affine_scan_with(&at, &bt, Some(&h0t), &ScanOptions::route(d))
    };
    each_adapter(|ctx| {
        let e = run(ctx, Route::Gpu).unwrap_err();
        assert!(matches!(e, Error::Fallback { .. }), "{e}");
        assert!(e.to_string().contains("k = 3"), "{e}");
        for d in [Route::Auto, Route::Cpu] {
            let h = run(ctx, d).unwrap();
            assert!(h.context().same(ctx), "the result stays on the caller's context");
            assert_close(
                ctx,
                &format!("k=3 under {d:?}"),
                &h.to_vec().unwrap(),
                &want,
                Gate::new(1e-6, 0.0),
            );
        }
    });
    // The CPU context: auto and cpu run the reference, gpu is an error.
    let cpu = Context::cpu();
    assert_eq!(run(&cpu, Route::Auto).unwrap().to_vec().unwrap(), want);
    let e = run(&cpu, Route::Gpu).unwrap_err().to_string();
    assert!(e.contains("GPU context"), "{e}");
}

#[test]
fn scan_cpu_route_on_a_gpu_context_matches_the_gpu_kernel() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(9);
        let (b, t, d) = (2, 33, 5);
        let lc: Vec<f32> = rng
            .vec_normal(b * t * d, 1.0)
            .iter()
            .map(|&x| -(1.0 + x.exp()).ln())
            .collect();
        let lv = rng.vec_normal(b * (t + 1) * d, 0.5);
        let g = rng.vec_normal(b * t * d, 1.0);
        let lct = Tensor::from_slice(ctx, &[b, t, d], &lc).unwrap();
        let lvt = Tensor::from_slice(ctx, &[b, t + 1, d], &lv).unwrap();
        let gt = Tensor::from_slice(ctx, &[b, t, d], &g).unwrap();
        let mut outs = vec![];
        for disp in [Route::Cpu, Route::Gpu] {
            let opts = ScanOptions::route(disp);
            let h = scan::parallel_scan_log_with(&lct, &lvt, &opts).unwrap();
            let gr = scan::parallel_scan_log_backward_with(&lct, &lvt, &h, &gt, &opts).unwrap();
            outs.push([h, gr.d_log_coeffs, gr.d_log_values].map(|x| x.to_vec().unwrap()));
        }
        for (i, gate) in [
            (0, gates::SCAN_LOG),
            (1, gates::SCAN_LOG_BACKWARD),
            (2, gates::SCAN_LOG_BACKWARD),
        ] {
            assert_close(ctx, &format!("cpu vs gpu output {i}"), &outs[1][i], &outs[0][i], gate);
        }
    });
}

/// The error's text, which must name `op` and every fragment of `parts`.
#[track_caller]
fn expect_error<T: std::fmt::Debug>(r: wgsl_compute::Result<T>, parts: &[&str]) {
    let e = r.unwrap_err().to_string();
    for p in parts {
        assert!(e.contains(p), "error `{e}` should mention `{p}`");
    }
}

#[test]
fn scan_bad_inputs_are_errors_naming_the_argument() {
    let ctx = &Context::cpu();
    let z = |shape: &[usize]| Tensor::zeros(ctx, shape).unwrap();
    let mut bad_contexts = vec![ctx.clone()];
    bad_contexts.extend(crate::common::contexts().iter().cloned());
    for ctx in &bad_contexts {
        let z = |shape: &[usize]| Tensor::zeros(ctx, shape).unwrap();
        // linear_scan: rank, mismatch, T = 0, h0.
        expect_error(
            scan::linear_scan(&z(&[2, 3]), &z(&[2, 3]), None),
            &["linear_scan", "`a`", "rank 3"],
        );
        expect_error(
            scan::linear_scan(&z(&[2, 3, 4]), &z(&[3, 3, 4]), None),
            &["linear_scan", "a", "b"],
        );
        expect_error(
            scan::linear_scan(&z(&[2, 3, 4]), &z(&[2, 5, 4]), None),
            &["[2, 3, 4]", "[2, 5, 4]"],
        );
        expect_error(
            scan::linear_scan(&z(&[2, 0, 4]), &z(&[2, 0, 4]), None),
            &["`a`", "T >= 1"],
        );
        expect_error(
            scan::linear_scan(&z(&[2, 3, 4]), &z(&[2, 3, 4]), Some(&z(&[2, 5]))),
            &["`h0`", "[2, 4]"],
        );
        // matrix_scan.
        expect_error(
            scan::matrix_scan(&z(&[2, 3, 4, 3, 3]), &z(&[2, 3, 4, 3]), None),
            &["matrix_scan", "`A`"],
        );
        expect_error(
            scan::matrix_scan(&z(&[2, 3, 4, 2, 2]), &z(&[2, 3, 4, 2, 1]), None),
            &["`b`", "rank 4"],
        );
        expect_error(
            scan::matrix_scan(&z(&[2, 3, 4, 2, 2]), &z(&[2, 3, 4, 2]), Some(&z(&[2, 4]))),
            &["`h0`", "(B, N, 2)"],
        );
        // matrix_affine_scan: rank, non-square, batch / time mismatch, T = 0, h0, v = 0.
        expect_error(
            scan::matrix_affine_scan(&z(&[2, 3, 4, 2]), &z(&[2, 3, 4, 2, 1]), None),
            &["`A`", "rank 5"],
        );
        expect_error(
            scan::matrix_affine_scan(&z(&[2, 3, 4, 2, 4]), &z(&[2, 3, 4, 2, 1]), None),
            &["`A`", "square"],
        );
        expect_error(
            scan::matrix_affine_scan(&z(&[2, 3, 4, 2, 2]), &z(&[1, 3, 4, 2, 1]), None),
            &["A", "B", "[1, 3, 4, 2, 1]"],
        );
        expect_error(
            scan::matrix_affine_scan(&z(&[2, 3, 4, 2, 2]), &z(&[2, 4, 4, 2, 1]), None),
            &["A", "B"],
        );
        expect_error(
            scan::matrix_affine_scan(&z(&[2, 0, 4, 2, 2]), &z(&[2, 0, 4, 2, 1]), None),
            &["T >= 1"],
        );
        expect_error(
            scan::matrix_affine_scan(&z(&[2, 3, 4, 2, 2]), &z(&[2, 3, 4, 2, 0]), None),
            &["`B`", "v >= 1"],
        );
        expect_error(
            scan::matrix_affine_scan(&z(&[2, 3, 4, 2, 2]), &z(&[2, 3, 4, 2, 8]), Some(&z(&[2, 4, 2, 4]))),
            &["`h0`", "[2, 4, 2, 8]"],
        );
        // parallel_scan_log: log_values must be (B, T + 1, D).
        expect_error(
            scan::parallel_scan_log(&z(&[2, 3, 4]), &z(&[2, 3, 4])),
            &["`log_values`", "[2, 4, 4]"],
        );
        expect_error(
            scan::parallel_scan_log(&z(&[2, 3]), &z(&[2, 4])),
            &["`log_coeffs`", "rank 3"],
        );
        expect_error(scan::parallel_scan_log(&z(&[2, 0, 4]), &z(&[2, 1, 4])), &["T >= 1"]);
        // Backward: a gradient of the wrong shape, forward outputs of another call's shape.
        let a = z(&[2, 3, 4]);
        expect_error(
            scan::linear_scan_backward(&a, None, &z(&[2, 3, 4]), &z(&[2, 3, 5])),
            &["`grad_h`", "[2, 3, 4]"],
        );
        expect_error(
            scan::linear_scan_backward(&a, None, &z(&[2, 6, 4]), &z(&[2, 6, 4])),
            &["linear_scan_backward", "h"],
        );
        let a5 = z(&[2, 3, 4, 2, 2]);
        expect_error(
            scan::matrix_affine_scan_backward(&a5, None, &z(&[2, 3, 4, 2, 4]), &z(&[2, 3, 4, 2, 2])),
            &["`grad_h`", "[2, 3, 4, 2, 4]"],
        );
        expect_error(
            scan::matrix_affine_scan_backward(&a5, None, &z(&[2, 3, 5, 2, 4]), &z(&[2, 3, 5, 2, 4])),
            &["matrix_affine_scan_backward", "H"],
        );
        expect_error(
            scan::matrix_scan_backward(&a5, Some(&z(&[2, 4])), &z(&[2, 3, 4, 2]), &z(&[2, 3, 4, 2])),
            &["`h0`"],
        );
        expect_error(
            scan::parallel_scan_log_backward(&z(&[2, 3, 4]), &z(&[2, 4, 4]), &z(&[2, 4, 4]), &z(&[2, 3, 4])),
            &["`h`", "forward output"],
        );
        expect_error(
            scan::parallel_scan_log_backward(&z(&[2, 3, 4]), &z(&[2, 4, 4]), &z(&[2, 3, 4]), &z(&[1, 3, 4])),
            &["`grad_h`"],
        );
    }
    // Tensors of two contexts.
    if let Some(gpu) = crate::common::contexts().first() {
        let other = Tensor::zeros(gpu, &[2, 3, 4]).unwrap();
        expect_error(
            scan::linear_scan(&z(&[2, 3, 4]), &other, None),
            &["`b`", "different context"],
        );
    }
}

#[test]
fn scan_non_finite_inputs_do_not_crash() {
    // A NaN or an infinity poisons its own lane from the step it enters onwards; every other
    // lane is unaffected. (WGSL lets the compiler assume finite values, so what the poisoned
    // lane holds is unspecified: NaN, an infinity, or a finite garbage value.)
    // T = 70: the look-back's three chunks pass a poisoned lane's flags on like any value.
    each_adapter(|ctx| {
        let (b, t, d) = (1, 70, 4);
        let mut rng = Rng::new(3);
        let a = rng.vec_range(b * t * d, -0.9, 0.9);
        let mut x = rng.vec_range(b * t * d, -1.0, 1.0);
        x[2 * d + 1] = f32::NAN; // (b 0, t 2, channel 1)
        x[3 * d + 2] = f32::INFINITY; // (b 0, t 3, channel 2)
        let strategies = [
            Strategy::Lanes,
            Strategy::Chunked { chunk: Some(2) },
            Strategy::LookBack,
        ];
        for strategy in strategies {
            let opts = ScanOptions {
                route: Some(Route::Gpu),
                strategy,
            };
            let at = Tensor::from_slice(ctx, &[b, t, d], &a).unwrap();
            let xt = Tensor::from_slice(ctx, &[b, t, d], &x).unwrap();
            let h = scan::linear_scan_with(&at, &xt, None, &opts).unwrap().to_vec().unwrap();
            let want = reference::affine_forward_f64(
                &AffineShape { b, t, n: d, k: 1, v: 1 },
                &a.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                &x.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                None,
            )
            .unwrap();
            for c in [0, 3] {
                let got: Vec<f32> = (0..t).map(|s| h[s * d + c]).collect();
                let w: Vec<f32> = (0..t).map(|s| want[s * d + c] as f32).collect();
                assert_close(
                    ctx,
                    &format!("clean channel {c}, {strategy}"),
                    &got,
                    &w,
                    gates::SCAN_AFFINE,
                );
            }
            // Before the NaN enters, channel 1 is still exact.
            assert!(compare(&h[1..2], &[want[1] as f32], gates::SCAN_AFFINE).ok);

            let lc = vec![-0.5f32; b * t * d];
            let mut lv = vec![0.1f32; b * (t + 1) * d];
            lv[2 * d] = f32::NAN;
            lv[4 * d + 3] = f32::INFINITY;
            let lct = Tensor::from_slice(ctx, &[b, t, d], &lc).unwrap();
            let lvt = Tensor::from_slice(ctx, &[b, t + 1, d], &lv).unwrap();
            let h = scan::parallel_scan_log_with(&lct, &lvt, &opts)
                .unwrap()
                .to_vec()
                .unwrap();
            assert_eq!(h.len(), b * t * d);
            let want = reference::log_forward_f64(
                b,
                t,
                d,
                &lc.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                &lv.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            )
            .unwrap();
            for c in [1, 2] {
                let got: Vec<f32> = (0..t).map(|s| h[s * d + c]).collect();
                let w: Vec<f32> = (0..t).map(|s| want[s * d + c] as f32).collect();
                assert_close(
                    ctx,
                    &format!("clean log channel {c}, {strategy}"),
                    &got,
                    &w,
                    gates::SCAN_LOG,
                );
            }
        }
    });
}

/// sum(w * f(x)) for the finite-difference checks.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Central differences of `loss` at `x`, each within `tol` of `grad`.
#[track_caller]
fn check_fd(name: &str, x: &[f64], grad: &[f64], loss: impl Fn(&[f64]) -> f64) {
    let eps = 1e-6;
    let mut x = x.to_vec();
    for i in 0..x.len() {
        let keep = x[i];
        x[i] = keep + eps;
        let up = loss(&x);
        x[i] = keep - eps;
        let down = loss(&x);
        x[i] = keep;
        let fd = (up - down) / (2.0 * eps);
        assert!(
            (fd - grad[i]).abs() <= 1e-6 * (1.0 + fd.abs()),
            "{name}[{i}]: finite difference {fd}, reference gradient {}",
            grad[i]
        );
    }
}

#[test]
fn scan_reference_gradients_match_finite_differences() {
    let mut rng = Rng::new(11);
    for (k, v, with_h0) in [(1, 1, true), (2, 1, false), (3, 2, true), (4, 4, true)] {
        let s = AffineShape { b: 2, t: 5, n: 2, k, v };
        let f = |n: usize, lo: f64, hi: f64, rng: &mut Rng| (0..n).map(|_| rng.range(lo, hi)).collect::<Vec<f64>>();
        let steps = s.b * s.t * s.n;
        let a = f(steps * k * k, -0.7, 0.7, &mut rng);
        let b = f(steps * k * v, -1.0, 1.0, &mut rng);
        let h0 = f(s.b * s.n * k * v, -1.0, 1.0, &mut rng);
        let w = f(steps * k * v, -1.0, 1.0, &mut rng);
        let h0o = with_h0.then_some(&h0[..]);
        let h = reference::affine_forward_f64(&s, &a, &b, h0o).unwrap();
        let (da, db, dh0) = reference::affine_backward_f64(&s, &a, h0o, &h, &w).unwrap();
        let name = format!("affine k={k} v={v}");
        check_fd(&format!("{name} dA"), &a, &da, |x| {
            dot(&w, &reference::affine_forward_f64(&s, x, &b, h0o).unwrap())
        });
        check_fd(&format!("{name} dB"), &b, &db, |x| {
            dot(&w, &reference::affine_forward_f64(&s, &a, x, h0o).unwrap())
        });
        if with_h0 {
            check_fd(&format!("{name} dh0"), &h0, &dh0, |x| {
                dot(&w, &reference::affine_forward_f64(&s, &a, &b, Some(x)).unwrap())
            });
        }
    }
    let (b, t, d) = (2, 6, 3);
    let lc: Vec<f64> = (0..b * t * d).map(|_| -(1.0 + rng.normal().exp()).ln()).collect();
    let lv: Vec<f64> = (0..b * (t + 1) * d).map(|_| 0.5 * rng.normal()).collect();
    let w: Vec<f64> = (0..b * t * d).map(|_| rng.normal()).collect();
    let h = reference::log_forward_f64(b, t, d, &lc, &lv).unwrap();
    let (dlc, dlv) = reference::log_backward_f64(b, t, d, &lc, &lv, &h, &w).unwrap();
    check_fd("log d log_coeffs", &lc, &dlc, |x| {
        dot(&w, &reference::log_forward_f64(b, t, d, x, &lv).unwrap())
    });
    check_fd("log d log_values", &lv, &dlv, |x| {
        dot(&w, &reference::log_forward_f64(b, t, d, &lc, x).unwrap())
    });
    // And the log-space definition: h = exp(a* + logcumsumexp(lv - a*))[:, 1:].
    for bi in 0..b {
        for c in 0..d {
            let (mut astar, mut terms) = (0.0, vec![lv[bi * (t + 1) * d + c]]);
            for s in 0..t {
                astar += lc[(bi * t + s) * d + c];
                terms.push(lv[(bi * (t + 1) + s + 1) * d + c] - astar);
                let lse = terms.iter().map(|x| x.exp()).sum::<f64>().ln();
                let want = (astar + lse).exp();
                assert!((h[(bi * t + s) * d + c] - want).abs() < 1e-12 * (1.0 + want));
            }
        }
    }
}

#[test]
fn scan_half_channel_scans_pass_their_parity_rows() {
    // F16 and BF16: odd D (f32 outputs narrowed after), even D (one packed word per step),
    // T = 1, past a chunk, past the unroll blocks, both strategies and directions.
    let cases = parity::scan::half_cases(false);
    assert!(cases.iter().any(|c| c.n % 2 == 1 && c.backward));
    assert!(cases.iter().any(|c| c.t == 1));
    each_adapter(|ctx| assert_rows_pass(ctx, &cases));
}

#[test]
fn scan_half_views_at_odd_offsets_read_like_dense_inputs() {
    // A half view at an odd element offset starts in the middle of a packed word: the scans
    // take it through a dense copy, so the result equals the one from dense inputs, bit for bit.
    each_adapter(|ctx| {
        let opts = ScanOptions::route(Route::Gpu);
        for dtype in [wgsl_compute::DType::F16, wgsl_compute::DType::BF16] {
            let (b, t, d) = (2, 9, 6);
            let mut rng = Rng::new(31);
            // (B, T, D + 1) narrowed to channels 1..=D: offset 1, rows of D + 1 elements.
            let wide = |rng: &mut Rng, lo: f64, hi: f64| {
                Tensor::from_slice_as(ctx, &[b, t, d + 1], &rng.vec_range(b * t * (d + 1), lo, hi), dtype)
                    .unwrap()
                    .narrow(2, 1, d + 1)
                    .unwrap()
            };
            let a = wide(&mut rng, -0.9, 0.9);
            let x = wide(&mut rng, -1.0, 1.0);
            let h0 = Tensor::from_slice_as(ctx, &[b * d + 1], &rng.vec_range(b * d + 1, -1.0, 1.0), dtype)
                .unwrap()
                .narrow(0, 1, b * d + 1)
                .unwrap()
                .reshape(&[b, d])
                .unwrap();
            let dense = |t: &Tensor| t.to_dtype(dtype).unwrap();
            let got = scan::linear_scan_with(&a, &x, Some(&h0), &opts).unwrap();
            let want = scan::linear_scan_with(&dense(&a), &dense(&x), Some(&dense(&h0)), &opts).unwrap();
            assert_eq!(got.dtype(), dtype);
            assert_eq!(got.to_vec().unwrap(), want.to_vec().unwrap(), "{dtype} linear_scan");
            let g = scan::linear_scan_backward_with(&a, Some(&h0), &got, &x, &opts).unwrap();
            let w = scan::linear_scan_backward_with(&dense(&a), Some(&dense(&h0)), &want, &dense(&x), &opts).unwrap();
            for (name, got, want) in [("da", &g.da, &w.da), ("db", &g.db, &w.db), ("dh0", &g.dh0, &w.dh0)] {
                assert_eq!(got.dtype(), dtype, "{name}");
                assert_eq!(got.to_vec().unwrap(), want.to_vec().unwrap(), "{dtype} {name}");
            }
            let lv = Tensor::from_slice_as(ctx, &[b, t + 2, d], &rng.vec_normal(b * (t + 2) * d, 0.5), dtype)
                .unwrap()
                .narrow(1, 1, t + 2)
                .unwrap();
            let got = scan::parallel_scan_log_with(&a, &lv, &opts);
            // log_coeffs must be negative for minGRU, but any finite values scan the same way.
            let want = scan::parallel_scan_log_with(&dense(&a), &dense(&lv), &opts);
            assert_eq!(
                got.unwrap().to_vec().unwrap(),
                want.unwrap().to_vec().unwrap(),
                "{dtype} parallel_scan_log"
            );
        }
    });
}

#[test]
fn scan_half_inputs_of_mixed_dtypes_are_refused_by_name() {
    use wgsl_compute::DType;
    each_adapter_alone(|ctx| {
        let f32s = Tensor::from_slice(ctx, &[1, 2, 2], &[0.5, 0.5, 0.5, 0.5]).unwrap();
        let f16 = f32s.to_dtype(DType::F16).unwrap();
        let bf16 = f32s.to_dtype(DType::BF16).unwrap();
        let arg = |e: Error| match e {
            Error::DType {
                op,
                arg,
                expected,
                actual,
            } => format!("{op}/{arg}: {actual} for {expected}"),
            e => panic!("expected a dtype error, got {e}"),
        };
        let e = arg(scan::linear_scan(&f16, &bf16, None).unwrap_err());
        assert!(e.starts_with("linear_scan/b: BF16") && e.contains("F16"), "{e}");
        let e = arg(scan::linear_scan(&f16, &f16, Some(&f32s.reshape(&[2, 2]).unwrap())).unwrap_err());
        assert!(e.starts_with("linear_scan/h0: F32"), "{e}");
        let lv = Tensor::from_slice(ctx, &[1, 3, 2], &[0.0; 6]).unwrap();
        let e = arg(scan::parallel_scan_log(&bf16, &lv).unwrap_err());
        assert!(e.starts_with("parallel_scan_log/log_values: F32"), "{e}");
        let e = arg(scan::linear_scan_backward(&f16, None, &f16, &f32s).unwrap_err());
        assert!(e.starts_with("linear_scan_backward/grad_h: F32"), "{e}");
        let a = Tensor::from_slice(ctx, &[1, 1, 1, 2, 2], &[0.5; 4]).unwrap();
        let b = Tensor::from_slice(ctx, &[1, 1, 1, 2], &[0.5; 2]).unwrap();
        let e = arg(scan::matrix_scan(&a, &b.to_dtype(DType::F16).unwrap(), None).unwrap_err());
        assert!(e.starts_with("matrix_scan/b: F16"), "{e}");
    });
}

#[test]
fn stress_lookback_carries_repeat_without_a_hang_or_a_wrong_value() {
    // A chain of 128 chunks (B1 T4096 D64: 16 four-channel lanes, one workgroup a chunk),
    // every chunk's carry waiting on the one before, run ten times a direction on every
    // adapter: no run may hang, and every run must match the f64 reference. Run it with
    // LP_NUM_THREADS from 1 to 16 to vary how many workgroups the software adapters run at once.
    let opts = ScanOptions {
        route: Some(Route::Gpu),
        strategy: Strategy::LookBack,
    };
    each_adapter_alone(|ctx| {
        let (b, t, d) = (1, 4096, 64);
        let mut rng = Rng::new(43);
        let (av, xv) = (rng.vec_range(b * t * d, -0.9, 0.9), rng.vec_range(b * t * d, -0.9, 0.9));
        let a = Tensor::from_slice(ctx, &[b, t, d], &av).unwrap();
        let x = Tensor::from_slice(ctx, &[b, t, d], &xv).unwrap();
        let shape = AffineShape { b, t, n: d, k: 1, v: 1 };
        let wide = |v: &[f32]| v.iter().map(|&e| f64::from(e)).collect::<Vec<f64>>();
        let narrow = |v: &[f64]| v.iter().map(|&e| e as f32).collect::<Vec<f32>>();
        let want = reference::affine_forward_f64(&shape, &wide(&av), &wide(&xv), None).unwrap();
        let (da, _, _) = reference::affine_backward_f64(&shape, &wide(&av), None, &want, &wide(&xv)).unwrap();
        let (want, da) = (narrow(&want), narrow(&da));
        for run in 0..10 {
            let h = scan::linear_scan_with(&a, &x, None, &opts).unwrap();
            let g = scan::linear_scan_backward_with(&a, None, &h, &x, &opts).unwrap();
            assert_close(
                ctx,
                &format!("run {run} forward"),
                &h.to_vec().unwrap(),
                &want,
                gates::SCAN_AFFINE,
            );
            assert_close(
                ctx,
                &format!("run {run} dA"),
                &g.da.to_vec().unwrap(),
                &da,
                gates::SCAN_AFFINE_BACKWARD,
            );
        }
    });
}

#[test]
fn scan_padded_value_widths_keep_non_finite_inputs_in_their_column() {
    // v = 3 runs the v = 4 kernel on zero-padded values: a NaN, an infinity or an f32::MAX
    // that overflows poisons its own value column only, as in the unpadded scan (the
    // columns never mix), so the clean column matches the reference exactly as before.
    let s = AffineShape {
        b: 1,
        t: 9,
        n: 2,
        k: 2,
        v: 3,
    };
    let mut rng = Rng::new(21);
    let (a, mut b, h0) = affine_inputs(&mut rng, &s);
    let at = |t: usize, n: usize, r: usize, c: usize| (((t * s.n) + n) * s.k + r) * s.v + c;
    b[at(2, 0, 0, 0)] = f32::NAN;
    b[at(3, 1, 1, 0)] = f32::INFINITY;
    b[at(4, 0, 1, 1)] = f32::MAX;
    b[at(5, 0, 1, 1)] = f32::MAX;
    let f64s = |x: &[f32]| x.iter().map(|&v| v as f64).collect::<Vec<_>>();
    let want = reference::affine_forward_f64(&s, &f64s(&a), &f64s(&b), Some(&f64s(&h0))).unwrap();
    each_adapter(|ctx| {
        let h = scan::matrix_affine_scan_with(
            &Tensor::from_slice(ctx, &[1, 9, 2, 2, 2], &a).unwrap(),
            &Tensor::from_slice(ctx, &[1, 9, 2, 2, 3], &b).unwrap(),
            Some(&Tensor::from_slice(ctx, &[1, 2, 2, 3], &h0).unwrap()),
            &ScanOptions::route(Route::Gpu),
        )
        .unwrap()
        .to_vec()
        .unwrap();
        let clean: Vec<usize> = (0..h.len()).filter(|i| i % s.v == 2).collect();
        let got: Vec<f32> = clean.iter().map(|&i| h[i]).collect();
        let w: Vec<f32> = clean.iter().map(|&i| want[i] as f32).collect();
        assert_close(
            ctx,
            "the clean value column, v = 3 padded",
            &got,
            &w,
            gates::SCAN_AFFINE,
        );
        // Before any poison enters (t < 2), every column is exact.
        let early = 2 * s.n * s.k * s.v;
        let w: Vec<f32> = want[..early].iter().map(|&v| v as f32).collect();
        assert_close(
            ctx,
            "every column before the poison",
            &h[..early],
            &w,
            gates::SCAN_AFFINE,
        );
    });
}

/// NaN where `want` is NaN, the same infinity where it is infinite, and within the gate
/// elsewhere; the first element that is not, as (index, got, want).
fn same_classes(got: &[f32], want: &[f32]) -> Option<(usize, f32, f32)> {
    assert_eq!(got.len(), want.len());
    got.iter().zip(want).enumerate().find_map(|(i, (&g, &w))| {
        let ok = if w.is_nan() || g.is_nan() {
            w.is_nan() && g.is_nan()
        } else if w.is_infinite() || g.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= 1e-5 + 1e-4 * w.abs()
        };
        (!ok).then_some((i, g, w))
    })
}

#[test]
fn scan_padded_backward_keeps_an_infinity_out_of_the_padded_columns() {
    // Issue 41, item 8: v between the block sizes runs padded; backward summed the padded
    // columns into dA, where G's padded column is A^T 0 = NaN once A holds an infinity, so
    // dA was NaN on the GPU where the CPU route gives inf. A = 0.5 I with one +inf entry (the
    // last step's, and the middle one's), B, h0 and dL/dH positive, so the real sums are
    // infinities of one sign (and NaN only where 0 * inf enters on both routes).
    let mut cases = vec![];
    for (k, v) in [(2, 3), (2, 5), (2, 7), (4, 3), (8, 5)] {
        for (inf_at, with_h0) in [(2, false), (1, true)] {
            cases.push((k, v, inf_at, with_h0));
        }
    }
    each_adapter(|ctx| {
        for &(k, v, inf_at, with_h0) in &cases {
            let (b, t, n) = (1, 3, 2);
            let mut rng = Rng::new(41 + (k * 10 + v) as u64);
            let mut a = vec![0f32; b * t * n * k * k];
            for step in 0..t * n {
                for i in 0..k {
                    a[(step * k + i) * k + i] = 0.5;
                }
            }
            a[((inf_at * n) * k) * k + 1] = f32::INFINITY; // step inf_at, block 0, row 0, col 1
            let bv = rng.vec_range(b * t * n * k * v, 0.5, 1.0);
            let h0v = rng.vec_range(b * n * k * v, 0.5, 1.0);
            let gv = rng.vec_range(b * t * n * k * v, 0.5, 1.0);
            let a = Tensor::from_slice(ctx, &[b, t, n, k, k], &a).unwrap();
            let bt = Tensor::from_slice(ctx, &[b, t, n, k, v], &bv).unwrap();
            let h0 = Tensor::from_slice(ctx, &[b, n, k, v], &h0v).unwrap();
            let g = Tensor::from_slice(ctx, &[b, t, n, k, v], &gv).unwrap();
            let h0 = with_h0.then_some(&h0);
            let cpu = ScanOptions::route(Route::Cpu);
            let h = scan::matrix_affine_scan_with(&a, &bt, h0, &cpu).unwrap();
            let want = scan::matrix_affine_scan_backward_with(&a, h0, &h, &g, &cpu).unwrap();
            let got = scan::matrix_affine_scan_backward_with(&a, h0, &h, &g, &ScanOptions::route(Route::Gpu)).unwrap();
            let case = format!(
                "k {k} v {v}, inf at step {inf_at}, h0 {with_h0} on {} ({:?})",
                ctx.info().name,
                ctx.info().backend
            );
            let da = want.da.to_vec().unwrap();
            assert!(
                da.iter().any(|x| x.is_infinite()),
                "{case}: the case reaches an infinite dA"
            );
            for (name, got, want) in [
                ("dA", &got.da, &want.da),
                ("dB", &got.db, &want.db),
                ("dh0", &got.dh0, &want.dh0),
            ] {
                let bad = same_classes(&got.to_vec().unwrap(), &want.to_vec().unwrap());
                assert_eq!(bad, None, "{name}, {case}: (index, GPU, CPU route)");
            }
        }
    });
}

#[test]
fn scan_channel_walks_of_lengths_the_chunk_does_not_divide() {
    // Issue 41, item 9 (b): T = 4001 (prime: every chunk length leaves a ragged last chunk)
    // and T = 7919, where one-step chunks are lengthened to two on software adapters (more
    // chunks than a segment's 7500 steps) and the last one is a single step; Chunked with the
    // automatic length (64 at 4001), one and three steps, and Auto, forward and backward,
    // against the f64 reference.
    each_adapter(|ctx| {
        for op in [ScanOp::Linear, ScanOp::Log] {
            for t in [4001, 7919] {
                for strategy in [
                    Strategy::Chunked { chunk: None },
                    Strategy::Chunked { chunk: Some(1) },
                    Strategy::Chunked { chunk: Some(3) },
                    Strategy::Auto,
                ] {
                    for backward in [false, true] {
                        let case = ScanCase {
                            op,
                            backward,
                            b: 1,
                            t,
                            n: 3,
                            k: 1,
                            v: 1,
                            h0: true,
                            strategy,
                            seed: 4001,
                            dtype: wgsl_compute::DType::F32,
                        };
                        let row = pollster::block_on(parity::scan::run_case(ctx, &case));
                        assert!(row.passed, "{}", parity::markdown_row(&row));
                    }
                }
            }
        }
    });
}
