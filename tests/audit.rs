//! Issue #32 item 3: every public function checks its inputs. The audit below lists every
//! `pub fn` of the library (`engine/`, reachable from outside the crate) that takes a slice,
//! a size (usize / u32) or a float, and what it validates. `changed` marks the checks this
//! audit added (each has a test in this file), `earlier` the ones issue #32 named and an
//! earlier session fixed, `checked` those that already validated, `total` those defined on
//! every input (nothing to refuse), `left` those left alone (see the notes).
//!
//! | file:function | validates |
//! |---|---|
//! | reference/scan.rs:affine_forward_f64 | changed: a, b, h0 lengths against `AffineShape`; its sizes overflowing |
//! | reference/scan.rs:affine_backward_f64 | changed: a, h0, h, g lengths; sizes overflowing; T = 0 (panicked) gives zeros |
//! | reference/scan.rs:log_forward_f64 | changed: lc (B T D), lv (B (T+1) D) lengths; T + 1 and the products overflowing |
//! | reference/scan.rs:log_backward_f64 | changed: lc, lv, h, g lengths; overflow; T = 0 (panicked) gives zeros |
//! | reference/scan.rs:matrix_affine_scan | changed: A (B,T,N,k,k), B (B,T,N,k,v), h0 (B,N,k,v) shapes (panicked) |
//! | reference/scan.rs:matrix_affine_scan_backward | changed: A, H, grad, h0 shapes (panicked) |
//! | reference/scan.rs:matrix_scan | changed: A (B,T,N,k,k), b (B,T,N,k), h0 (B,N,k) shapes (panicked) |
//! | reference/scan.rs:parallel_scan_log | changed: log_coeffs rank 3, log_values (B,T+1,D) (panicked) |
//! | reference/scan.rs:parallel_scan_log_backward | changed: as forward, h and grad of log_coeffs' shape (panicked) |
//! | reference/scan.rs:linear_scan | earlier: a rank 3, b = a's shape, h0 (B, D) |
//! | reference/nn.rs:cross_entropy | changed: one target per row, each below V (panicked); now a `Result` |
//! | reference/nn.rs:layer_norm | earlier: gamma/beta (n,); changed: eps finite and >= 0 (as `ops::layer_norm`) |
//! | reference/nn.rs:embedding, attention | checked: `embedding_shapes`, ids < V, pos_offset + T <= P; `attention_shapes` |
//! | reference/nn.rs:gelu_scalar, gelu, softmax_last, argmax_index, argmax_last | total (any shape, NaN propagates; causal past saturates) |
//! | reference/elementwise.rs:binary / unary; reference/matmul.rs:matmul; reference/reduce.rs:sum_last | checked (broadcast, `matmul_shapes`) / total |
//! | mixer/reference.rs:scan, scan_backward | changed: pre (B,T,2D) with D a positive multiple of the block, dh (B,T,D) (panicked); now `Result` |
//! | mixer/reference.rs:layer, layer_backward | changed: w_in (Dm,2D), b_in (2D), w_out (D,Dm) against x, dy = x's shape (panicked); now `Result` |
//! | mixer/reference.rs:scan_f32, scan_backward_f32 | earlier: pre and dh shapes, Givens k against D |
//! | mixer/kind.rs:MixerKind::blocks | checked: d a positive multiple of the block size |
//! | mixer/layer.rs:MixerLayer::init | changed: d against the block size and (Dm, 2D) against the element limit before any host vector (overflowed / aborted in the allocator) |
//! | models/char_model/mod.rs:CharModel::init | checked: vocab >= 2, layers, d_model >= 1; changed: (V, Dm) against the element limit and the allocator before drawing |
//! | models/char_model/mod.rs:logits, loss, loss_and_grads (+ async) | checked: ids a non-empty multiple of batch, each < V, targets one per row; changed: onehot (B T, V) checked before its host vector |
//! | models/char_model/mod.rs:sample, sample_async | earlier: context, window >= 1, temperature > 0 and finite |
//! | models/char_model/mod.rs:random_windows | earlier: ids > seq, rows * seq bounded |
//! | models/gpt2/tiny.rs:random_checkpoint | changed: the config (`Config::validate`) and at most `MAX_ELEMENTS` parameters before drawing (aborted on huge sizes); now a `Result` |
//! | models/gpt2/tiny.rs:tiny_random_checkpoint, write_tiny_random | total (a fixed config) |
//! | models/gpt2/reference.rs:forward | checked: 1..=n_positions ids below V; changed: the weights against their config (`Weights::validate`; public fields) |
//! | models/gpt2/model.rs:Gpt2::step, forward, with_vocab_block | checked: 1..=remaining ids; rows >= 1 (0 was taken as 1), clamped to V |
//! | generate/sampling.rs:Sampler::pick; generate/methods.rs:Generate::generate* ; generate/generator.rs:Generator::generate*, prefill_plan | checked: non-empty logits; prompt + n within n_positions; 1..=n_positions |
//! | generate/sampling.rs:argmax | total (0 for an empty slice, NaN wins) |
//! | models/gpt2/kv_cache.rs:KvCache::new | earlier: n_embd % n_head, zero or oversized dimensions |
//! | models/gpt2/tokenizer.rs:decode, decode_bytes; text_stream.rs:TextStream::push | checked: ids below the vocabulary |
//! | models/gpt2/weights.rs:from_safetensors; io/safetensors.rs:serialize | checked (parse, shapes, a header key once) / left: serialize writes the entries it is given |
//! | train/optim/adam.rs:Adam::new, adamw, step | earlier: lr, betas, eps; checked: params/grads counts, shapes, dense, no parameter twice; weight_decay finite >= 0 |
//! | train/optim/sgd.rs:Sgd::new, step | checked: lr, weight_decay finite >= 0, momentum in [0, 1); params/grads as Adam's |
//! | train/optim/clip.rs:clip_grad_norm, clip_grad_norm_tensor | checked: max_norm finite > 0; a gradient for at least one variable (those without are left out), each variable once |
//! | train/params.rs:ParamStore::insert, from_bytes, load_into | checked: new names other than `__metadata__`, dense F32 of one context; the file's names, shapes, dtypes (parse) |
//! | ops/cross_entropy.rs:cross_entropy | checked: logits (R, V), one target per row, below V < 2^24 |
//! | train/vocab.rs:CharVocab::decode | total (ids outside the vocabulary become U+FFFD) |
//! | expr/interp.rs:Interp::call | earlier: argument count and lengths; changed: a hand-built body (public fields) reading a later node or a missing parameter (panicked) |
//! | expr/ir/body.rs:Body::builder, substitute; expr/ir/builder.rs:Builder::param, constant | checked: substitute's k; param past the parameters gives an id every op refuses; constants any f32 |
//! | expr/ir/body.rs:Body::node; expr/codegen.rs:comp, emit | left: index a body's nodes by an `Id` (callers hold checked bodies) |
//! | expr/op.rs:Unary/Binary/Reduce::eval, Reduce::wgsl | total (f64 semantics; WGSL text from the parts given) |
//! | fused/mod.rs:run, wgsl_vec4; fused/graph.rs:Graph::constant, eval | checked: one input per graph input, one read per input / total (missing inputs read NaN) |
//! | ops/attention.rs, embedding.rs, layer_norm.rs, softmax.rs | checked: shapes, past + Tq <= Tk, pos_offset, eps finite and >= 0, causal past clamped |
//! | ops/matmul/mod.rs:tune_matmul; scan/linear_scan.rs:tune_linear_scan | checked when run (the op's own checks) |
//! | shape/mod.rs:numel, mul, add, product | checked: overflow and `MAX_ELEMENTS` |
//! | shape/broadcast.rs:broadcast_shape, check_rank | checked |
//! | shape/broadcast.rs:broadcast_strides | changed: strides one per axis, layout rank <= shape's, each axis 1 or the shape's (panicked / read wrong axes) |
//! | shape/broadcast.rs:collapse | changed: every operand's strides one per axis (panicked) |
//! | shape/broadcast.rs:vec4_reads | left: zips strides with offsets (a shorter list gives fewer reads, no panic) |
//! | shape/layout.rs:Layout::contiguous, transpose, narrow; tensor/mod.rs:transpose, narrow, reshape | left (contiguous saturates an unchecked shape, a debug assertion) / checked |
//! | shape/dtype.rs:DType::words, storage_bytes; attention.rs, embedding.rs, matmul.rs shapes | total / checked |
//! | tensor/create.rs:from_slice, full, zeros, from_halves, from_slice_f16/bf16/as; tensor/mod.rs:expect_dtype | checked: element count, data length, device limit, the allocator (any fill value) |
//! | plan/mod.rs:Plan::dispatch_floor | checked: >= 1; changed: at most `Plan::MAX_FLOOR_DISPATCHES` (a caller's count grew the plan without bound) |
//! | plan/mod.rs:capture, replay_in_parts | checked (context, capture) / parts clamped to 1..=16 |
//! | recurrence/lookback.rs:lookback_steps; recurrence/strategy.rs:auto_chunk, Cost::block; parity/scan/mod.rs:test_chunk, strategies; parity/scan/cases.rs:specialised_cases | total |
//! | element_scan: from_body, from_body_tensors, grad, grad_program, Bindings::* | checked when built or run (shapes, seed = output's shape, numbers checked at use) |
//! | check/rng.rs:Rng::range, below, vec_range, vec_normal; check/compare.rs:compare, Gate::new | left: test-input generators (below(0) gives 0; huge n allocates) / compare reports a length mismatch or NaN as a failure |
//! | parity/cuda.rs:cuda_cases; parity/mod.rs:tally, markdown | checked (parse) / total |
//! | context/tune.rs:Context::tune; context/mod.rs:set_poison | checked when run / any poison value (NaN is the usual one) |

