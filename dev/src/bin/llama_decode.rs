//! Times the Llama-style decoder's compiled decode against GPT-2's, per weight byte (issue
//! #46's target: within 1.2x of GPT-2's time per weight byte). Both run through
//! `generate::Generator`, greedy, 64 tokens after a 16-token prompt: decode ms per token =
//! (time of 1 + n tokens - time of 1 token) / n, medians of 5 after a warm-up, in three rounds
//! that alternate the models (the median round reported). GPT-2 is the
//! 124M shape with random weights; the Llama model is read from `--llama DIR` (Hugging Face
//! files; `benches/llama_random.py` writes a 124M-like one with random weights).
//!
//!     cargo run --release -p wgsl-compute-dev --bin llama_decode -- --llama DIR [--no-gpt2] [--json out.json]

use std::time::Instant;

#[path = "common/clocks.rs"]
mod clocks;
#[path = "common/plan_profile.rs"]
mod plan_profile;

use wgsl_compute::check::Rng;
use wgsl_compute::generate::{Decoder, Generator, Sampling};
use wgsl_compute::models::{gpt2, llama::Llama};
use wgsl_compute::{Context, DType, Result};

/// One model's decode, timed in rounds: its generator and prompt.
struct Timed<M: Decoder> {
    g: Generator<M>,
    prompt: Vec<u32>,
    /// New tokens a timed generation adds after its first.
    n: usize,
    rounds: Vec<f64>,
}

impl<M: Decoder> Timed<M> {
    fn new(model: &M, vocab: usize) -> Result<Self> {
        let mut rng = Rng::new(9);
        // 16 prompt tokens and 64 new ones, fewer where the model holds fewer positions.
        let p = model.positions();
        let prompt: Vec<u32> = (0..16.min(p / 4)).map(|_| rng.below(vocab) as u32).collect();
        let n = 64.min(p - prompt.len() - 1);
        Ok(Timed {
            g: Generator::new(model)?,
            prompt,
            n,
            rounds: vec![],
        })
    }

    /// One round: decode seconds per token = (time of 1 + n tokens - time of 1 token) / n,
    /// medians of 5 after a warm-up, with the clocks up first (common/clocks.rs).
    fn round(&mut self, ctx: &Context) -> Result<()> {
        clocks::sustain(ctx, 0.5)?;
        let mut time = |tokens: usize| -> Result<f64> {
            self.g.generate(&self.prompt, tokens, Sampling::Greedy, |_| {})?; // warm-up
            let mut t = vec![];
            for _ in 0..5 {
                let start = Instant::now();
                self.g.generate(&self.prompt, tokens, Sampling::Greedy, |_| {})?;
                ctx.synchronize()?;
                t.push(start.elapsed().as_secs_f64());
            }
            t.sort_by(f64::total_cmp);
            Ok(t[2])
        };
        let (one, long) = (time(1)?, time(1 + self.n)?);
        self.rounds.push((long - one) / self.n as f64);
        Ok(())
    }

    /// The median round's seconds per token.
    fn seconds(&self) -> f64 {
        let mut r = self.rounds.clone();
        r.sort_by(f64::total_cmp);
        r[r.len() / 2]
    }

    /// The decode plan's dispatches, and the device time of each of its kernels in one
    /// replay (common/plan_profile.rs).
    fn profile(&self, ctx: &Context) -> Result<(usize, String)> {
        let plan = self.g.decode_plan();
        Ok((plan.dispatches(), plan_profile::per_kernel(ctx, plan)?))
    }
}

/// Rounds of each model, alternating, so that a drift of the GPU's state over the run falls on both.
const ROUNDS: usize = 3;

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
    let l_bytes = llama.weight_bytes() as f64;
    let mut l = Timed::new(&llama, llama.config().vocab_size)?;
    if args.iter().any(|a| a == "--no-gpt2") {
        l.round(&ctx)?;
        let (l_d, l_table) = l.profile(&ctx)?;
        println!("llama decode plan, one replay:\n{l_table}");
        println!("llama: {:.3} ms/token, {l_d} dispatches a step", l.seconds() * 1e3);
        return Ok(());
    }
    let config = gpt2::Config::default();
    let bytes = gpt2::random_checkpoint(&config, 1, DType::F32)?;
    let weights = gpt2::Weights::from_safetensors(config.clone(), &bytes, "random")?;
    let model = gpt2::Gpt2::new(&ctx, &weights)?;
    let g_bytes = model.weight_bytes() as f64;
    let mut g = Timed::new(&model, config.vocab_size)?;
    for _ in 0..ROUNDS {
        l.round(&ctx)?;
        g.round(&ctx)?;
    }
    let ms = |t: &[f64]| {
        t.iter()
            .map(|s| format!("{:.3}", s * 1e3))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("rounds (ms/token), llama: {}; gpt2: {}", ms(&l.rounds), ms(&g.rounds));
    let (l_d, l_table) = l.profile(&ctx)?;
    println!("llama decode plan, one replay:\n{l_table}");
    let (g_d, g_table) = g.profile(&ctx)?;
    println!("gpt2 decode plan, one replay:\n{g_table}");
    let (l_s, g_s) = (l.seconds(), g.seconds());
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
