//! The `nn` layers: forwards against hand computations in f64, gradients against finite
//! differences (CPU context) and against the CPU context's tape (every adapter), `MinGru`
//! against `mixer::MixerLayer` for every mixer kind, a language model of the layers against
//! `CharModel`'s training curve, the parameters' names, checkpoints, dropout's two modes, and
//! the errors of bad input.

use wgsl_compute::autograd::{Tape, Var};
use wgsl_compute::check::{gates, Gate, Rng};
use wgsl_compute::mixer::{MixerKind, MixerLayer, MixerPath};
use wgsl_compute::models::{random_windows, CharModel, CharModelConfig};
use wgsl_compute::nn::{
    Activation, Dropout, Embedding, Init, LayerNorm, Linear, MinGru, Mlp, Module, Pass, VarBuilder,
};
use wgsl_compute::train::{Adam, CharVocab, Optimizer, ParamStore};
use wgsl_compute::{Context, Tensor};

use crate::common::{assert_close, each_adapter};

const GATE: Gate = Gate::new(1e-5, 1e-4);

/// The host values of every parameter, by name.
fn values(m: &impl Module) -> Vec<Vec<f64>> {
    m.params()
        .iter()
        .map(|p| p.tensor().to_vec().unwrap().iter().map(|&v| v as f64).collect())
        .collect()
}

/// x (rows, k) @ w (k, n) + b, in f64.
fn affine(x: &[f64], w: &[f64], b: Option<&[f64]>, k: usize, n: usize) -> Vec<f64> {
    let rows = x.len() / k;
    let mut y = vec![0.0; rows * n];
    for r in 0..rows {
        for j in 0..n {
            let s: f64 = (0..k).map(|i| x[r * k + i] * w[i * n + j]).sum();
            y[r * n + j] = s + b.map_or(0.0, |b| b[j]);
        }
    }
    y
}

fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

