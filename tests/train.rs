//! Training pieces: cross-entropy against the reference (and the reference against finite
//! differences), Adam on the GPU against the CPU context, a tiny character model of every
//! mixer whose loss falls in a few steps, and bad inputs.

use ndarray::Array2;
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::mixer::{MixerKind, MixerPath};
use wgsl_compute::models::{CharModel, CharModelConfig};
use wgsl_compute::reference::nn::cross_entropy as reference_ce;
use wgsl_compute::train::{cross_entropy, Adam, CharVocab};
use wgsl_compute::{Context, Tensor};

use crate::common::{assert_close, each_adapter};

#[test]
fn cross_entropy_matches_the_reference_and_finite_differences() {
    let mut rng = Rng::new(71);
    let (rows, cols) = (37, 300);
    let logits = rng.vec_range(rows * cols, -4.0, 4.0);
    let targets: Vec<u32> = (0..rows).map(|_| rng.below(cols) as u32).collect();
    let host = Array2::from_shape_vec((rows, cols), logits.clone()).unwrap();
    let (want_loss, want_grad) = reference_ce(&host.view(), &targets).unwrap();

    // The reference gradient against central differences of the mean loss.
    let mean = |x: &Array2<f32>| {
        reference_ce(&x.view(), &targets)
            .unwrap()
            .0
            .iter()
            .map(|&l| l as f64)
            .sum::<f64>()
            / rows as f64
    };
    let mut x = host.clone();
    for &(r, c) in &[(0, 0), (3, targets[3] as usize), (36, 299), (20, 150)] {
        let keep = x[[r, c]];
        x[[r, c]] = keep + 1e-2;
        let up = mean(&x);
        x[[r, c]] = keep - 1e-2;
        let down = mean(&x);
        x[[r, c]] = keep;
        let fd = (up - down) / 2e-2;
        assert!(
            (fd - want_grad[[r, c]] as f64).abs() < 1e-4,
            "[{r}, {c}]: fd {fd} vs {}",
            want_grad[[r, c]]
        );
    }

    let cpu = Context::cpu();
    let check = |ctx: &Context| {
        let ce = cross_entropy(&Tensor::from_slice(ctx, &[rows, cols], &logits).unwrap(), &targets).unwrap();
        let gate = Gate::new(1e-5, 1e-5);
        assert_close(
            ctx,
            "cross_entropy loss",
            &ce.loss.to_vec().unwrap(),
            want_loss.as_slice().unwrap(),
            gate,
        );
        assert_close(
            ctx,
            "cross_entropy grad",
            &ce.grad.to_vec().unwrap(),
            want_grad.as_slice().unwrap(),
            gate,
        );
    };
    check(&cpu);
    each_adapter(check);
}

#[test]
fn adam_on_the_gpu_matches_the_cpu_context() {
    let mut rng = Rng::new(72);
    let w0 = rng.vec_range(1000, -1.0, 1.0);
    let grads: Vec<Vec<f32>> = (0..3).map(|_| rng.vec_range(1000, -1.0, 1.0)).collect();
    let run = |ctx: &Context| {
        let w = Tensor::from_slice(ctx, &[10, 100], &w0).unwrap();
        let mut adam = Adam::new(&[&w], 0.01).unwrap();
        for g in &grads {
            adam.step(&[&w], &[&Tensor::from_slice(ctx, &[10, 100], g).unwrap()])
                .unwrap();
        }
        assert_eq!(adam.steps(), 3);
        w.to_vec().unwrap()
    };
    let want = run(&Context::cpu());
    // The weights moved: Adam's steps are about lr each, so three of them move a weight by
    // up to 3 lr, less where random gradient signs cancel.
    let moved = want.iter().zip(&w0).map(|(a, b)| (a - b).abs()).sum::<f32>() / want.len() as f32;
    assert!(moved > 5e-3 && moved < 3e-2, "mean |step| {moved}");
    each_adapter(|ctx| assert_close(ctx, "adam", &run(ctx), &want, Gate::new(1e-6, 1e-5)));
}

const TEXT: &str = "the cat sat on the mat. the dog sat on the log. the cat and the dog sat.\n";