use ndarray::{Array1, Array2, Array3, ArrayD, IxDyn};
use wgsl_compute::check::Rng;
use wgsl_compute::expr::{Body, Id, Interp, Node, Op, Ty, Unary};
use wgsl_compute::mixer::{reference as mref, MixerKind, MixerLayer};
use wgsl_compute::models::gpt2::{self, Config, Weights};
use wgsl_compute::models::{CharModel, CharModelConfig};
use wgsl_compute::plan::Plan;
use wgsl_compute::reference::nn;
use wgsl_compute::reference::scan::{self as rs, AffineShape};
use wgsl_compute::shape::{broadcast_strides, collapse, Layout, MAX_ELEMENTS};
use wgsl_compute::{Context, DType, Result};

/// `r` is an error whose message holds every one of `words`.
#[track_caller]
fn err<T>(r: Result<T>, words: &[&str]) {
    let Err(e) = r else {
        panic!("expected an error mentioning {words:?}, got Ok")
    };
    let e = e.to_string();
    for w in words {
        assert!(e.contains(w), "error `{e}` does not mention `{w}`");
    }
}

fn z(shape: &[usize]) -> ArrayD<f32> {
    ArrayD::zeros(IxDyn(shape))
}

const SHAPE: AffineShape = AffineShape {
    b: 2,
    t: 3,
    n: 2,
    k: 2,
    v: 1,
};