fn f32s(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

/// A small model of every layer but the mixer: embedding, layer norm, MLP, head.
struct Small {
    wte: Embedding,
    ln: LayerNorm,
    mlp: Mlp,
    head: Linear,
}

impl Small {
    fn new(vb: &VarBuilder, act: Activation) -> Small {
        Small {
            wte: Embedding::with_init(&vb.pp("wte"), 11, 6, Init::Uniform(1.0)).unwrap(),
            ln: LayerNorm::new(&vb.pp("ln_f"), 6, 1e-5).unwrap(),
            mlp: Mlp::new(&vb.pp("mlp"), 6, 9, 6, act).unwrap(),
            head: Linear::new(&vb.pp("head"), 6, 5).unwrap(),
        }
    }

    /// ids (T,) -> logits (T, 5).
    fn forward(&self, pass: &Pass, ids: &[u32]) -> Var {
        let x = self.wte.forward(pass, ids).unwrap(); // (T, 6)
        let h = self.mlp.forward(pass, &self.ln.forward(pass, &x).unwrap()).unwrap();
        self.head.forward(pass, &x.add(&h).unwrap()).unwrap()
    }

    /// The same in f64 from the parameters' values.
    fn forward_f64(&self, ids: &[u32], act: Activation) -> Vec<f64> {
        let p = values(self);
        let (wte, g, b, w1, b1, w2, b2, wh, bh) = (&p[0], &p[1], &p[2], &p[3], &p[4], &p[5], &p[6], &p[7], &p[8]);
        let x: Vec<f64> = ids.iter().flat_map(|&i| wte[i as usize * 6..][..6].to_vec()).collect();
        let mut ln = vec![0.0; x.len()];
        for (row, out) in x.chunks(6).zip(ln.chunks_mut(6)) {
            let mean = row.iter().sum::<f64>() / 6.0;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 6.0;
            for j in 0..6 {
                out[j] = (row[j] - mean) / (var + 1e-5).sqrt() * g[j] + b[j];
            }
        }
        let act = |v: f64| match act {
            Activation::Gelu => gelu(v),
            Activation::Relu => v.max(0.0),
            Activation::Tanh => v.tanh(),
            Activation::Sigmoid => 1.0 / (1.0 + (-v).exp()),
        };
        let hid: Vec<f64> = affine(&ln, w1, Some(b1), 6, 9).into_iter().map(act).collect();
        let h = affine(&hid, w2, Some(b2), 9, 6);
        let r: Vec<f64> = x.iter().zip(&h).map(|(a, b)| a + b).collect();
        affine(&r, wh, Some(bh), 6, 5)
    }
}

impl Module for Small {
    fn params(&self) -> Vec<wgsl_compute::nn::Param> {
        let mut p = self.wte.params();
        p.extend(self.ln.params());
        p.extend(self.mlp.params());
        p.extend(self.head.params());
        p
    }
}

const IDS: [u32; 7] = [3, 0, 10, 3, 7, 1, 9];

#[test]
fn nn_layers_forward_matches_a_hand_computation() {
    let check = |ctx: &Context| {
        for (seed, act) in [
            Activation::Gelu,
            Activation::Relu,
            Activation::Tanh,
            Activation::Sigmoid,
        ]
        .into_iter()
        .enumerate()
        {
            let vb = VarBuilder::new(ctx, 60 + seed as u64);
            let m = Small::new(&vb, act);
            // LayerNorm's weight and bias start at 1 and 0: give them values of their own.
            let mut rng = Rng::new(61);
            m.ln.params()[0].tensor().write(&rng.vec_range(6, 0.5, 1.5)).unwrap();
            m.ln.params()[1].tensor().write(&rng.vec_range(6, -0.5, 0.5)).unwrap();
            let got = m.forward(&Pass::eval(&m), &IDS).tensor().to_vec().unwrap();
            let want = f32s(&m.forward_f64(&IDS, act));
            assert_close(ctx, &format!("small model, {act:?}"), &got, &want, GATE);
            // A training pass computes the same values.
            let tape = Tape::new(ctx);
            let pass = Pass::train(&tape, &m).unwrap();
            let y = m.forward(&pass, &IDS);
            assert!(y.is_variable());
            assert_eq!(
                y.tensor().to_vec().unwrap(),
                got,
                "{act:?}: train and eval passes agree"
            );
        }
    };
    check(&Context::cpu());
    each_adapter(check);
}

/// The loss of `m` on fixed targets, and its gradients on the tape, in `Module` order.
fn loss_and_grads(m: &Small) -> (f32, Vec<Vec<f32>>) {
    let tape = Tape::new(m.head.weight().tensor().context());
    let pass = Pass::train(&tape, m).unwrap();
    let loss = m.forward(&pass, &IDS).cross_entropy(&[1, 4, 0, 2, 3, 3, 1]).unwrap();
    let grads = loss.backward().unwrap();
    let g = pass
        .vars()
        .iter()
        .map(|v| grads.get(v).unwrap().to_vec().unwrap())
        .collect();
    (loss.tensor().to_vec().unwrap()[0], g)
}

#[test]
fn nn_layers_gradients_match_finite_differences_and_the_cpu_tape() {
    let cpu = Context::cpu();
    let m = Small::new(&VarBuilder::new(&cpu, 62), Activation::Gelu);
    let (_, grads) = loss_and_grads(&m);
    let h = 1e-2f32;
    for (p, g) in m.params().iter().zip(&grads) {
        let base = p.tensor().to_vec().unwrap();
        let mut fd = vec![];
        for i in 0..base.len() {
            let at = |d: f32| {
                let mut v = base.clone();
                v[i] += d;
                p.tensor().write(&v).unwrap();
                let tape_free = m
                    .forward(&Pass::eval(&m), &IDS)
                    .cross_entropy(&[1, 4, 0, 2, 3, 3, 1])
                    .unwrap();
                tape_free.tensor().to_vec().unwrap()[0] as f64
            };
            fd.push(((at(h) - at(-h)) / (2.0 * h as f64)) as f32);
        }
        p.tensor().write(&base).unwrap();
        assert_close(&cpu, &format!("d loss / d {}", p.name()), g, &fd, gates::GRADIENT_FD);
    }
    // Every adapter's tape against the CPU context's, from the same seed.
    each_adapter(|ctx| {
        let gm = Small::new(&VarBuilder::new(ctx, 62), Activation::Gelu);
        let (_, got) = loss_and_grads(&gm);
        for ((p, g), want) in gm.params().iter().zip(&got).zip(&grads) {
            assert_close(ctx, &format!("d loss / d {}", p.name()), g, want, gates::GRADIENT_TAPE);
        }
    });
}

#[test]
fn nn_layers_name_their_parameters_as_hugging_face_does() {
    let ctx = Context::cpu();
    let vb = VarBuilder::new(&ctx, 63);
    let h0 = vb.pp("h").pp(0);
    let ln_1 = LayerNorm::new(&h0.pp("ln_1"), 8, 1e-5).unwrap();
    let mlp = Mlp::new(&h0.pp("mlp"), 8, 32, 8, Activation::Gelu).unwrap();
    let mix = MinGru::new(&vb.pp("mix").pp(1), MixerKind::RotationMinGru, 8, 4).unwrap();
    let wte = Embedding::new(&vb.pp("wte"), 50, 8).unwrap();
    assert_eq!(ln_1.param_names(), ["h.0.ln_1.weight", "h.0.ln_1.bias"]);
    assert_eq!(
        mlp.param_names(),
        [
            "h.0.mlp.c_fc.weight",
            "h.0.mlp.c_fc.bias",
            "h.0.mlp.c_proj.weight",
            "h.0.mlp.c_proj.bias"
        ]
    );
    assert_eq!(
        mix.param_names(),
        ["mix.1.in_proj.weight", "mix.1.in_proj.bias", "mix.1.out_proj.weight"]
    );
    assert_eq!(wte.param_names(), ["wte.weight"]);
    assert_eq!(mlp.params()[0].shape(), &[8, 32]); // (in, out), GPT-2's Conv1D layout
    assert_eq!(mlp.size(), 8 * 32 + 32 + 32 * 8 + 8);
    // The builder's store holds every parameter in creation order, sharing the tensors.
    let store = vb.store();
    assert_eq!(store.len(), 2 + 4 + 3 + 1);
    assert_eq!(store.names()[..2], ["h.0.ln_1.weight", "h.0.ln_1.bias"]);
    assert_eq!(store.names()[9], "wte.weight");
    store.get("h.0.mlp.c_proj.bias").unwrap().write(&[0.5; 8]).unwrap();
    assert_eq!(
        values(&mlp)[3],
        vec![0.5; 8],
        "the store and the layer share the tensor"
    );
    // A list of layers is a module: its parameters in order.
    let layers = vec![ln_1.clone(), ln_1];
    assert_eq!(layers.param_names().len(), 4);
    // Defaults: LayerNorm ones and zeros, Linear's bias zeros and weight within 1/sqrt(in).
    assert_eq!(values(&layers[0])[0], vec![1.0; 8]);
    assert_eq!(values(&layers[0])[1], vec![0.0; 8]);
    let v = values(&mlp);
    assert_eq!(v[1], vec![0.0; 32]);
    assert!(v[0].iter().all(|w| w.abs() <= 1.0 / 8f64.sqrt()));
    assert!(v[0].iter().any(|w| w.abs() > 0.3), "uniform over the whole range");
    // One seed, one model; another seed, another.
    let again = Mlp::new(&VarBuilder::new(&ctx, 63).pp("mlp"), 8, 32, 8, Activation::Gelu).unwrap();
    let other = Mlp::new(&VarBuilder::new(&ctx, 64).pp("mlp"), 8, 32, 8, Activation::Gelu).unwrap();
    let first = Mlp::new(&VarBuilder::new(&ctx, 63).pp("mlp"), 8, 32, 8, Activation::Gelu).unwrap();
    assert_eq!(values(&again), values(&first));
    assert_ne!(values(&other), values(&first));
    // Normal init: mean near 0, deviation near the asked one.
    let n = Embedding::with_init(&VarBuilder::new(&ctx, 65), 100, 100, Init::Normal(0.02)).unwrap();
    let w = &values(&n)[0];
    let mean = w.iter().sum::<f64>() / w.len() as f64;
    let std = (w.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / w.len() as f64).sqrt();
    assert!(mean.abs() < 1e-3 && (std - 0.02).abs() < 1e-3, "mean {mean}, std {std}");
}

#[test]
fn nn_layers_checkpoints_round_trip_and_name_what_is_missing() {
    let ctx = Context::cpu();
    let vb = VarBuilder::new(&ctx, 66);
    let m = Small::new(&vb, Activation::Gelu);
    let bytes = vb.store().to_bytes().unwrap();
    // A model built from the checkpoint computes the same bits.
    let loaded = Small::new(&VarBuilder::from_bytes(&ctx, &bytes, "ckpt").unwrap(), Activation::Gelu);
    let a = m.forward(&Pass::eval(&m), &IDS).tensor().to_vec().unwrap();
    let b = loaded.forward(&Pass::eval(&loaded), &IDS).tensor().to_vec().unwrap();
    assert_eq!(a, b);
    // load_into a fresh model's store overwrites it in place.
    let fresh = Small::new(&VarBuilder::new(&ctx, 67), Activation::Gelu);
    fresh.store().unwrap().load_into(&bytes, "ckpt").unwrap();
    assert_eq!(fresh.forward(&Pass::eval(&fresh), &IDS).tensor().to_vec().unwrap(), a);
    // A checkpoint missing a name: the builder names the parameter.
    let mut partial = ParamStore::new();
    for (n, t) in vb.store().names().iter().zip(vb.store().tensors()) {
        if *n != "mlp.c_proj.bias" {
            partial.insert(*n, t.clone()).unwrap();
        }
    }
    let vb2 = VarBuilder::from_store(partial.clone()).unwrap();
    let e = Mlp::new(&vb2.pp("mlp"), 6, 9, 6, Activation::Gelu)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`mlp.c_proj.bias`") && e.contains("[6]") && e.contains("none"),
        "{e}"
    );
    // ... and so does load_into.
    let e = fresh
        .store()
        .unwrap()
        .load_into(&partial.to_bytes().unwrap(), "partial.safetensors");
    let e = e.unwrap_err().to_string();
    assert!(
        e.contains("mlp.c_proj.bias") && e.contains("partial.safetensors"),
        "{e}"
    );
    // A shape that differs: a shape error naming the parameter.
    let e = Mlp::new(
        &VarBuilder::from_bytes(&ctx, &bytes, "ckpt").unwrap().pp("mlp"),
        6,
        10,
        6,
        Activation::Gelu,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("`mlp.c_fc.weight`") && e.contains("[6, 10]") && e.contains("[6, 9]"),
        "{e}"
    );
}

