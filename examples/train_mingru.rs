//! Trains a character-level language model of minGRU-style mixer layers on a text file and
//! samples from it, on the GPU (or the CPU reference context).
//!
//! ```text
//! cargo run --release --example train_mingru -- [--text FILE] [--mixer mingru|signed|rotation|givens[:K]]
//!     [--path auto|fused|materialized] [--steps N] [--batch B] [--seq T] [--layers L]
//!     [--d-model DM] [--d-state D] [--lr LR] [--seed S] [--sample CHARS] [--cpu] [--plot FILE.svg]
//!     [--hand-backward]
//! ```
//! The model is built from the `nn` layers (`CharLm` below: an `Embedding`, residual `MinGru`
//! layers, a `Linear` head, named `wte.weight`, `h.0.in_proj.weight`, ...). Each step runs
//! the forward in a training `Pass` (every parameter a leaf of a fresh tape), takes the
//! gradients from `loss.backward()` and steps Adam through `Optimizer::step_vars`;
//! `--hand-backward` steps the same tensors with `CharModel`'s hand-written backward chain
//! (`loss_and_grads`) instead, which follows the same loss curve (`tests/optim.rs`,
//! `tests/nn_layers.rs`).
//! Without `--text` it trains on `assets/text/shakespeare.txt` (three plays, 401 k chars).
//! The last 10% of the text is held out: the validation loss is printed every `--steps / 5`
//! steps. The process fails (exit 1) when the training loss did not fall. `--plot loss.svg`
//! writes the train and validation loss curves as an SVG chart.

#[path = "common/charts.rs"]
mod charts;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use wgsl_compute::autograd::{Tape, Var};
use wgsl_compute::check::Rng;
use wgsl_compute::generate::{Sampler, Sampling};
use wgsl_compute::mixer::{MixerKind, MixerLayer, MixerPath};
use wgsl_compute::models::{random_windows, CharModel, CharModelConfig};
use wgsl_compute::nn::{Embedding, Init, Linear, MinGru, Module, Param, Pass, VarBuilder};
use wgsl_compute::train::{Adam, CharVocab, Optimizer};
use wgsl_compute::{Context, Tensor};

/// The language model: `x_0 = wte[ids]`, `x_l = x_{l-1} + mixer_l(x_{l-1})`, logits = head(x_L).
/// Its parameters are drawn in `CharModel::init`'s order, so one seed gives both one model.
struct CharLm {
    wte: Embedding, // (V, Dm)
    h: Vec<MinGru>, // (B, T, Dm) -> (B, T, Dm)
    head: Linear,   // (Dm, V) + (V,)
}

impl CharLm {
    fn new(vb: &VarBuilder, c: &CharModelConfig) -> wgsl_compute::Result<CharLm> {
        let mixer = |l| MinGru::new(&vb.pp("h").pp(l), c.kind, c.d_model, c.d_state)?.with_path(c.path);
        Ok(CharLm {
            wte: Embedding::with_init(&vb.pp("wte"), c.vocab, c.d_model, Init::Uniform(1.0))?,
            h: (0..c.layers).map(mixer).collect::<wgsl_compute::Result<_>>()?,
            head: Linear::new(&vb.pp("head"), c.d_model, c.vocab)?,
        })
    }

    /// ids (B T, row after row) -> logits (B T, V).
    fn logits(&self, pass: &Pass, ids: &[u32], batch: usize) -> wgsl_compute::Result<Var> {
        let dm = self.head.widths().0;
        let mut x = self.wte.forward(pass, ids)?.reshape(&[batch, ids.len() / batch, dm])?; // (B, T, Dm)
        for layer in &self.h {
            x = x.add(&layer.forward(pass, &x)?)?; // residual
        }
        self.head.forward(pass, &x.reshape(&[ids.len(), dm])?)
    }

    /// `CharModel` on the same tensors, for `--hand-backward`.
    fn hand(&self, config: CharModelConfig) -> wgsl_compute::Result<CharModel> {
        let t = |p: &Param| p.tensor().clone();
        let layers = self.h.iter().map(|l| {
            let (w_in, b_in) = (t(l.in_proj.weight()), l.in_proj.bias().map(t));
            let b_in = b_in.ok_or_else(|| wgsl_compute::Error::value("CharLm", "in_proj", "a bias", "none"))?;
            MixerLayer::new(l.kind, l.path, w_in, b_in, t(l.out_proj.weight()))
        });
        let head_bias = self.head.bias().map(t);
        let head_bias = head_bias.ok_or_else(|| wgsl_compute::Error::value("CharLm", "head", "a bias", "none"))?;
        Ok(CharModel {
            config,
            embed: t(self.wte.weight()),
            layers: layers.collect::<wgsl_compute::Result<_>>()?,
            head: t(self.head.weight()),
            head_bias,
        })
    }
}

