//! The minGRU mixers: the f64 reference's gradients against central finite differences, every
//! mixer layer (forward and every gradient) on every adapter and the CPU context against the
//! reference, the angle-fused and materialising paths against each other, long walks split
//! on software adapters, and bad inputs.

use ndarray::{Array, Array1, Array2, Array3, ArrayD, Dimension, IxDyn};
use wgsl_compute::check::{gates, Gate, Rng};
use wgsl_compute::mixer::reference;
use wgsl_compute::mixer::{
    mixer_scan, mixer_scan_backward, mixer_scan_backward_with, mixer_scan_with, MixerKind, MixerLayer, MixerPath,
};
use wgsl_compute::scan::{Route, ScanOptions, Strategy};
use wgsl_compute::{Context, Error, Tensor};

use crate::common::{assert_close, each_adapter};

const KINDS: [MixerKind; 6] = [
    MixerKind::MinGru,
    MixerKind::SignedMinGru,
    MixerKind::RotationMinGru,
    MixerKind::GivensMinGru { k: 2 },
    MixerKind::GivensMinGru { k: 4 },
    MixerKind::GivensMinGru { k: 8 },
];

fn array<D: Dimension>(rng: &mut Rng, shape: D::Pattern, scale: f64) -> Array<f64, D>
where
    D::Pattern: ndarray::ShapeBuilder<Dim = D>,
{
    Array::from_shape_simple_fn(shape, || rng.range(-scale, scale))
}

/// A random f64 layer: x (B, T, Dm), w_in (Dm, 2D), b_in (2D), w_out (D, Dm), dy (B, T, Dm).
struct Case {
    x: Array3<f64>,
    w_in: Array2<f64>,
    b_in: Array1<f64>,
    w_out: Array2<f64>,
    dy: Array3<f64>,
}

fn case(rng: &mut Rng, b: usize, t: usize, dm: usize, d: usize) -> Case {
    Case {
        x: array(rng, (b, t, dm), 1.0),
        w_in: array(rng, (dm, 2 * d), 0.8),
        b_in: array(rng, 2 * d, 0.5),
        w_out: array(rng, (d, dm), 0.5),
        dy: array(rng, (b, t, dm), 1.0),
    }
}

impl Case {
    /// The f64 reference's gradients of sum(y * dy).
    fn reference_grads(&self, kind: MixerKind) -> reference::LayerGrads {
        let (x, w_in, b_in, w_out) = (self.x.view(), self.w_in.view(), self.b_in.view(), self.w_out.view());
        reference::layer_backward(kind, &x, &w_in, &b_in, &w_out, &self.dy.view()).unwrap()
    }
}

fn loss(kind: MixerKind, c: &Case) -> f64 {
    let y = reference::layer(kind, &c.x.view(), &c.w_in.view(), &c.b_in.view(), &c.w_out.view()).unwrap();
    (&y * &c.dy).sum()
}

/// Central differences of the loss in every element of `param` (picked out of the case by
/// `pick`) against `grad`.
#[track_caller]
fn check_fd<D: Dimension>(
    name: &str,
    kind: MixerKind,
    c: &mut Case,
    pick: fn(&mut Case) -> &mut Array<f64, D>,
    grad: &Array<f64, D>,
) {
    let eps = 1e-6;
    for i in 0..grad.len() {
        let keep = pick(c).as_slice_mut().expect("contiguous")[i];
        pick(c).as_slice_mut().expect("contiguous")[i] = keep + eps;
        let up = loss(kind, c);
        pick(c).as_slice_mut().expect("contiguous")[i] = keep - eps;
        let down = loss(kind, c);
        pick(c).as_slice_mut().expect("contiguous")[i] = keep;
        let fd = (up - down) / (2.0 * eps);
        let want = grad.as_slice().expect("contiguous")[i];
        assert!(
            (fd - want).abs() <= 1e-6 * (1.0 + fd.abs()),
            "{kind} {name}[{i}]: finite difference {fd}, reference gradient {want}"
        );
    }
}