#[test]
fn nn_layers_refuse_bad_inputs_naming_the_layer() {
    let check = |ctx: &Context| {
        let vb = VarBuilder::new(ctx, 68);
        let m = Small::new(&vb, Activation::Relu);
        let pass = Pass::eval(&m);
        let x = Var::constant(&Tensor::randn(ctx, &[3, 7], 1).unwrap()); // (3, 7), not 6 wide
        let err = |r: wgsl_compute::Result<Var>| r.unwrap_err().to_string();
        let e = err(m.head.forward(&pass, &x));
        assert!(
            e.starts_with("Linear: argument `x`") && e.contains("(..., 6)") && e.contains("`head`"),
            "{e}"
        );
        assert!(e.contains("[3, 7]"), "{e}");
        let e = err(m.mlp.forward(&pass, &x));
        assert!(e.starts_with("Mlp: argument `x`") && e.contains("`mlp.c_fc`"), "{e}");
        let e = err(m.ln.forward(&pass, &x));
        assert!(
            e.starts_with("LayerNorm: argument `x`") && e.contains("`ln_f`") && e.contains("(..., 6)"),
            "{e}"
        );
        let e = err(m.wte.forward(&pass, &[1, 11]));
        assert!(
            e.starts_with("Embedding: argument `ids`") && e.contains("below 11") && e.contains("`wte`"),
            "{e}"
        );
        let mix = MinGru::new(&vb.pp("mix"), MixerKind::MinGru, 6, 4).unwrap();
        let pass = Pass::eval(&mix);
        let e = err(mix.forward(&pass, &Var::constant(&Tensor::randn(ctx, &[2, 3, 5], 2).unwrap())));
        assert!(
            e.starts_with("MinGru: argument `x`") && e.contains("`mix.in_proj`") && e.contains("[2, 3, 5]"),
            "{e}"
        );
        let e = err(mix.forward(&pass, &Var::constant(&Tensor::randn(ctx, &[3, 6], 2).unwrap())));
        assert!(e.contains("(B, T, 6)"), "{e}");
        // A state width the mixer's blocks do not divide; a name made twice; a bad init.
        let e = MinGru::new(&vb.pp("g"), MixerKind::GivensMinGru { k: 4 }, 6, 6)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("GivensMinGRU") && e.contains("multiple of the block size 4"),
            "{e}"
        );
        let e = Linear::new(&vb.pp("head"), 6, 5).unwrap_err().to_string();
        assert!(e.contains("head.weight") && e.contains("not yet in the store"), "{e}");
        let e = Linear::with_init(&vb.pp("x"), 2, 2, Init::Normal(f32::NAN), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`x.weight`"), "{e}");
        assert!(Dropout::new(1.0).is_err() && LayerNorm::new(&vb.pp("y"), 4, 0.0).is_err());
        // A layer run in a pass of another model: the pass names the parameter it lacks.
        let e = err(m.head.forward(
            &Pass::eval(&mix),
            &Var::constant(&Tensor::randn(ctx, &[3, 6], 3).unwrap()),
        ));
        assert!(e.contains("`head.weight`") && e.contains("lacks"), "{e}");
        // Variables of the wrong count or shape for a compiled step's pass.
        let tape = Tape::new(ctx);
        let vars = Pass::train(&tape, &mix).unwrap().vars().to_vec();
        let e = Pass::from_vars(&m, vars, true).unwrap_err().to_string();
        assert!(e.contains("Pass::from_vars") && e.contains("9 variables"), "{e}");
    };
    check(&Context::cpu());
    each_adapter(check);
}