/// A few Adam steps on one fixed batch of a tiny model: the loss must fall clearly.
fn loss_falls(ctx: &Context, kind: MixerKind, path: MixerPath) {
    let vocab = CharVocab::from_text(TEXT).unwrap();
    let ids = vocab.encode(TEXT).unwrap();
    let (batch, t) = (4, 16);
    let mut inputs = Vec::new();
    let mut targets = Vec::new();
    for b in 0..batch {
        let start = b * 13;
        inputs.extend_from_slice(&ids[start..start + t]);
        targets.extend_from_slice(&ids[start + 1..start + t + 1]);
    }
    let config = CharModelConfig {
        kind,
        path,
        vocab: vocab.len(),
        layers: 2,
        d_model: 16,
        d_state: 16,
    };
    let model = CharModel::init(ctx, config, 5).unwrap();
    let mut adam = Adam::new(&model.params(), 1e-2).unwrap();
    let first = model.loss(&inputs, &targets, batch).unwrap();
    for _ in 0..12 {
        let lg = model.loss_and_grads(&inputs, &targets, batch).unwrap();
        assert!(lg.loss.is_finite());
        let grads: Vec<&Tensor> = lg.grads.iter().collect();
        adam.step(&model.params(), &grads).unwrap();
    }
    let last = model.loss(&inputs, &targets, batch).unwrap();
    let name = format!("{kind} {path:?} on {} ({:?})", ctx.info().name, ctx.info().backend);
    assert!(last < 0.8 * first, "{name}: loss {first} -> {last} after 12 steps");
}

#[test]
fn a_tiny_char_model_of_every_mixer_learns() {
    let kinds = [
        (MixerKind::MinGru, MixerPath::Auto),
        (MixerKind::SignedMinGru, MixerPath::Auto),
        (MixerKind::RotationMinGru, MixerPath::AngleFused),
        (MixerKind::GivensMinGru { k: 4 }, MixerPath::AngleFused),
        (MixerKind::GivensMinGru { k: 4 }, MixerPath::Materialized),
    ];
    loss_falls(&Context::cpu(), MixerKind::GivensMinGru { k: 4 }, MixerPath::Auto);
    each_adapter(|ctx| {
        for (kind, path) in kinds {
            loss_falls(ctx, kind, path);
        }
    });
}

#[test]
fn training_bad_inputs_are_errors() {
    let ctx = Context::cpu();
    let logits = Tensor::zeros(&ctx, &[2, 5]).unwrap();
    let msg = cross_entropy(&logits, &[1, 5]).unwrap_err().to_string();
    assert!(
        msg.contains("cross_entropy") && msg.contains("targets") && msg.contains("5 at [1]"),
        "{msg}"
    );
    let msg = cross_entropy(&logits, &[1]).unwrap_err().to_string();
    assert!(msg.contains("targets") && msg.contains("2 indices"), "{msg}");
    assert!(CharVocab::from_text("aaaa").is_err());
    let vocab = CharVocab::from_text("abc").unwrap();
    assert_eq!(vocab.decode(&vocab.encode("cab").unwrap()), "cab");
    let msg = vocab.encode("abz").unwrap_err().to_string();
    assert!(msg.contains("'z'"), "{msg}");
    let config = CharModelConfig {
        kind: MixerKind::GivensMinGru { k: 4 },
        path: MixerPath::Auto,
        vocab: 3,
        layers: 1,
        d_model: 4,
        d_state: 6,
    };
    let msg = CharModel::init(&ctx, config, 1).unwrap_err().to_string();
    assert!(
        msg.contains("GivensMinGRU") && msg.contains("multiple of the block size 4"),
        "{msg}"
    );
    let fused_mingru = CharModelConfig {
        kind: MixerKind::MinGru,
        path: MixerPath::AngleFused,
        d_state: 8,
        ..config
    };
    let msg = CharModel::init(&ctx, fused_mingru, 1).unwrap_err().to_string();
    assert!(msg.contains("MinGRU") && msg.contains("angle-fused"), "{msg}");
    // Adam checks every pair before it moves anything.
    let (w1, w2) = (
        Tensor::zeros(&ctx, &[3]).unwrap(),
        Tensor::zeros(&ctx, &[2, 2]).unwrap(),
    );
    let mut adam = Adam::new(&[&w1, &w2], 0.1).unwrap();
    let ones = Tensor::full(&ctx, &[3], 1.0).unwrap();
    let msg = adam.step(&[&w1, &w2], &[&ones, &ones]).unwrap_err().to_string();
    assert!(msg.contains("adam") && msg.contains("grad"), "{msg}");
    assert_eq!(adam.steps(), 0);
    assert_eq!(
        w1.to_vec().unwrap(),
        vec![0.0; 3],
        "a failed step moved the first parameter"
    );
    let msg = adam.step(&[&w1], &[&ones]).unwrap_err().to_string();
    assert!(msg.contains("2 of each"), "{msg}");
    let model = CharModel::init(&ctx, CharModelConfig { d_state: 8, ..config }, 1).unwrap();
    let msg = model.loss(&[0, 1, 2], &[1, 2, 0], 2).unwrap_err().to_string();
    assert!(msg.contains("multiple of the batch size 2"), "{msg}");
    let msg = model.loss(&[0, 7], &[1, 2], 1).unwrap_err().to_string();
    assert!(msg.contains("below the vocabulary size 3"), "{msg}");
}

