//! GPT-2 text generation on the GPU (or the CPU reference context), streaming the completion.
//!
//! ```text
//! cargo run --release --example gpt2 -- "PROMPT" [--tokens N] [--model DIR] [--dtype f16|bf16|f32] [--cpu] [--verify]
//!     [--greedy | --temperature T --top-k K --seed S] [--eager] [--profile] [--trace FILE.json]
//! ```
//! Without `--model` it runs `assets/models/shakespeare/` when present, else the untrained
//! `assets/models/tiny-random/`. It samples by default (temperature 0.8, top-k 40 and a fixed
//! seed: `Sampling::recommended(Sampling::DEFAULT_SEED)`), so a run repeats exactly; `--greedy`
//! takes the arg-max instead. The weights stay in the dtype the checkpoint stores them in (the
//! shipped Shakespeare model: F16, half the bytes of f32) unless `--dtype` converts them on
//! the device after loading; activations are f32 either way. On a GPU it generates through compiled plans (a prefill plan
//! and a decode plan replayed with the ids kept on the device, `wgsl_compute::models::gpt2::Generator`);
//! `--eager` runs op by op instead. `--verify` (op by op) recomputes every step with the
//! independent f64 reference
//! (`wgsl_compute::models::gpt2::reference`) and compares embeddings, every block's residual, the logits and
//! the chosen ids.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use wgsl_compute::generate::{choose, Generate, Sampler, Sampling};
use wgsl_compute::models::gpt2::reference;
use wgsl_compute::models::gpt2::{Generator, Gpt2, StepOptions, TextStream, Tokenizer, Weights};
use wgsl_compute::{Context, DType, Tensor};

struct Args {
    prompt: String,
    tokens: usize,
    model: Option<PathBuf>,
    dtype: Option<DType>,
    cpu: bool,
    verify: bool,
    greedy: bool,
    eager: bool,
    profile: bool,
    trace: Option<PathBuf>,
    temperature: Option<f32>,
    top_k: Option<usize>,
    seed: u64,
}

fn usage() -> String {
    format!(
        "usage: gpt2 [\"PROMPT\"] [--tokens N] [--model DIR] [--dtype f16|bf16|f32] [--cpu] [--verify]
            [--greedy | --temperature T --top-k K --seed S] [--eager] [--profile] [--trace FILE.json]

  PROMPT           the text to continue
  --tokens N       tokens to generate (default 10)
  --model DIR      a Hugging Face GPT-2 directory (config.json + model.safetensors);
                   default: assets/models/shakespeare
  --dtype D        the weights' dtype on the device: f16, bf16 or f32 (default: as stored;
                   F16 for the shipped model); converted on the device after loading
  --cpu            run on the CPU reference context instead of a GPU adapter
  --verify         compare every step with the f64 CPU reference (op by op)
  --eager          generate op by op instead of through the compiled plans
  --greedy         pick the most likely token (for verification; small models loop)
  --temperature T  sampling temperature (default {})
  --top-k K        sample among the K most likely tokens, 0 for all (default {})
  --seed S         the sampler's seed (default {}): the same seed gives the same text
  --profile        print per-kernel device time (kernel, calls, total, mean, share)
  --trace FILE     write every dispatch as a Chrome trace (chrome://tracing, Perfetto)
  -h, --help       this text

The adapter comes from ENGINE_BACKEND (vulkan, gl, metal, dx12, cpu) and WGPU_ADAPTER_NAME;
where neither is set and every adapter runs on the CPU (lavapipe, llvmpipe), the first run
times the model on each of them and on the CPU reference and keeps the fastest in the tune
cache (ENGINE_TUNE=off keeps the default adapter). ENGINE_PROFILE=1 prints the profile of any program when its context is dropped.",
        Sampling::DEFAULT_TEMPERATURE,
        Sampling::DEFAULT_TOP_K,
        Sampling::DEFAULT_SEED
    )
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        prompt: "Alan Turing theorized that computers would one day become".into(),
        tokens: 10,
        model: None,
        cpu: false,
        dtype: None,
        verify: false,
        greedy: false,
        eager: false,
        profile: false,
        trace: None,
        temperature: None,
        top_k: None,
        seed: Sampling::DEFAULT_SEED,
    };
    let mut it = std::env::args().skip(1);
    let mut prompt = None;
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--tokens" => a.tokens = value("--tokens")?.parse().map_err(|e| format!("--tokens: {e}"))?,
            "--model" => a.model = Some(PathBuf::from(value("--model")?)),
            "--dtype" => {
                let v = value("--dtype")?;
                a.dtype = Some(DType::parse(&v).ok_or_else(|| format!("--dtype: `{v}` is not f16, bf16 or f32"))?);
            }
            "--cpu" => a.cpu = true,
            "--verify" => a.verify = true,
            "--greedy" => a.greedy = true,
            "--eager" => a.eager = true,
            "--profile" => a.profile = true,
            "--trace" => a.trace = Some(PathBuf::from(value("--trace")?)),
            "--temperature" => {
                a.temperature = Some(
                    value("--temperature")?
                        .parse()
                        .map_err(|e| format!("--temperature: {e}"))?,
                )
            }
            "--top-k" => a.top_k = Some(value("--top-k")?.parse().map_err(|e| format!("--top-k: {e}"))?),
            "--seed" => a.seed = value("--seed")?.parse().map_err(|e| format!("--seed: {e}"))?,
            "-h" | "--help" => return Err(String::new()),
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            s => prompt = Some(s.to_string()),
        }
    }
    if let Some(p) = prompt {
        a.prompt = p;
    }
    if a.greedy && (a.temperature.is_some() || a.top_k.is_some()) {
        return Err("--greedy takes no --temperature or --top-k".into());
    }
    Ok(a)
}