#[test]
fn nn_min_gru_is_the_mixer_layer_for_every_kind() {
    let kinds = [
        (MixerKind::MinGru, MixerPath::Auto),
        (MixerKind::SignedMinGru, MixerPath::Auto),
        (MixerKind::RotationMinGru, MixerPath::AngleFused),
        (MixerKind::RotationMinGru, MixerPath::Materialized),
        (MixerKind::GivensMinGru { k: 4 }, MixerPath::AngleFused),
        (MixerKind::GivensMinGru { k: 2 }, MixerPath::Materialized),
    ];
    let check = |ctx: &Context| {
        for (i, (kind, path)) in kinds.into_iter().enumerate() {
            let (dm, d, seed) = (12, 8, 70 + i as u64);
            // The same draws from the same seed: MixerLayer::init's order is in_proj, out_proj.
            let layer = MinGru::new(&VarBuilder::new(ctx, seed), kind, dm, d)
                .unwrap()
                .with_path(path)
                .unwrap();
            let mut reference = MixerLayer::init(ctx, kind, dm, d, &mut Rng::new(seed)).unwrap();
            reference.path = path;
            for (p, r) in layer.params().iter().zip(reference.params()) {
                assert_eq!(
                    p.tensor().to_vec().unwrap(),
                    r.to_vec().unwrap(),
                    "{kind}: {}",
                    p.name()
                );
            }
            let xt = Tensor::randn(ctx, &[2, 37, dm], seed).unwrap(); // (B, T, Dm)
            let tape = Tape::new(ctx);
            let x = tape.var(&xt).unwrap();
            let pass = Pass::train(&tape, &layer).unwrap();
            let y = layer.forward(&pass, &x).unwrap();
            let (want, mtape) = reference.forward(&xt).unwrap();
            let case = format!("{kind} {path:?}");
            assert_close(
                ctx,
                &case,
                &y.tensor().to_vec().unwrap(),
                &want.to_vec().unwrap(),
                gates::MIXER,
            );
            let seed_g = Tensor::randn(ctx, &[2, 37, dm], seed + 100).unwrap();
            let grads = y.backward_with(&seed_g).unwrap();
            let mg = reference.backward(&mtape, &seed_g).unwrap();
            let got_x = grads.get(&x).unwrap().to_vec().unwrap();
            assert_close(
                ctx,
                &format!("{case} dx"),
                &got_x,
                &mg.x.to_vec().unwrap(),
                gates::MIXER_BACKWARD,
            );
            for ((v, p), w) in pass.vars().iter().zip(layer.params()).zip(mg.params()) {
                let g = grads.get(v).unwrap().to_vec().unwrap();
                let name = format!("{case} d{}", p.name());
                assert_close(ctx, &name, &g, &w.to_vec().unwrap(), gates::MIXER_BACKWARD);
            }
        }
    };
    check(&Context::cpu());
    each_adapter(check);
}