#[test]
fn mixer_reference_gradients_match_finite_differences() {
    let mut rng = Rng::new(61);
    for kind in KINDS {
        let mut c = case(&mut rng, 2, 5, 3, 8);
        let g = c.reference_grads(kind);
        check_fd("x", kind, &mut c, |c| &mut c.x, &g.x);
        check_fd("w_in", kind, &mut c, |c| &mut c.w_in, &g.w_in);
        check_fd("b_in", kind, &mut c, |c| &mut c.b_in, &g.b_in);
        check_fd("w_out", kind, &mut c, |c| &mut c.w_out, &g.w_out);
    }
}

fn tensor<D: Dimension>(ctx: &Context, a: &Array<f64, D>) -> Tensor {
    let data: Vec<f32> = a.iter().map(|&v| v as f32).collect();
    Tensor::from_slice(ctx, a.shape(), &data).expect("upload")
}

fn f32s<D: Dimension>(a: &Array<f64, D>) -> Vec<f32> {
    a.iter().map(|&v| v as f32).collect()
}

/// The paths worth running for `kind`: both for the rotation family, Auto otherwise.
fn paths(kind: MixerKind) -> Vec<MixerPath> {
    if kind.is_rotation() {
        vec![MixerPath::AngleFused, MixerPath::Materialized]
    } else {
        vec![MixerPath::Auto]
    }
}

/// The layer on `ctx` against the f64 reference: y and all four gradients.
fn check_layer(ctx: &Context, kind: MixerKind, path: MixerPath, c: &Case) {
    let layer = MixerLayer::new(
        kind,
        path,
        tensor(ctx, &c.w_in),
        tensor(ctx, &c.b_in),
        tensor(ctx, &c.w_out),
    )
    .expect("layer");
    let (y, tape) = layer.forward(&tensor(ctx, &c.x)).expect("forward");
    let grads = layer.backward(&tape, &tensor(ctx, &c.dy)).expect("backward");
    let want_y = reference::layer(kind, &c.x.view(), &c.w_in.view(), &c.b_in.view(), &c.w_out.view()).unwrap();
    let want = c.reference_grads(kind);
    let name = format!("{kind} {path:?} {:?}", c.x.dim());
    let (out_gate, grad_gate) = (gates::MIXER, gates::MIXER_BACKWARD);
    assert_close(
        ctx,
        &format!("{name} y"),
        &y.to_vec().expect("y"),
        &f32s(&want_y),
        out_gate,
    );
    for (what, got, want) in [
        ("dx", &grads.x, f32s(&want.x)),
        ("dw_in", &grads.w_in, f32s(&want.w_in)),
        ("db_in", &grads.b_in, f32s(&want.b_in)),
        ("dw_out", &grads.w_out, f32s(&want.w_out)),
    ] {
        assert_close(
            ctx,
            &format!("{name} {what}"),
            &got.to_vec().expect(what),
            &want,
            grad_gate,
        );
    }
}

#[test]
fn mixer_layers_match_the_reference_on_every_adapter() {
    let mut rng = Rng::new(62);
    let cases: Vec<Case> = vec![case(&mut rng, 2, 7, 6, 16), case(&mut rng, 3, 65, 5, 16)];
    let cpu = Context::cpu();
    for kind in KINDS {
        for c in &cases {
            check_layer(&cpu, kind, MixerPath::Auto, c);
            each_adapter(|ctx| {
                for path in paths(kind) {
                    check_layer(ctx, kind, path, c);
                }
            });
        }
    }
}

type ScanInputs = (Tensor, Tensor, ArrayD<f32>, ArrayD<f32>);

/// pre (B, T, 2D) and dh (B, T, D) as device tensors plus host copies.
fn scan_inputs(ctx: &Context, rng: &mut Rng, b: usize, t: usize, d: usize) -> ScanInputs {
    scan_inputs_decay(ctx, rng, b, t, d, None)
}