#[test]
fn audit_affine_f64_cores_check_lengths() {
    let s = SHAPE;
    let (a, x, h0) = (vec![0.5; 2 * 3 * 2 * 4], vec![1.0; 2 * 3 * 2 * 2], vec![0.0; 2 * 2 * 2]);
    let h = rs::affine_forward_f64(&s, &a, &x, Some(&h0)).unwrap();
    // Wrong lengths, naming the slice.
    err(
        rs::affine_forward_f64(&s, &a[1..], &x, None),
        &["affine_forward_f64", "`a`", "48"],
    );
    err(rs::affine_forward_f64(&s, &a, &x[..3], None), &["`b`", "24", "3"]);
    err(rs::affine_forward_f64(&s, &a, &x, Some(&h0[..1])), &["`h0`", "8"]);
    err(
        rs::affine_backward_f64(&s, &a, None, &h, &x[1..]),
        &["affine_backward_f64", "`g`"],
    );
    err(rs::affine_backward_f64(&s, &a, None, &h[..0], &x), &["`h`"]);
    err(rs::affine_backward_f64(&s, &a, Some(&[]), &h, &x), &["`h0`"]);
    // Huge: sizes whose products overflow.
    let huge = AffineShape {
        b: usize::MAX,
        t: 2,
        ..s
    };
    err(
        rs::affine_forward_f64(&huge, &a, &x, None),
        &["affine_forward_f64", "fits usize"],
    );
    err(rs::affine_backward_f64(&huge, &a, None, &h, &x), &["fits usize"]);
    // Zero steps: empty outputs, and a backward that used to index A at step 0.
    let empty = AffineShape { t: 0, ..s };
    assert!(rs::affine_forward_f64(&empty, &[], &[], Some(&h0)).unwrap().is_empty());
    let (da, db, dh0) = rs::affine_backward_f64(&empty, &[], Some(&h0), &[], &[]).unwrap();
    assert!(da.is_empty() && db.is_empty());
    assert_eq!(dh0, vec![0.0; 8]);
    // NaN values are data: they propagate, they are not refused.
    let nan = vec![f64::NAN; a.len()];
    assert!(rs::affine_forward_f64(&s, &nan, &x, None).unwrap()[0].is_nan());
}