/// A character language model of the layers: embedding, residual minGRU layers, head.
struct CharLm {
    wte: Embedding,
    layers: Vec<MinGru>,
    head: Linear,
}

impl CharLm {
    fn new(vb: &VarBuilder, kind: MixerKind, path: MixerPath, v: usize, dm: usize, layers: usize) -> CharLm {
        CharLm {
            wte: Embedding::with_init(&vb.pp("wte"), v, dm, Init::Uniform(1.0)).unwrap(),
            layers: (0..layers)
                .map(|l| {
                    MinGru::new(&vb.pp("h").pp(l), kind, dm, dm)
                        .unwrap()
                        .with_path(path)
                        .unwrap()
                })
                .collect(),
            head: Linear::new(&vb.pp("head"), dm, v).unwrap(),
        }
    }

    fn loss(&self, pass: &Pass, x: &[u32], y: &[u32], batch: usize) -> Var {
        let dm = self.head.widths().0;
        let mut h = self
            .wte
            .forward(pass, x)
            .unwrap()
            .reshape(&[batch, x.len() / batch, dm])
            .unwrap();
        for l in &self.layers {
            h = h.add(&l.forward(pass, &h).unwrap()).unwrap(); // (B, T, Dm), residual
        }
        let logits = self.head.forward(pass, &h.reshape(&[x.len(), dm]).unwrap()).unwrap();
        logits.cross_entropy(y).unwrap()
    }
}