/// [`scan_inputs`] for a rotation-family mixer of block `k`: with `slow = Some(k)` every decay
/// pre-activation lies in [3, 6] (lambda in [0.95, 0.998]), so states carry across hundreds of
/// steps. With lambda near 0.5 a carry fades within a chunk, and a wrong carry would pass.
fn scan_inputs_decay(ctx: &Context, rng: &mut Rng, b: usize, t: usize, d: usize, slow: Option<usize>) -> ScanInputs {
    let mut pre = rng.vec_range(b * t * 2 * d, -2.0, 2.0);
    if let Some(k) = slow {
        for row in pre.chunks_mut(2 * d) {
            for v in &mut row[d..d + d / k] {
                *v = 4.5 + 0.75 * *v;
            }
        }
    }
    let dh = rng.vec_range(b * t * d, -1.0, 1.0);
    (
        Tensor::from_slice(ctx, &[b, t, 2 * d], &pre).expect("pre"),
        Tensor::from_slice(ctx, &[b, t, d], &dh).expect("dh"),
        ArrayD::from_shape_vec(IxDyn(&[b, t, 2 * d]), pre).expect("pre"),
        ArrayD::from_shape_vec(IxDyn(&[b, t, d]), dh).expect("dh"),
    )
}

#[test]
fn mixer_angle_fused_and_materialized_paths_agree() {
    let mut rng = Rng::new(63);
    each_adapter(|ctx| {
        for kind in [
            MixerKind::RotationMinGru,
            MixerKind::GivensMinGru { k: 4 },
            MixerKind::GivensMinGru { k: 16 },
        ] {
            // B = 5: 80 lanes for rotations, more than one workgroup of 64.
            let (pre, dh, _, _) = scan_inputs_decay(ctx, &mut rng, 5, 40, 32, Some(kind.block()));
            let fused = mixer_scan(kind, MixerPath::AngleFused, &pre).expect("fused");
            let mat = mixer_scan(kind, MixerPath::Materialized, &pre).expect("materialized");
            assert!(fused.fused() && !mat.fused());
            let name = format!("{kind} fused vs materialized");
            let gate = Gate::new(1e-5, 1e-5);
            assert_close(
                ctx,
                &format!("{name} h"),
                &fused.h.to_vec().unwrap(),
                &mat.h.to_vec().unwrap(),
                gate,
            );
            let dfused = mixer_scan_backward(&pre, &fused, &dh).expect("fused backward");
            let dmat = mixer_scan_backward(&pre, &mat, &dh).expect("materialized backward");
            let gate = Gate::new(1e-4, 1e-4);
            assert_close(
                ctx,
                &format!("{name} dpre"),
                &dfused.to_vec().unwrap(),
                &dmat.to_vec().unwrap(),
                gate,
            );
        }
    });
}

#[test]
fn mixer_angle_fused_long_walks_resume_across_segments() {
    // Software adapters split walks longer than ~60000 / (4k + 4) steps into dispatches; the
    // second dispatch resumes from the stored state (forward) and the carry (backward).
    let mut rng = Rng::new(64);
    let kind = MixerKind::GivensMinGru { k: 4 };
    let lanes = ScanOptions::route(Route::Gpu).with_strategy(Strategy::Lanes);
    each_adapter(|ctx| {
        let (pre, dh, pre_h, dh_h) = scan_inputs(ctx, &mut rng, 1, 3500, 4);
        let fwd = mixer_scan_with(kind, MixerPath::AngleFused, &pre, &lanes).expect("forward");
        let dpre = mixer_scan_backward_with(&pre, &fwd, &dh, &lanes).expect("backward");
        let want_h = reference::scan_f32(kind, &pre_h).unwrap();
        let want_d = reference::scan_backward_f32(kind, &pre_h, &dh_h).unwrap();
        let gate = gates::MIXER_BACKWARD;
        assert_close(
            ctx,
            "long h",
            &fwd.h.to_vec().unwrap(),
            want_h.as_slice().unwrap(),
            gate,
        );
        assert_close(
            ctx,
            "long dpre",
            &dpre.to_vec().unwrap(),
            want_d.as_slice().unwrap(),
            gate,
        );
    });
}

