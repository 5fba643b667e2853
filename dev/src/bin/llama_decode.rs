//! Times the Llama-style decoder's compiled decode against GPT-2's, per weight byte (issue
//! #46's target: within 1.2x of GPT-2's time per weight byte). Both run through
//! `generate::Generator`, greedy, 64 tokens after a 16-token prompt: decode ms per token =
//! (time of 1 + n tokens - time of 1 token) / n, medians of 5 after a warm-up. GPT-2 is the
//! 124M shape with random weights; the Llama model is read from `--llama DIR` (Hugging Face
//! files; `benches/llama_random.py` writes a 124M-like one with random weights).
//!
//!     cargo run --release -p wgsl-compute-dev --bin llama_decode -- --llama DIR [--no-gpt2] [--json out.json]

use std::time::Instant;

#[path = "common/clocks.rs"]
mod clocks;

use wgsl_compute::check::Rng;
use wgsl_compute::generate::{Decoder, Generator, Sampling};
use wgsl_compute::models::{gpt2, llama::Llama};
use wgsl_compute::{Context, DType, Result};

/// Decode seconds per token, the decode plan's dispatches, and the device time of each of its
/// kernels in one replay (the engine's profiler: timestamps between dispatches).
fn decode_per_token<M: Decoder>(ctx: &Context, model: &M, vocab: usize) -> Result<(f64, usize, String)> {
    let mut g = Generator::new(model)?;
    let mut rng = Rng::new(9);
    // 16 prompt tokens and 64 new ones, fewer where the model holds fewer positions.
    let p = model.positions();
    let prompt: Vec<u32> = (0..16.min(p / 4)).map(|_| rng.below(vocab) as u32).collect();
    let n = 64.min(p - prompt.len() - 1);
    // Both models are timed with the clocks up: the upload of their weights leaves the GPU
    // idle long enough to lower them (common/clocks.rs).
    clocks::sustain(ctx, 0.5)?;
    let mut time = |tokens: usize| -> Result<f64> {
        g.generate(&prompt, tokens, Sampling::Greedy, |_| {})?; // warm-up
        let mut t = vec![];
        for _ in 0..5 {
            let start = Instant::now();
            g.generate(&prompt, tokens, Sampling::Greedy, |_| {})?;
            ctx.synchronize()?;
            t.push(start.elapsed().as_secs_f64());
        }
        t.sort_by(f64::total_cmp);
        Ok(t[2])
    };
    let (one, long) = (time(1)?, time(1 + n)?);
    clocks::sustain(ctx, 0.5)?;
    ctx.set_profiling(true);
    ctx.reset_profile()?;
    g.decode_plan().replay(ctx)?;
    let profile = ctx.profile()?;
    ctx.set_profiling(false);
    let total = profile.total_seconds();
    let mut table = format!(
        "kernel | dispatches per step | device ms per step | share ({:?})\n",
        profile.clock
    );
    for k in &profile.kernels {
        let share = 100.0 * k.seconds / total;
        table += &format!("{} | {} | {:.4} | {share:.0}%\n", k.name, k.calls, k.seconds * 1e3);
    }
    Ok(((long - one) / n as f64, g.decode_plan().dispatches(), table))
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let Some(dir) = arg("--llama") else {
        println!("usage: llama_decode --llama DIR [--json out.json]");
        return Ok(());
    };
    let ctx = Context::new()?;
    println!("adapter: {}", ctx.info().name);
    let llama = Llama::load(&ctx, std::path::Path::new(&dir))?;
    let (l_s, l_d, l_table) = decode_per_token(&ctx, &llama, llama.config().vocab_size)?;
    let l_bytes = llama.weight_bytes() as f64;
    drop(llama);
    println!("llama decode plan, one replay:\n{l_table}");
    if args.iter().any(|a| a == "--no-gpt2") {
        println!("llama: {:.3} ms/token, {l_d} dispatches a step", l_s * 1e3);
        return Ok(());
    }
    let config = gpt2::Config::default();
    let bytes = gpt2::random_checkpoint(&config, 1, DType::F32)?;
    let weights = gpt2::Weights::from_safetensors(config.clone(), &bytes, "random")?;
    let model = gpt2::Gpt2::new(&ctx, &weights)?;
    let (g_s, g_d, g_table) = decode_per_token(&ctx, &model, config.vocab_size)?;
    println!("gpt2 decode plan, one replay:\n{g_table}");
    let g_bytes = model.weight_bytes() as f64;
    let per = |s: f64, b: f64| s * 1e3 / (b / 1e9); // ms per GB of weights
    let ratio = per(l_s, l_bytes) / per(g_s, g_bytes);
    println!(
        "llama: {:.3} ms/token, {:.0} MB of weights, {l_d} dispatches a step, {:.3} ms per GB",
        l_s * 1e3,
        l_bytes / 1e6,
        per(l_s, l_bytes)
    );
    println!(
        "gpt2 124M: {:.3} ms/token, {:.0} MB of weights, {g_d} dispatches a step, {:.3} ms per GB",
        g_s * 1e3,
        g_bytes / 1e6,
        per(g_s, g_bytes)
    );
    println!("llama / gpt2 per weight byte: {ratio:.2}x (target <= 1.2x)");
    if let Some(path) = arg("--json") {
        let json = format!(
            "{{\n  \"llama_decode_ms\": {},\n  \"llama_decode_dispatches\": {l_d},\n  \"llama_weight_mb\": {},\n  \"llama_gpt2_decode_ms\": {},\n  \"llama_gpt2_decode_dispatches\": {g_d},\n  \"llama_vs_gpt2_per_weight_byte\": {ratio}\n}}\n",
            l_s * 1e3,
            l_bytes / 1e6,
            g_s * 1e3
        );
        std::fs::write(path, json).map_err(|e| wgsl_compute::Error::Io {
            what: "json".into(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}