impl Module for CharLm {
    fn params(&self) -> Vec<wgsl_compute::nn::Param> {
        let mut p = self.wte.params();
        p.extend(self.layers.params());
        p.extend(self.head.params());
        p
    }
}

#[test]
fn nn_char_lm_of_layers_follows_char_model() {
    let text = "the cat sat on the mat. the dog sat on the log. the cat and the dog sat.\n";
    let vocab = CharVocab::from_text(text).unwrap();
    let ids = vocab.encode(text).unwrap();
    let (batch, seq, steps) = (4, 16, 5);
    let check = |ctx: &Context| {
        for (kind, path) in [
            (MixerKind::MinGru, MixerPath::Auto),
            (MixerKind::GivensMinGru { k: 4 }, MixerPath::AngleFused),
        ] {
            let config = CharModelConfig {
                kind,
                path,
                vocab: vocab.len(),
                layers: 2,
                d_model: 16,
                d_state: 16,
            };
            let old = CharModel::init(ctx, config, 5).unwrap();
            let new = CharLm::new(&VarBuilder::new(ctx, 5), kind, path, vocab.len(), 16, 2);
            assert_eq!(new.param_names()[1], "h.0.in_proj.weight");
            for (p, o) in new.params().iter().zip(old.params()) {
                assert_eq!(
                    p.tensor().to_vec().unwrap(),
                    o.to_vec().unwrap(),
                    "{kind}: {}",
                    p.name()
                );
            }
            let (mut a_old, mut a_new) = (
                Adam::new(&old.params(), 1e-2).unwrap(),
                Adam::new(&new.store().unwrap().tensors(), 1e-2).unwrap(),
            );
            let mut rng = Rng::new(91);
            let (mut l_old, mut l_new) = (vec![], vec![]);
            for _ in 0..steps {
                let (x, y) = random_windows(&ids, batch, seq, &mut rng).unwrap();
                let tape = Tape::new(ctx);
                let vars = old.vars(&tape).unwrap();
                let loss = old.loss_var(&vars, &x, &y, batch).unwrap();
                a_old.step_vars(&vars, &loss.backward().unwrap()).unwrap();
                l_old.push(loss.tensor().to_vec().unwrap()[0]);
                let tape = Tape::new(ctx);
                let pass = Pass::train(&tape, &new).unwrap();
                let loss = new.loss(&pass, &x, &y, batch);
                a_new.step_vars(pass.vars(), &loss.backward().unwrap()).unwrap();
                l_new.push(loss.tensor().to_vec().unwrap()[0]);
            }
            assert!(l_new[steps - 1] < l_new[0], "{kind}: the loss did not fall: {l_new:?}");
            let case = format!("{kind} losses, layers vs CharModel");
            assert_close(ctx, &case, &l_new, &l_old, gates::MIXER_BACKWARD);
        }
    };
    check(&Context::cpu());
    each_adapter(check);
}