#[test]
fn audit_log_f64_cores_check_lengths() {
    let (b, t, d) = (2, 3, 2);
    let (lc, lv) = (vec![-0.5; b * t * d], vec![0.1; b * (t + 1) * d]);
    let h = rs::log_forward_f64(b, t, d, &lc, &lv).unwrap();
    err(
        rs::log_forward_f64(b, t, d, &lc, &lv[1..]),
        &["log_forward_f64", "`lv`", "16"],
    );
    err(rs::log_forward_f64(b, t, d, &lc[..2], &lv), &["`lc`", "12"]);
    err(
        rs::log_backward_f64(b, t, d, &lc, &lv, &h, &h[1..]),
        &["log_backward_f64", "`g`"],
    );
    err(rs::log_backward_f64(b, t, d, &lc, &lv, &[], &h), &["`h`"]);
    // Huge: T + 1 and B T D overflow.
    err(
        rs::log_forward_f64(1, usize::MAX, 1, &lc, &lv),
        &["log_forward_f64", "fits usize"],
    );
    err(rs::log_forward_f64(usize::MAX, 2, 3, &lc, &lv), &["fits usize"]);
    // Zero steps: h is empty; the backward used to read lc[0] of an empty lc.
    assert!(rs::log_forward_f64(b, 0, d, &[], &lv[..b * d]).unwrap().is_empty());
    let (dlc, dlv) = rs::log_backward_f64(b, 0, d, &[], &lv[..b * d], &[], &[]).unwrap();
    assert!(dlc.is_empty());
    assert_eq!(dlv, vec![0.0; b * d]);
}