/// A copy of `model` with parameter `index` (in `params()` order) replaced by `value`.
fn with_param(model: &CharModel, index: usize, value: Tensor) -> CharModel {
    let mut m = model.clone();
    let layers = m.layers.len();
    match index {
        0 => m.embed = value,
        i if i <= 3 * layers => {
            let layer = &mut m.layers[(i - 1) / 3];
            match (i - 1) % 3 {
                0 => layer.w_in = value,
                1 => layer.b_in = value,
                _ => layer.w_out = value,
            }
        }
        i if i == 3 * layers + 1 => m.head = value,
        _ => m.head_bias = value,
    }
    m
}

#[test]
fn char_model_gradients_match_finite_differences() {
    // The whole backward chain (one-hot embedding, residual adds, mixer layers, head, bias)
    // against central differences of the loss, on the CPU context, at the largest gradient
    // entries of every parameter (f32 losses: eps 1e-2, a loose gate that still catches a sign
    // or scale error).
    let ctx = Context::cpu();
    let vocab = CharVocab::from_text(TEXT).unwrap();
    let ids = vocab.encode(TEXT).unwrap();
    let (batch, t) = (2, 8);
    let inputs: Vec<u32> = [&ids[0..t], &ids[20..20 + t]].concat();
    let targets: Vec<u32> = [&ids[1..t + 1], &ids[21..21 + t]].concat();
    for kind in [MixerKind::MinGru, MixerKind::GivensMinGru { k: 4 }] {
        let config = CharModelConfig {
            kind,
            path: MixerPath::Auto,
            vocab: vocab.len(),
            layers: 2,
            d_model: 8,
            d_state: 8,
        };
        let model = CharModel::init(&ctx, config, 9).unwrap();
        let lg = model.loss_and_grads(&inputs, &targets, batch).unwrap();
        let params = model.params();
        assert_eq!(lg.grads.len(), params.len());
        for (i, (p, g)) in params.iter().zip(&lg.grads).enumerate() {
            assert_eq!(g.shape(), p.shape(), "{kind} grad {i}");
            let (pv, gv) = (p.to_vec().unwrap(), g.to_vec().unwrap());
            let mut order: Vec<usize> = (0..gv.len()).collect();
            order.sort_by(|&a, &b| gv[b].abs().total_cmp(&gv[a].abs()));
            for &e in order.iter().take(3) {
                let eps = 1e-2;
                let shifted = |d: f32| {
                    let mut v = pv.clone();
                    v[e] += d;
                    let m = with_param(&model, i, Tensor::from_slice(&ctx, p.shape(), &v).unwrap());
                    m.loss(&inputs, &targets, batch).unwrap() as f64
                };
                let fd = (shifted(eps) - shifted(-eps)) / (2.0 * eps as f64);
                let want = gv[e] as f64;
                assert!(
                    (fd - want).abs() <= 2e-3 + 0.05 * want.abs(),
                    "{kind} param {i} [{e}]: finite difference {fd}, gradient {want}"
                );
            }
        }
    }
}