#[test]
fn nn_dropout_zeroes_in_training_and_passes_through_in_eval() {
    let check = |ctx: &Context| {
        let drop = Dropout::new(0.25).unwrap();
        let store = ParamStore::new();
        let xt = Tensor::full(ctx, &[4000], 2.0).unwrap();
        let eval = Pass::eval(&store);
        let x = Var::constant(&xt);
        assert_eq!(
            drop.forward(&eval, &x).unwrap().tensor().to_vec().unwrap(),
            vec![2.0; 4000]
        );
        let tape = Tape::new(ctx);
        let xv = tape.var(&xt).unwrap();
        let train = Pass::train(&tape, &store).unwrap().with_seed(7);
        let y = drop.forward(&train, &xv).unwrap();
        let got = y.tensor().to_vec().unwrap();
        let zeros = got.iter().filter(|&&v| v == 0.0).count();
        assert!(got.iter().all(|&v| v == 0.0 || (v - 2.0 / 0.75).abs() < 1e-6));
        assert!((850..1150).contains(&zeros), "{zeros} of 4000 dropped at p = 0.25");
        // The gradient is the mask; a second call in the pass draws another mask; one seed
        // repeats.
        let g = y.sum_all().unwrap().backward().unwrap();
        let gx = g.get(&xv).unwrap().to_vec().unwrap();
        assert!(gx.iter().zip(&got).all(|(d, v)| (*d == 0.0) == (*v == 0.0)));
        let second = drop.forward(&train, &x).unwrap().tensor().to_vec().unwrap();
        assert_ne!(second, got);
        let replay = Pass::train(&Tape::new(ctx), &store).unwrap().with_seed(7);
        assert_eq!(drop.forward(&replay, &x).unwrap().tensor().to_vec().unwrap(), got);
    };
    check(&Context::cpu());
    each_adapter(check);
}