#[test]
fn audit_reference_array_scans_check_shapes() {
    // matrix_affine_scan: rank, square blocks, B on A's axes, h0.
    let a = z(&[2, 3, 2, 2, 2]);
    let b = z(&[2, 3, 2, 2, 1]);
    assert_eq!(
        rs::matrix_affine_scan(&a.view(), &b.view(), None).unwrap().shape(),
        b.shape()
    );
    err(
        rs::matrix_affine_scan(&z(&[2, 3, 2, 2]).view(), &b.view(), None),
        &["matrix_affine_scan", "`a`", "(B, T, N, k, k)"],
    );
    err(
        rs::matrix_affine_scan(&z(&[2, 3, 2, 2, 3]).view(), &b.view(), None),
        &["`a`"],
    );
    err(
        rs::matrix_affine_scan(&a.view(), &z(&[2, 4, 2, 2, 1]).view(), None),
        &["`b`", "[2, 3, 2, 2, 1]"],
    );
    err(rs::matrix_affine_scan(&a.view(), &z(&[2, 3, 2]).view(), None), &["`b`"]);
    err(
        rs::matrix_affine_scan(&a.view(), &b.view(), Some(&z(&[2, 2, 2]).view())),
        &["`h0`", "[2, 2, 2, 1]"],
    );
    // Zero steps are fine.
    let a0 = z(&[2, 0, 2, 2, 2]);
    assert_eq!(
        rs::matrix_affine_scan(&a0.view(), &z(&[2, 0, 2, 2, 1]).view(), None)
            .unwrap()
            .len(),
        0
    );
    let g = rs::matrix_affine_scan_backward(
        &a0.view(),
        None,
        &z(&[2, 0, 2, 2, 1]).view(),
        &z(&[2, 0, 2, 2, 1]).view(),
    )
    .unwrap();
    assert_eq!(g.2.shape(), &[2, 2, 2, 1]);

    // matrix_affine_scan_backward: H, grad, h0.
    let h = z(&[2, 3, 2, 2, 1]);
    err(
        rs::matrix_affine_scan_backward(&a.view(), None, &h.view(), &z(&[2, 3, 2, 2, 2]).view()),
        &["matrix_affine_scan_backward", "`grad`"],
    );
    err(
        rs::matrix_affine_scan_backward(&a.view(), None, &z(&[2, 3, 1, 2, 1]).view(), &h.view()),
        &["`h`"],
    );
    err(
        rs::matrix_affine_scan_backward(&a.view(), Some(&z(&[1]).view()), &h.view(), &h.view()),
        &["`h0`"],
    );

    // matrix_scan: b (B, T, N, k), h0 (B, N, k).
    let b4 = z(&[2, 3, 2, 2]);
    assert_eq!(
        rs::matrix_scan(&a.view(), &b4.view(), None).unwrap().shape(),
        b4.shape()
    );
    err(
        rs::matrix_scan(&a.view(), &z(&[2, 3, 2, 2, 1]).view(), None),
        &["matrix_scan", "`b`", "[2, 3, 2, 2]"],
    );
    err(
        rs::matrix_scan(&a.view(), &b4.view(), Some(&z(&[2, 2]).view())),
        &["`h0`", "[2, 2, 2]"],
    );
    err(rs::matrix_scan(&z(&[3]).view(), &b4.view(), None), &["`a`"]);

    // parallel_scan_log: (B, T, D) and (B, T+1, D); h and grad for the backward.
    let (lc, lv) = (z(&[2, 3, 4]), z(&[2, 4, 4]));
    rs::parallel_scan_log(&lc.view(), &lv.view()).unwrap();
    err(
        rs::parallel_scan_log(&lc.view(), &lc.view()),
        &["parallel_scan_log", "`log_values`", "[2, 4, 4]"],
    );
    err(
        rs::parallel_scan_log(&z(&[2, 3]).view(), &lv.view()),
        &["`log_coeffs`", "(B, T, D)"],
    );
    err(
        rs::parallel_scan_log_backward(&lc.view(), &lv.view(), &lv.view(), &lc.view()),
        &["parallel_scan_log_backward", "`h`"],
    );
    err(
        rs::parallel_scan_log_backward(&lc.view(), &lv.view(), &lc.view(), &z(&[2, 3, 5]).view()),
        &["`grad`"],
    );
    let (dlc, dlv) = rs::parallel_scan_log_backward(
        &z(&[2, 0, 4]).view(),
        &z(&[2, 1, 4]).view(),
        &z(&[2, 0, 4]).view(),
        &z(&[2, 0, 4]).view(),
    )
    .unwrap();
    assert_eq!((dlc.len(), dlv.shape()), (0, &[2, 1, 4][..]));
}

#[test]
fn audit_mixer_reference_checks_shapes() {
    let kind = MixerKind::MinGru;
    let pre = Array3::<f64>::zeros((2, 3, 8));
    assert_eq!(mref::scan(kind, &pre.view()).unwrap().dim(), (2, 3, 4));
    // Odd last axis, D = 0, D not a multiple of the block.
    err(
        mref::scan(kind, &Array3::zeros((2, 3, 7)).view()),
        &["mixer::reference::scan", "`pre`", "even"],
    );
    err(
        mref::scan(kind, &Array3::zeros((2, 3, 0)).view()),
        &["d (state width)", "positive multiple"],
    );
    err(
        mref::scan(MixerKind::GivensMinGru { k: 4 }, &Array3::zeros((1, 2, 12)).view()),
        &["GivensMinGRU", "multiple of the block size 4", "6"],
    );
    // dh of another shape.
    let dh = Array3::<f64>::zeros((2, 3, 4));
    mref::scan_backward(kind, &pre.view(), &dh.view()).unwrap();
    err(
        mref::scan_backward(kind, &pre.view(), &Array3::zeros((2, 3, 5)).view()),
        &["scan_backward", "dh", "[2, 3, 5]", "[2, 3, 4]"],
    );

    // The layer: w_in (Dm, 2D), b_in (2D), w_out (D, Dm) against x (B, T, Dm).
    let (x, w_in, b_in, w_out) = (
        Array3::<f64>::zeros((2, 3, 5)),
        Array2::<f64>::zeros((5, 8)),
        Array1::<f64>::zeros(8),
        Array2::<f64>::zeros((4, 5)),
    );
    let y = mref::layer(kind, &x.view(), &w_in.view(), &b_in.view(), &w_out.view()).unwrap();
    assert_eq!(y.dim(), (2, 3, 5));
    err(
        mref::layer(
            kind,
            &x.view(),
            &Array2::zeros((6, 8)).view(),
            &b_in.view(),
            &w_out.view(),
        ),
        &["mixer::reference::layer", "`w_in`", "(5, 2D)"],
    );
    err(
        mref::layer(
            kind,
            &x.view(),
            &Array2::zeros((5, 7)).view(),
            &b_in.view(),
            &w_out.view(),
        ),
        &["`pre`", "even"],
    );
    err(
        mref::layer(kind, &x.view(), &w_in.view(), &Array1::zeros(7).view(), &w_out.view()),
        &["`b_in`", "[8]"],
    );
    err(
        mref::layer(
            kind,
            &x.view(),
            &w_in.view(),
            &b_in.view(),
            &Array2::zeros((5, 4)).view(),
        ),
        &["`w_out`", "[4, 5]"],
    );
    let dy = Array3::<f64>::zeros((2, 3, 5));
    mref::layer_backward(kind, &x.view(), &w_in.view(), &b_in.view(), &w_out.view(), &dy.view()).unwrap();
    err(
        mref::layer_backward(
            kind,
            &x.view(),
            &w_in.view(),
            &b_in.view(),
            &w_out.view(),
            &Array3::zeros((2, 4, 5)).view(),
        ),
        &["layer_backward", "dy", "[2, 4, 5]"],
    );
    err(
        mref::layer_backward(
            kind,
            &x.view(),
            &w_in.view(),
            &Array1::zeros(0).view(),
            &w_out.view(),
            &dy.view(),
        ),
        &["`b_in`"],
    );
}