impl Module for CharLm {
    fn params(&self) -> Vec<Param> {
        let mut p = self.wte.params();
        p.extend(self.h.params());
        p.extend(self.head.params());
        p
    }
}

struct Args {
    text: PathBuf,
    kind: MixerKind,
    path: MixerPath,
    steps: usize,
    batch: usize,
    seq: usize,
    layers: usize,
    d_model: usize,
    d_state: usize,
    lr: f32,
    seed: u64,
    sample: usize,
    cpu: bool,
    plot: Option<PathBuf>,
    hand_backward: bool,
}

const USAGE: &str = "usage: train_mingru [--text FILE] [--mixer mingru|signed|rotation|givens[:K]] \
[--path auto|fused|materialized] [--steps N] [--batch B] [--seq T] [--layers L] [--d-model DM] \
[--d-state D] [--lr LR] [--seed S] [--sample CHARS] [--cpu] [--plot FILE.svg] [--hand-backward]";

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        text: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/text/shakespeare.txt"),
        kind: MixerKind::MinGru,
        path: MixerPath::Auto,
        steps: 300,
        batch: 32,
        seq: 64,
        layers: 2,
        d_model: 64,
        d_state: 64,
        lr: 3e-3,
        seed: 0,
        sample: 300,
        cpu: false,
        plot: None,
        hand_backward: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        fn num<T: std::str::FromStr>(name: &str, v: String) -> Result<T, String>
        where
            T::Err: std::fmt::Display,
        {
            v.parse().map_err(|e| format!("{name} {v:?}: {e}"))
        }
        match arg.as_str() {
            "--text" => a.text = PathBuf::from(value("--text")?),
            "--mixer" => a.kind = MixerKind::parse(&value("--mixer")?).map_err(|e| e.to_string())?,
            "--path" => {
                a.path = match value("--path")?.as_str() {
                    "auto" => MixerPath::Auto,
                    "fused" => MixerPath::AngleFused,
                    "materialized" => MixerPath::Materialized,
                    other => return Err(format!("--path {other:?}: expected auto, fused or materialized")),
                }
            }
            "--steps" => a.steps = num("--steps", value("--steps")?)?,
            "--batch" => a.batch = num("--batch", value("--batch")?)?,
            "--seq" => a.seq = num("--seq", value("--seq")?)?,
            "--layers" => a.layers = num("--layers", value("--layers")?)?,
            "--d-model" => a.d_model = num("--d-model", value("--d-model")?)?,
            "--d-state" => a.d_state = num("--d-state", value("--d-state")?)?,
            "--lr" => a.lr = num("--lr", value("--lr")?)?,
            "--seed" => a.seed = num("--seed", value("--seed")?)?,
            "--sample" => a.sample = num("--sample", value("--sample")?)?,
            "--cpu" => a.cpu = true,
            "--hand-backward" => a.hand_backward = true,
            "--plot" => a.plot = Some(PathBuf::from(value("--plot")?)),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if a.steps == 0 || a.batch == 0 || a.seq == 0 {
        return Err("--steps, --batch and --seq must be positive".into());
    }
    Ok(a)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    match run(&args) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

/// A progress bar redrawn in place on a terminal; a line every 5% of the steps otherwise (logs).
fn progress(step: usize, steps: usize, loss: f32, started: Instant) {
    let terminal = std::io::stderr().is_terminal();
    if !terminal && !step.is_multiple_of((steps / 20).max(1)) {
        return;
    }
    let width = 30;
    let done = step * width / steps;
    let rate = step as f64 / started.elapsed().as_secs_f64();
    let bar = format!(
        "[{}{}] {step}/{steps} loss {loss:.3} ({rate:.1} steps/s)",
        "=".repeat(done),
        " ".repeat(width - done)
    );
    if terminal {
        eprint!("\r{bar}  ");
    } else {
        eprintln!("{bar}");
    }
    let _ = std::io::stderr().flush();
}

fn run(args: &Args) -> wgsl_compute::Result<bool> {
    let text = std::fs::read_to_string(&args.text).map_err(|e| wgsl_compute::Error::Io {
        what: args.text.display().to_string(),
        message: e.to_string(),
    })?;
    let vocab = CharVocab::from_text(&text)?;
    let ids = vocab.encode(&text)?;
    let split = ids.len() * 9 / 10;
    let (train, val) = (&ids[..split], &ids[split..]);
    if val.len() <= args.seq + 1 {
        return Err(wgsl_compute::Error::value(
            "train_mingru",
            "--text",
            format!("a text whose last 10% is longer than --seq {} characters", args.seq),
            format!("{} characters", ids.len()),
        ));
    }
    let ctx = if args.cpu { Context::cpu() } else { Context::new()? };
    let config = CharModelConfig {
        kind: args.kind,
        path: args.path,
        vocab: vocab.len(),
        layers: args.layers,
        d_model: args.d_model,
        d_state: args.d_state,
    };
    let model = CharLm::new(&VarBuilder::new(&ctx, args.seed), &config)?;
    let hand = model.hand(config)?; // the same tensors, for --hand-backward
    println!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    println!(
        "text: {} ({} chars, vocabulary {}); model: {} layers of {}, path {:?}, d_model {}, d_state {}, {} parameters",
        args.text.display(),
        ids.len(),
        vocab.len(),
        args.layers,
        args.kind,
        args.path,
        args.d_model,
        args.d_state,
        model.size()
    );
    println!(
        "training: {} steps of {} x {} characters, Adam lr {}, gradients from {}",
        args.steps,
        args.batch,
        args.seq,
        args.lr,
        if args.hand_backward {
            "the hand-written backward"
        } else {
            "the autograd tape"
        }
    );
    let mut rng = Rng::new(args.seed ^ 0x5eed);
    let (val_in, val_tgt) = random_windows(val, args.batch, args.seq, &mut Rng::new(7))?;
    let mut adam = Adam::new(&model.store()?.tensors(), args.lr)?;
    let eval_every = (args.steps / 5).max(1);
    let started = Instant::now();
    let mut losses = Vec::with_capacity(args.steps);
    let mut val_losses = Vec::new();
    for step in 1..=args.steps {
        let (inputs, targets) = random_windows(train, args.batch, args.seq, &mut rng)?;
        let loss = if args.hand_backward {
            let lg = hand.loss_and_grads(&inputs, &targets, args.batch)?;
            let grads: Vec<&Tensor> = lg.grads.iter().collect();
            adam.step(&hand.params(), &grads)?;
            lg.loss
        } else {
            let tape = Tape::new(&ctx);
            let pass = Pass::train(&tape, &model)?;
            let loss = model.logits(&pass, &inputs, args.batch)?.cross_entropy(&targets)?; // ()
            adam.step_vars(pass.vars(), &loss.backward()?)?;
            loss.tensor().to_vec()?[0]
        };
        if !loss.is_finite() {
            return Err(wgsl_compute::Error::value(
                "train_mingru",
                "loss",
                "a finite value",
                format!("{loss} at step {step}"),
            ));
        }
        losses.push(loss);
        progress(step, args.steps, loss, started);
        if step % eval_every == 0 || step == args.steps {
            let val = model
                .logits(&Pass::eval(&model), &val_in, args.batch)?
                .cross_entropy(&val_tgt)?;
            let val_loss = val.tensor().to_vec()?[0];
            if std::io::stderr().is_terminal() {
                eprintln!();
            }
            println!("step {step}: train loss {loss:.4}, validation loss {val_loss:.4}");
            val_losses.push((step as f64, val_loss as f64));
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let window = (args.steps / 10).clamp(1, 20);
    let mean = |l: &[f32]| l.iter().sum::<f32>() / l.len() as f32;
    let (first, last) = (mean(&losses[..window]), mean(&losses[losses.len() - window..]));
    println!(
        "{} steps in {seconds:.1} s ({:.1} steps/s); mean loss of the first {window} steps {first:.4}, of the last {window} {last:.4}",
        args.steps,
        args.steps as f64 / seconds
    );

    if let Some(path) = &args.plot {
        let train: Vec<(f64, f64)> = losses
            .iter()
            .enumerate()
            .map(|(i, l)| ((i + 1) as f64, *l as f64))
            .collect();
        let text = args.text.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let title = format!("{} x {} on {text}: loss", args.layers, args.kind);
        charts::loss_curves(path, &title, &train, &val_losses).map_err(|message| wgsl_compute::Error::Io {
            what: path.display().to_string(),
            message,
        })?;
        println!("wrote the loss curves to {}", path.display());
    }

    if args.sample > 0 {
        println!("--- sample (temperature 0.8) ---");
        let context = vocab.encode("ROMEO:\n").unwrap_or_else(|_| vec![ids[0]]);
        print!("{}", vocab.decode(&context));
        let mut sampler = Sampler::new(Sampling::TopK {
            temperature: 0.8,
            k: 0,
            seed: args.seed,
        })?;
        let (mut ids, v) = (context, vocab.len());
        for _ in 0..args.sample {
            let window = &ids[ids.len().saturating_sub(args.seq)..];
            let logits = model.logits(&Pass::eval(&model), window, 1)?.tensor().to_vec()?; // (T, V)
            let id = sampler.pick(&logits[logits.len() - v..])?;
            print!("{}", vocab.decode(&[id]));
            ids.push(id);
        }
        println!("\n---");
    }
    if last >= first {
        eprintln!("the training loss did not fall ({first:.4} -> {last:.4})");
        return Ok(false);
    }
    Ok(true)
}
