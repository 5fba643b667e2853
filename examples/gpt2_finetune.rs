//! Fine-tunes a GPT-2 on text through the autograd tape, then generates with it.
//!
//! ```text
//! cargo run --release --example gpt2_finetune -- [--steps N] [--batch B] [--context T] [--lr LR]
//!     [--corpus TOKENS] [--text FILE] [--model DIR] [--prompt TEXT] [--tokens N] [--save DIR] [--cpu]
//!     [--plan]
//! ```
//! By default it takes the shipped Shakespeare model (`assets/models/shakespeare/`, 12M
//! parameters, stored in f16 and trained here in f32) and the first 4096 tokens of the shipped
//! `assets/text/shakespeare.txt`, and runs 200 Adam steps on random windows of 4 rows of 64
//! tokens. Each step records the forward on a `Tape` (`models::gpt2::Trainable`), runs
//! `backward` and steps Adam in place; every 10 steps it prints the loss, the time per step and
//! what is left. Then it reads the parameters back as a checkpoint, continues `--prompt` with
//! the tuned model (sampled, fixed seed) and, with `--save DIR`, writes `config.json` and
//! `model.safetensors` there (load them with `--model DIR` in the `gpt2` example).
//! `--plan` captures the step once as a `train::CompiledStep` and replays it, the batch's ids
//! written to device tensors before each replay (`Tensor::write_ids`); GPU contexts only.

use std::path::PathBuf;
use std::time::Instant;

use wgsl_compute::autograd::Tape;
use wgsl_compute::generate::Generate;
use wgsl_compute::generate::Sampling;
use wgsl_compute::models::gpt2::{train::windows, Gpt2, Tokenizer, Trainable, Weights};
use wgsl_compute::models::Shipped;
use wgsl_compute::train::{Adam, CompiledStep, Optimizer};
use wgsl_compute::{Context, Error, Result, Rng, Tensor};

struct Args {
    steps: usize,
    batch: usize,
    context: usize,
    lr: f32,
    corpus: usize,
    text: Option<PathBuf>,
    model: Option<PathBuf>,
    prompt: String,
    tokens: usize,
    save: Option<PathBuf>,
    cpu: bool,
    plan: bool,
}