#[test]
fn mixer_angle_fused_chunked_matches_the_reference() {
    // The chunked strategy (per-chunk products, a carry walk, a fix-up pass) at uneven chunk
    // counts, forced and automatic, against the f64 reference; few lanes, so Auto chunks too.
    let mut rng = Rng::new(65);
    each_adapter(|ctx| {
        // (16, 4000) at chunks of 16: 250 chunks, more than a software adapter's carry walk may
        // take at k = 16 in one dispatch, so the plan lengthens the chunks there.
        for (k, t) in [(2, 1), (2, 300), (4, 7), (4, 64), (16, 130), (16, 4000)] {
            let kind = MixerKind::GivensMinGru { k };
            let (pre, dh, pre_h, dh_h) = scan_inputs_decay(ctx, &mut rng, 2, t, k, Some(k));
            let want_h = reference::scan_f32(kind, &pre_h).unwrap();
            let want_d = reference::scan_backward_f32(kind, &pre_h, &dh_h).unwrap();
            for strategy in [
                Strategy::Chunked { chunk: Some(16) },
                Strategy::Chunked { chunk: None },
                Strategy::Auto,
            ] {
                let opts = ScanOptions::route(Route::Gpu).with_strategy(strategy);
                let fwd = mixer_scan_with(kind, MixerPath::AngleFused, &pre, &opts).expect("forward");
                let dpre = mixer_scan_backward_with(&pre, &fwd, &dh, &opts).expect("backward");
                let name = format!("{kind} T={t} {strategy}");
                let (hg, dg) = (gates::MIXER, gates::MIXER_BACKWARD);
                assert_close(
                    ctx,
                    &format!("{name} h"),
                    &fwd.h.to_vec().unwrap(),
                    want_h.as_slice().unwrap(),
                    hg,
                );
                assert_close(
                    ctx,
                    &format!("{name} dpre"),
                    &dpre.to_vec().unwrap(),
                    want_d.as_slice().unwrap(),
                    dg,
                );
            }
        }
    });
}

#[test]
fn mixer_angle_fused_lengthened_chunks_that_do_not_divide_t() {
    // Issue 41, item 9 (b), the fused mixer's route: at k = 16 a chunk of the carry walk
    // costs 288 loop trips, so on a software adapter 251 chunks of 16 are too many for one
    // dispatch and the plan lengthens them to ceil(4001 / 208) = 20 steps, 201 chunks, the
    // last a single step (T = 4000 is divided by 20 and hides a chunk count rounded down).
    // Forward and backward against the f64 reference on every adapter.
    let mut rng = Rng::new(4001);
    let kind = MixerKind::GivensMinGru { k: 16 };
    each_adapter(|ctx| {
        let (pre, dh, pre_h, dh_h) = scan_inputs_decay(ctx, &mut rng, 1, 4001, 16, Some(16));
        let want_h = reference::scan_f32(kind, &pre_h).unwrap();
        let want_d = reference::scan_backward_f32(kind, &pre_h, &dh_h).unwrap();
        let opts = ScanOptions::route(Route::Gpu).with_strategy(Strategy::Chunked { chunk: Some(16) });
        let fwd = mixer_scan_with(kind, MixerPath::AngleFused, &pre, &opts).expect("forward");
        let dpre = mixer_scan_backward_with(&pre, &fwd, &dh, &opts).expect("backward");
        let h = fwd.h.to_vec().unwrap();
        assert_close(ctx, "T=4001 h", &h, want_h.as_slice().unwrap(), gates::MIXER);
        let d = dpre.to_vec().unwrap();
        assert_close(
            ctx,
            "T=4001 dpre",
            &d,
            want_d.as_slice().unwrap(),
            gates::MIXER_BACKWARD,
        );
    });
}