#[test]
fn audit_reference_nn_cross_entropy_and_layer_norm() {
    let logits = Array2::<f32>::zeros((3, 4));
    let (loss, grad) = nn::cross_entropy(&logits.view(), &[0, 1, 3]).unwrap();
    assert_eq!((loss.len(), grad.dim()), (3, (3, 4)));
    // One target per row, each below V.
    err(
        nn::cross_entropy(&logits.view(), &[0, 1]),
        &["reference::nn::cross_entropy", "`targets`", "3 indices", "2"],
    );
    err(
        nn::cross_entropy(&logits.view(), &[0, 1, 4]),
        &["`targets`", "below V = 4", "4 at [2]"],
    );
    err(nn::cross_entropy(&logits.view(), &[0, 1, u32::MAX]), &["`targets`"]);
    err(
        nn::cross_entropy(&Array2::<f32>::zeros((1, 0)).view(), &[0]),
        &["below V = 0"],
    );
    // Zero rows: nothing to compute.
    assert_eq!(
        nn::cross_entropy(&Array2::<f32>::zeros((0, 4)).view(), &[])
            .unwrap()
            .0
            .len(),
        0
    );

    // layer_norm's eps: NaN, negative and infinite are refused as `ops::layer_norm` does.
    let (x, g) = (z(&[2, 3]), z(&[3]));
    nn::layer_norm(&x.view(), &g.view(), &g.view(), 1e-5).unwrap();
    nn::layer_norm(&x.view(), &g.view(), &g.view(), 0.0).unwrap();
    for eps in [f32::NAN, -1.0, f32::INFINITY] {
        err(
            nn::layer_norm(&x.view(), &g.view(), &g.view(), eps),
            &["reference::nn::layer_norm", "`eps`", "finite value >= 0"],
        );
    }
}

#[test]
fn audit_broadcast_strides_and_collapse_check_their_operands() {
    let l = Layout::contiguous(&[3, 1]);
    assert_eq!(broadcast_strides(&l, &[2, 3, 4]).unwrap(), vec![0, 1, 0]);
    // An axis neither 1 nor the shape's, a layout of higher rank, strides not one per axis.
    err(
        broadcast_strides(&l, &[2, 4, 4]),
        &["shape::broadcast_strides", "`layout`", "[2, 4, 4]"],
    );
    err(
        broadcast_strides(&Layout::contiguous(&[2, 3, 4]), &[3, 4]),
        &["`layout`", "broadcasts to [3, 4]"],
    );
    let bad = Layout {
        shape: vec![3, 4],
        strides: vec![1],
        offset: 0,
    };
    err(broadcast_strides(&bad, &[3, 4]), &["`layout.strides`", "2 strides"]);
    // Zero-size and rank-0 shapes are fine.
    assert_eq!(
        broadcast_strides(&Layout::contiguous(&[0, 1]), &[0, 5]).unwrap(),
        vec![1, 0]
    );
    assert!(broadcast_strides(&Layout::contiguous(&[]), &[]).unwrap().is_empty());

    assert_eq!(collapse(&[2, 3], &[vec![3, 1]]).unwrap().0, vec![6]);
    err(
        collapse(&[2, 3], &[vec![3, 1], vec![1]]),
        &["shape::collapse", "`strides`", "2 strides per operand"],
    );
    err(collapse(&[usize::MAX], &[vec![]]), &["`strides`"]);
}