const USAGE: &str = "usage: gpt2_finetune [--steps N] [--batch B] [--context T] [--lr LR] [--corpus TOKENS]
            [--text FILE] [--model DIR] [--prompt TEXT] [--tokens N] [--save DIR] [--cpu] [--plan]

  --steps N        Adam steps (default 200)
  --batch B        rows per step (default 4)
  --context T      tokens per row (default 64; at most the model's n_positions)
  --lr LR          Adam's learning rate (default 1e-3)
  --corpus TOKENS  train on the first TOKENS tokens of the text (default 4096)
  --text FILE      the text (default: the shipped assets/text/shakespeare.txt)
  --model DIR      a Hugging Face GPT-2 directory (default: the shipped Shakespeare model)
  --prompt TEXT    what the tuned model continues (default \"ROMEO:\")
  --tokens N       tokens to generate after training (default 40)
  --save DIR       write the tuned model there (config.json, model.safetensors)
  --cpu            run on the CPU reference context
  --plan           capture the step once as a plan (train::CompiledStep) and replay it (GPU)";

fn args() -> Result<Args> {
    let mut a = Args {
        steps: 200,
        batch: 4,
        context: 64,
        lr: 1e-3,
        corpus: 4096,
        text: None,
        model: None,
        prompt: "ROMEO:".into(),
        tokens: 40,
        save: None,
        cpu: false,
        plan: false,
    };
    let mut it = std::env::args().skip(1);
    let bad = |flag: &str, v: Option<String>| {
        Error::value(
            "gpt2_finetune",
            "arguments",
            format!("a value after {flag}\n{USAGE}"),
            v.unwrap_or_else(|| "nothing".into()),
        )
    };
    while let Some(flag) = it.next() {
        let mut num = |flag: &str| -> Result<f64> {
            let v = it.next();
            v.as_deref().and_then(|s| s.parse().ok()).ok_or_else(|| bad(flag, v))
        };
        match flag.as_str() {
            "--steps" => a.steps = num("--steps")? as usize,
            "--batch" => a.batch = num("--batch")? as usize,
            "--context" => a.context = num("--context")? as usize,
            "--lr" => a.lr = num("--lr")? as f32,
            "--corpus" => a.corpus = num("--corpus")? as usize,
            "--tokens" => a.tokens = num("--tokens")? as usize,
            "--text" => a.text = it.next().map(PathBuf::from),
            "--model" => a.model = it.next().map(PathBuf::from),
            "--save" => a.save = it.next().map(PathBuf::from),
            "--prompt" => a.prompt = it.next().ok_or_else(|| bad("--prompt", None))?,
            "--cpu" => a.cpu = true,
            "--plan" => a.plan = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(Error::value("gpt2_finetune", "arguments", USAGE, other)),
        }
    }
    if a.batch == 0 || a.context == 0 {
        return Err(Error::value("gpt2_finetune", "--batch / --context", "at least 1", 0));
    }
    Ok(a)
}

fn main() -> Result<()> {
    let a = args()?;
    let ctx = if a.cpu { Context::cpu() } else { Context::new()? };
    let dir = match &a.model {
        Some(d) => d.clone(),
        None => Shipped::Shakespeare.dir()?,
    };
    let weights = Weights::load(&dir)?;
    let cfg = weights.config.clone();
    let text_path = match &a.text {
        Some(p) => p.clone(),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/text/shakespeare.txt"),
    };
    let text = std::fs::read_to_string(&text_path).map_err(|e| Error::Io {
        what: text_path.display().to_string(),
        message: format!("reading the training text: {e}"),
    })?;
    let tok = Tokenizer::gpt2()?;
    let mut tokens = tok.encode(&text);
    tokens.truncate(a.corpus.max(a.context + 1));
    if tokens.len() < a.context + 1 {
        return Err(Error::value(
            "gpt2_finetune",
            "--text",
            format!("at least {} tokens (--context + 1)", a.context + 1),
            tokens.len(),
        ));
    }
    let model = Trainable::new(&ctx, &weights)?;
    drop(weights);
    println!(
        "fine-tuning {} ({:.1}M parameters, {} layers, C {}) on {} ({} tokens) on {} ({:?})",
        dir.display(),
        model.parameter_count() as f64 / 1e6,
        cfg.n_layer,
        cfg.n_embd,
        text_path.display(),
        tokens.len(),
        ctx.info().name,
        ctx.info().backend
    );
    println!(
        "{} Adam steps (lr {}) of {} rows x {} tokens",
        a.steps, a.lr, a.batch, a.context
    );
    let mut adam = Adam::new(&model.params().tensors(), a.lr)?;
    // --plan: the ids live in device tensors the step reads; each step writes its batch there.
    let n = a.batch * a.context;
    let (ids, targets) = (Tensor::zeros(&ctx, &[n])?, Tensor::zeros(&ctx, &[n])?); // (B T,)
    let planned = match a.plan {
        true => Some(CompiledStep::capture(
            &ctx,
            &model.params().tensors(),
            &[&ids, &targets],
            &mut adam,
            |v| model.loss_var(v, &ids, &targets, a.batch),
        )?),
        false => None,
    };
    let mut rng = Rng::new(1);
    let last_start = tokens.len() - a.context - 1;
    let start = Instant::now();
    let mut window_losses = vec![];
    for step in 1..=a.steps {
        let starts: Vec<usize> = (0..a.batch).map(|_| rng.below(last_start + 1)).collect();
        let (x, y) = windows(&tokens, &starts, a.context)?;
        let loss = match &planned {
            Some(step) => {
                ids.write_ids(&x, cfg.vocab_size)?;
                targets.write_ids(&y, cfg.vocab_size)?;
                step.step()?.clone() // forward, backward, Adam: one replay; the loss before the update
            }
            None => {
                let tape = Tape::new(&ctx);
                let vars = model.vars(&tape)?;
                let loss = model.loss_var(&vars, &x, &y, a.batch)?; // ()
                adam.step_vars(&vars, &loss.backward()?)?;
                loss.tensor().clone()
            }
        };
        window_losses.push(loss.to_vec()?[0]);
        if step % 10 == 0 || step == 1 || step == a.steps {
            let spent = start.elapsed().as_secs_f64();
            let mean = window_losses.iter().sum::<f32>() / window_losses.len() as f32;
            println!(
                "step {step:>4}/{}: loss {mean:.3} (mean of the last {}), {:.0} ms/step, {:.0} s left",
                a.steps,
                window_losses.len(),
                spent / step as f64 * 1e3,
                spent / step as f64 * (a.steps - step) as f64
            );
            window_losses.clear();
        }
    }
    let tuned = model.weights()?;
    if let Some(out) = &a.save {
        std::fs::create_dir_all(out).map_err(|e| Error::Io {
            what: out.display().to_string(),
            message: format!("creating the folder: {e}"),
        })?;
        std::fs::write(
            out.join("config.json"),
            cfg.to_json(Some("fine-tuned by the gpt2_finetune example")),
        )
        .map_err(|e| Error::Io {
            what: out.display().to_string(),
            message: format!("writing config.json: {e}"),
        })?;
        model.params().save(out.join("model.safetensors"))?;
        println!("saved the tuned model to {}", out.display());
    }
    let gpt2 = Gpt2::new(&ctx, &tuned)?;
    let prompt = tok.encode(&a.prompt);
    let ids = gpt2.generate(&prompt, a.tokens, Sampling::recommended(Sampling::DEFAULT_SEED), |_| {})?;
    println!("--- the tuned model continues {:?}:\n{}", a.prompt, tok.decode(&ids)?);
    Ok(())
}