#[test]
fn mixer_angle_fused_backward_is_exact_at_strong_decay() {
    // lambda = sigmoid(decay) in [3e-4, 7e-3]: undoing a step by dividing by lambda would
    // multiply rounding error by up to 3000 a step. The backward recomputes each step from the
    // stored h_{t-1} instead, so it stays at rounding level over 200 steps, both strategies.
    let mut rng = Rng::new(67);
    let kind = MixerKind::GivensMinGru { k: 8 };
    each_adapter(|ctx| {
        let (b, t, d) = (2, 200, 16);
        let mut pre = rng.vec_range(b * t * 2 * d, -2.0, 2.0);
        for row in pre.chunks_mut(2 * d) {
            for v in &mut row[d..d + d / 8] {
                *v = -6.5 + 1.5 * *v / 2.0;
            }
        }
        let dh = rng.vec_range(b * t * d, -1.0, 1.0);
        let pre_h = ArrayD::from_shape_vec(IxDyn(&[b, t, 2 * d]), pre.clone()).unwrap();
        let dh_h = ArrayD::from_shape_vec(IxDyn(&[b, t, d]), dh.clone()).unwrap();
        let want = reference::scan_backward_f32(kind, &pre_h, &dh_h).unwrap();
        let pre = Tensor::from_slice(ctx, &[b, t, 2 * d], &pre).unwrap();
        let dh = Tensor::from_slice(ctx, &[b, t, d], &dh).unwrap();
        for strategy in [Strategy::Lanes, Strategy::Chunked { chunk: Some(16) }] {
            let opts = ScanOptions::route(Route::Gpu).with_strategy(strategy);
            let fwd = mixer_scan_with(kind, MixerPath::AngleFused, &pre, &opts).unwrap();
            let got = mixer_scan_backward_with(&pre, &fwd, &dh, &opts)
                .unwrap()
                .to_vec()
                .unwrap();
            let name = format!("strong decay {strategy} dpre");
            assert_close(ctx, &name, &got, want.as_slice().unwrap(), Gate::new(1e-5, 1e-4));
        }
    });
}

#[track_caller]
fn expect_error<T: std::fmt::Debug>(r: wgsl_compute::Result<T>, parts: &[&str]) {
    let msg = r.expect_err("an error").to_string();
    for p in parts {
        assert!(msg.contains(p), "error {msg:?} should mention {p:?}");
    }
}

#[test]
fn mixer_bad_inputs_are_errors_naming_the_argument() {
    let ctx = Context::cpu();
    let t = |shape: &[usize]| Tensor::zeros(&ctx, shape).unwrap();
    expect_error(MixerKind::parse("givens:3"), &["GivensMinGRU", "k", "2, 4, 8, 16", "3"]);
    expect_error(MixerKind::parse("lstm"), &["mixer", "mingru", "lstm"]);
    assert_eq!(MixerKind::parse("givens:8").unwrap(), MixerKind::GivensMinGru { k: 8 });
    let givens = MixerKind::GivensMinGru { k: 4 };
    expect_error(
        mixer_scan(givens, MixerPath::Auto, &t(&[2, 3, 12])),
        &["GivensMinGRU", "d", "4", "6"],
    );
    expect_error(
        mixer_scan(givens, MixerPath::Auto, &t(&[2, 3, 7])),
        &["GivensMinGRU", "pre", "even"],
    );
    expect_error(
        mixer_scan(givens, MixerPath::Auto, &t(&[2, 8])),
        &["GivensMinGRU", "pre", "(B, T, 2D)"],
    );
    expect_error(
        mixer_scan(givens, MixerPath::Auto, &t(&[2, 0, 8])),
        &["GivensMinGRU", "pre"],
    );
    let r = mixer_scan(MixerKind::MinGru, MixerPath::AngleFused, &t(&[1, 2, 4]));
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
    let fwd = mixer_scan(givens, MixerPath::Auto, &t(&[2, 3, 8])).unwrap();
    expect_error(
        mixer_scan_backward(&t(&[2, 3, 8]), &fwd, &t(&[2, 3, 8])),
        &["grad_h", "[2, 3, 4]"],
    );
    // A backward whose pre is not the forward's: the stored states do not fit it.
    expect_error(
        mixer_scan_backward(&t(&[2, 5, 8]), &fwd, &t(&[2, 5, 4])),
        &["fwd.h", "[2, 5, 4]", "[2, 3, 4]"],
    );
    expect_error(
        MixerLayer::new(givens, MixerPath::Auto, t(&[5, 8]), t(&[8]), t(&[4, 6])),
        &["GivensMinGRU", "w_out", "[4, 5]"],
    );
    expect_error(
        MixerLayer::new(givens, MixerPath::Auto, t(&[5, 8]), t(&[6]), t(&[4, 5])),
        &["GivensMinGRU", "b_in", "[8]"],
    );
    let layer = MixerLayer::new(givens, MixerPath::Auto, t(&[5, 8]), t(&[8]), t(&[4, 5])).unwrap();
    expect_error(layer.forward(&t(&[2, 3, 4])), &["GivensMinGRU", "x", "5"]);
}