#[test]
fn audit_interp_refuses_a_hand_built_body_it_cannot_run() {
    let f = Ty::F32;
    let node = |op| Node { op, ty: f };
    // Node 1 reads node 2: not an earlier node (indexing past the values panicked).
    let forward = Body {
        params: vec![f],
        nodes: vec![
            node(Op::Param(0)),
            node(Op::Unary(Unary::Neg, Id(2))),
            node(Op::Unary(Unary::Neg, Id(0))),
        ],
        result: Id(1),
    };
    err(
        Interp::new(&forward).call(&[&[1.0]]),
        &["expr::Interp::call", "`body`", "node %1 reads %2"],
    );
    // A parameter node past the parameters, and a result that is no node.
    let param = Body {
        params: vec![f],
        nodes: vec![node(Op::Param(0)), node(Op::Param(3))],
        result: Id(1),
    };
    err(Interp::new(&param).call(&[&[1.0]]), &["`body`", "parameter 3"]);
    let result = Body {
        params: vec![f],
        nodes: vec![node(Op::Param(0))],
        result: Id(u32::MAX),
    };
    err(Interp::new(&result).call(&[&[1.0]]), &["`body`", "is not a node"]);
    // A built body still runs, NaN in and NaN out.
    let mut b = Body::builder(&[f]);
    let p = b.param(0);
    let n = b.unary(Unary::Neg, p).unwrap();
    let body = b.finish(n).unwrap();
    assert_eq!(Interp::new(&body).call(&[&[2.0]]).unwrap(), &[-2.0]);
    assert!(Interp::new(&body).call(&[&[f64::NAN]]).unwrap()[0].is_nan());
}

#[test]
fn audit_mixer_layer_and_char_model_init_check_sizes_before_allocating() {
    let ctx = Context::cpu();
    let mut rng = Rng::new(1);
    let kind = MixerKind::MinGru;
    MixerLayer::init(&ctx, kind, 4, 3, &mut rng).unwrap();
    // Zero, a width the block does not divide, and huge sizes (the product overflowed or
    // the allocator aborted): errors before a value is drawn.
    err(
        MixerLayer::init(&ctx, kind, 4, 0, &mut rng),
        &["MinGRU", "d (state width)", "0"],
    );
    err(
        MixerLayer::init(&ctx, MixerKind::GivensMinGru { k: 4 }, 4, 6, &mut rng),
        &["multiple of the block size 4"],
    );
    err(
        MixerLayer::init(&ctx, kind, 4, usize::MAX, &mut rng),
        &["d (state width)", "fits usize"],
    );
    err(
        MixerLayer::init(&ctx, kind, usize::MAX / 4, 2, &mut rng),
        &["`d_model, d`", &MAX_ELEMENTS.to_string()],
    );
    err(
        MixerLayer::init(&ctx, kind, 1 << 20, 1 << 20, &mut rng),
        &["`d_model, d`"],
    );

    let config = CharModelConfig {
        kind,
        path: Default::default(),
        vocab: 5,
        layers: 1,
        d_model: 4,
        d_state: 2,
    };
    CharModel::init(&ctx, config, 1).unwrap();
    err(
        CharModel::init(
            &ctx,
            CharModelConfig {
                vocab: usize::MAX,
                ..config
            },
            1,
        ),
        &["CharModel", "config.vocab, config.d_model"],
    );
    err(
        CharModel::init(
            &ctx,
            CharModelConfig {
                vocab: 1 << 20,
                d_model: 1 << 20,
                ..config
            },
            1,
        ),
        &["config.vocab, config.d_model"],
    );
    err(
        CharModel::init(&ctx, CharModelConfig { d_state: 0, ..config }, 1),
        &["d (state width)"],
    );
    err(
        CharModel::init(&ctx, CharModelConfig { d_model: 0, ..config }, 1),
        &["d_model >= 1"],
    );
}