/// The model directory: `--model`, else the trained Shakespeare model, else the tiny one
/// (`models::Shipped` finds them from any working directory).
fn model_dir(arg: Option<PathBuf>) -> (PathBuf, String) {
    use wgsl_compute::models::Shipped;
    if let Some(dir) = arg {
        return (dir, String::new());
    }
    for m in Shipped::ALL {
        if let Ok(dir) = m.dir() {
            return (dir, format!(" (the default: {})", m.describe()));
        }
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/tiny-random");
    (dir, " (the default)".into())
}

/// Largest differences seen by `--verify`.
#[derive(Default)]
struct Verify {
    embeddings: f64,
    residuals: f64,
    logits: f64,
    ids_equal: usize,
    steps: usize,
}

fn max_abs_diff(got: &Tensor, want: ndarray::ArrayView2<f32>) -> Result<f64, wgsl_compute::Error> {
    let g = got.to_vec()?;
    let w: Vec<f32> = want.iter().copied().collect();
    let c = wgsl_compute::check::compare(&g, &w, wgsl_compute::check::Gate::new(0.0, 0.0));
    Ok(c.max_abs)
}

/// Seconds to load the model on `ctx` and generate 8 tokens greedily from a 3-token prompt:
/// what a short run of this program costs there.
fn time_decode(ctx: &Context, weights: &Weights, dtype: wgsl_compute::DType) -> Result<f64, wgsl_compute::Error> {
    let start = Instant::now();
    let model = Gpt2::with_dtype(ctx, weights, dtype)?;
    model.generate(&[33676, 4720, 25], 8, Sampling::Greedy, |_| {})?;
    Ok(start.elapsed().as_secs_f64())
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            println!("{}", usage());
            return;
        }
        Err(e) => {
            eprintln!("error: {e}\n{}", usage());
            std::process::exit(2);
        }
    };
    if let Err(e) = run(args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<(), wgsl_compute::Error> {
    let (dir, note) = model_dir(args.model.clone());
    // Shown relative to the working directory where it lies below it, as the README shows it.
    let cwd = std::env::current_dir().unwrap_or_default();
    println!("model: {}{note}", dir.strip_prefix(&cwd).unwrap_or(&dir).display());
    let t0 = Instant::now();
    let weights = Weights::load(&dir)?;
    let read_s = t0.elapsed().as_secs_f64();
    let dtype = args.dtype.unwrap_or(weights.dtype);
    let ctx = if args.cpu {
        Context::cpu()
    } else {
        // Where every adapter runs on the CPU, the fastest of them and the CPU reference for
        // this model, timed once and cached (Context::fastest_for).
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let workload = format!("gpt2 {name} {dtype} decode");
        let (ctx, picked) = Context::new()?.fastest_for(&workload, |c| time_decode(c, &weights, dtype))?;
        if let Some(line) = picked.describe() {
            println!("{line}");
        }
        ctx
    };
    if ctx.is_gpu() {
        println!("device: {} ({:?})", ctx.info().name, ctx.info().backend);
    } else {
        println!("device: the CPU reference (every op in ndarray, sums in f64)");
    }
    if let Some(note) = ctx.info().software_note() {
        println!("{note}");
    }
    // The checkpoint's own description (the tiny one says it is untrained).
    let comment = std::fs::read_to_string(dir.join("config.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("_comment").and_then(|c| c.as_str()).map(str::to_string));
    if let Some(c) = comment {
        println!("model says: {c}");
    }
    let stored = weights.dtype;
    let t1 = Instant::now();
    let model = Gpt2::with_dtype(&ctx, &weights, dtype)?;
    // The reference of --verify runs on the values the device holds.
    let weights = weights.rounded(dtype);
    ctx.synchronize()?;
    let c = &weights.config;
    println!(
        "loaded n_layer {} n_head {} n_embd {} n_positions {} vocab {} in {:.2} s; weights {dtype}{}",
        c.n_layer,
        c.n_head,
        c.n_embd,
        c.n_positions,
        c.vocab_size,
        read_s + t1.elapsed().as_secs_f64(),
        if args.dtype.is_none_or(|d| d == stored) {
            " (as stored)".to_string()
        } else {
            format!(" (stored {stored}, converted on the device)")
        }
    );
    let sampling = if args.greedy {
        Sampling::Greedy
    } else {
        Sampling::TopK {
            temperature: args.temperature.unwrap_or(Sampling::DEFAULT_TEMPERATURE),
            k: args.top_k.unwrap_or(Sampling::DEFAULT_TOP_K),
            seed: args.seed,
        }
    };
    println!("sampling: {sampling:?}");
    let tok = Tokenizer::gpt2()?;
    let prompt = tok.encode(&args.prompt);
    if prompt.is_empty() {
        return Err(wgsl_compute::Error::value("gpt2", "prompt", "at least one token", 0));
    }
    println!("prompt ids: {prompt:?}");
    let compiled = ctx.is_gpu() && !args.eager && !args.verify;
    print!("{}", args.prompt);
    std::io::stdout().flush().ok();

    if args.profile || args.trace.is_some() {
        ctx.set_profiling(true);
    }
    if compiled {
        match Generator::new(&model) {
            Ok(mut g) => {
                run_compiled(
                    &mut g,
                    tok,
                    &prompt,
                    args.tokens.min(c.n_positions - prompt.len()),
                    sampling,
                )?;
                return report_profile(&ctx, &args);
            }
            Err(e) => println!("\n[compiled generation unavailable ({e}); generating op by op]"),
        }
    }
    let mut sampler = Sampler::new(sampling)?;
    let mut ref_sampler = sampler.clone();
    let mut cache = model.new_cache()?;
    let mut context = prompt.clone();
    let mut input = prompt.clone();
    let mut generated = Vec::new();
    let mut text = TextStream::new(tok);
    let mut verify = Verify::default();
    let start = Instant::now();
    let mut first_token = None;
    for _ in 0..args.tokens {
        if input.len() > cache.remaining() {
            println!("\n[stopped: the context of {} positions is full]", c.n_positions);
            break;
        }
        let past = cache.len();
        let opts = StepOptions {
            all_logits: args.verify,
            capture: args.verify,
        };
        let step = model.step(&input, &mut cache, opts)?;
        let t = input.len();
        let last = step
            .logits
            .narrow(0, step.logits.shape()[0] - 1, step.logits.shape()[0])?;
        let id = pollster::block_on(choose(&last, &mut sampler))?;
        if first_token.is_none() {
            first_token = Some(start.elapsed());
        }
        if args.verify {
            let trace = reference::forward(&weights, &context)?;
            let rows = ndarray::s![past..past + t, ..];
            if let Some(e) = &step.embeddings {
                verify.embeddings = verify.embeddings.max(max_abs_diff(e, trace.embeddings.slice(rows))?);
            }
            for (got, want) in step.residuals.iter().zip(&trace.residuals) {
                verify.residuals = verify.residuals.max(max_abs_diff(got, want.slice(rows))?);
            }
            verify.logits = verify.logits.max(max_abs_diff(&step.logits, trace.logits.slice(rows))?);
            let want_row: Vec<f32> = trace.logits.row(past + t - 1).to_vec();
            let want_id = ref_sampler.pick(&want_row)?;
            verify.steps += 1;
            verify.ids_equal += usize::from(want_id == id);
        }
        generated.push(id);
        context.push(id);
        input = vec![id];
        print_flushed(&text.push(id)?);
    }
    println!("{}", text.finish());
    let total = start.elapsed().as_secs_f64();
    let ttft = first_token.map(|d| d.as_secs_f64()).unwrap_or(0.0);
    let n = generated.len();
    println!("generated ids: {generated:?}");
    println!(
        "time to first token {:.3} s (prompt of {} tokens); {} tokens in {:.3} s = {:.2} tokens/s{}",
        ttft,
        prompt.len(),
        n,
        total,
        n as f64 / total.max(1e-9),
        if n > 1 {
            format!(
                "; after the first: {:.2} tokens/s",
                (n - 1) as f64 / (total - ttft).max(1e-9)
            )
        } else {
            String::new()
        }
    );
    report_profile(&ctx, &args)?;
    if args.verify {
        let worst = verify.embeddings.max(verify.residuals).max(verify.logits);
        println!(
            "verify against the f64 CPU reference: max |diff| embeddings {:.3e}, residuals {:.3e}, logits {:.3e}; \
             chosen ids equal at {}/{} steps",
            verify.embeddings, verify.residuals, verify.logits, verify.ids_equal, verify.steps
        );
        let ok = worst <= 1e-4 && verify.ids_equal == verify.steps;
        println!(
            "largest absolute difference {worst:.3e}: {}",
            if ok {
                "PASS (within 1e-4, all ids equal)"
            } else {
                "FAIL"
            }
        );
        if !ok {
            std::process::exit(1);
        }
    }
    Ok(())
}

/// With `--profile` or `--trace`: the per-kernel table of the generation, and the trace file.
fn report_profile(ctx: &Context, args: &Args) -> Result<(), wgsl_compute::Error> {
    if args.profile || args.trace.is_some() {
        let profile = ctx.profile()?;
        println!("\nprofile of the generation:\n{profile}");
        if let Some(path) = &args.trace {
            profile.write_chrome_trace(path)?;
            println!("wrote the trace to {}", path.display());
        }
    }
    Ok(())
}

/// Generation through the compiled plans: ids stream as the device's chunks are read back.
fn run_compiled(
    g: &mut Generator,
    tok: &Tokenizer,
    prompt: &[u32],
    tokens: usize,
    sampling: Sampling,
) -> Result<(), wgsl_compute::Error> {
    let start = Instant::now();
    let mut first_token = None;
    let mut text = TextStream::new(tok);
    let mut decode_error = None;
    let generated = g.generate(prompt, tokens, sampling, |id| {
        first_token.get_or_insert_with(|| start.elapsed());
        match text.push(id) {
            Ok(piece) => print_flushed(&piece),
            Err(e) => {
                decode_error.get_or_insert(e);
            }
        }
    })?;
    if let Some(e) = decode_error {
        return Err(e);
    }
    println!("{}", text.finish());
    let total = start.elapsed().as_secs_f64();
    let ttft = first_token.map(|d| d.as_secs_f64()).unwrap_or(0.0);
    let n = generated.len();
    println!("generated ids: {generated:?}");
    println!(
        "compiled: {} dispatches per token; time to first token {:.3} s (prompt of {} tokens); {} tokens in {:.3} s = {:.2} tokens/s",
        g.decode_plan().dispatches(),
        ttft,
        prompt.len(),
        n,
        total,
        n as f64 / total.max(1e-9)
    );
    Ok(())
}

/// Prints `text` at once (stdout is line-buffered).
fn print_flushed(text: &str) {
    print!("{text}");
    std::io::stdout().flush().ok();
}