#[test]
fn audit_init_draws_the_same_weights_as_before() {
    // The checked draw is Rng::vec_range's: same seed, same values, same state after.
    let ctx = Context::cpu();
    let (dm, d) = (3, 2);
    let mut rng = Rng::new(7);
    let layer = MixerLayer::init(&ctx, MixerKind::MinGru, dm, d, &mut rng).unwrap();
    let mut want = Rng::new(7);
    let si = 1.0 / (dm as f32).sqrt();
    let w_in: Vec<f32> = want.vec_range(dm * 2 * d, -1.0, 1.0).iter().map(|v| v * si).collect();
    let so = 1.0 / (d as f32).sqrt();
    let w_out: Vec<f32> = want.vec_range(d * dm, -1.0, 1.0).iter().map(|v| v * so).collect();
    assert_eq!(layer.w_in.to_vec().unwrap(), w_in);
    assert_eq!(layer.w_out.to_vec().unwrap(), w_out);
    assert_eq!(rng.next_u64(), want.next_u64());
}

#[test]
fn audit_dispatch_floor_bounds_its_count() {
    let ctx = Context::cpu();
    err(
        Plan::dispatch_floor(&ctx, 0).map(drop),
        &["Plan::dispatch_floor", "`dispatches`", "0"],
    );
    err(
        Plan::dispatch_floor(&ctx, Plan::MAX_FLOOR_DISPATCHES + 1).map(drop),
        &["`dispatches`", &format!("1..={}", Plan::MAX_FLOOR_DISPATCHES)],
    );
    err(Plan::dispatch_floor(&ctx, usize::MAX).map(drop), &["`dispatches`"]);
}

#[test]
fn audit_random_checkpoint_checks_the_config() {
    let tiny = gpt2::tiny::tiny_config();
    let small = Config {
        vocab_size: 40,
        n_positions: 8,
        ..tiny.clone()
    };
    let bytes = gpt2::random_checkpoint(&small, 1, DType::F32).unwrap();
    Weights::from_safetensors(small.clone(), &bytes, "small").unwrap();
    // Zero, a width n_head does not divide, NaN eps, and a huge model (it aborted in the
    // allocator): errors before anything is drawn.
    err(
        gpt2::random_checkpoint(
            &Config {
                n_layer: 0,
                ..small.clone()
            },
            1,
            DType::F32,
        ),
        &["gpt2::random_checkpoint", "`config`", "n_layer"],
    );
    err(
        gpt2::random_checkpoint(
            &Config {
                n_embd: 33,
                ..small.clone()
            },
            1,
            DType::F32,
        ),
        &["`config`", "multiple of n_head"],
    );
    err(
        gpt2::random_checkpoint(
            &Config {
                layer_norm_epsilon: f32::NAN,
                ..small.clone()
            },
            1,
            DType::F32,
        ),
        &["`config`", "layer_norm_epsilon"],
    );
    err(
        gpt2::random_checkpoint(
            &Config {
                n_embd: usize::MAX,
                ..small.clone()
            },
            1,
            DType::F32,
        ),
        &["`config`", "n_embd"],
    );
    let huge = Config {
        n_layer: 4096,
        n_embd: 1 << 16,
        n_head: 1,
        ..small.clone()
    };
    err(
        gpt2::random_checkpoint(&huge, 1, DType::F16),
        &["`config`", "parameters in all"],
    );
}

#[test]
fn audit_gpt2_reference_forward_checks_the_weights() {
    let (config, bytes) = gpt2::tiny_random_checkpoint(gpt2::TINY_SEED);
    let mut w = Weights::from_safetensors(config, &bytes, "tiny").unwrap();
    gpt2::reference::forward(&w, &[1, 2]).unwrap();
    // The fields are public: a config that no longer matches the arrays indexed past them.
    w.config.n_embd = 64;
    err(gpt2::reference::forward(&w, &[1, 2]), &["Weights::validate", "wte"]);
    w.config.n_embd = 32;
    w.blocks.pop();
    err(
        gpt2::reference::forward(&w, &[1, 2]),
        &["Weights::validate", "`blocks`"],
    );
}
