//! Runs a GPT-2 checkpoint greedily and writes what a peer needs to check it: the token ids,
//! every step's logits (f32, little-endian, steps x vocab) and the timings.
//!
//!     cargo run --release -p wgsl-compute-dev --bin gpt2_logits -- --model DIR --prompt TEXT --tokens N --out PREFIX [--dtype D]
//!
//! The weights run in the dtype the checkpoint stores them in unless `--dtype f16|bf16|f32`
//! converts them on the device (activations and accumulation stay f32 either way).
//! Writes PREFIX.json ({prompt_ids, generated, prefill_ms, decode_ms_median, adapter, dtype}) and
//! PREFIX.logits.f32. `benches/gpt2_h200.py` compares both with transformers on the same file.

use std::path::PathBuf;
use std::time::Instant;

use wgsl_compute::generate::argmax;
use wgsl_compute::models::gpt2::{Gpt2, StepOptions, Tokenizer, Weights};
use wgsl_compute::{Context, DType, Error, Result};

const USAGE: &str = "usage: gpt2_logits --model DIR --prompt TEXT [--tokens N] [--out PREFIX] [--dtype f16|bf16|f32]
Runs the checkpoint in DIR greedily for N tokens (default 20), its weights in D (default: as
stored), and writes PREFIX.json (ids, timings, dtype) and PREFIX.logits.f32 (every step's
logits, f32 little-endian); default PREFIX gpt2_logits.";

fn main() -> Result<()> {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let (mut model_dir, mut prompt, mut tokens, mut out) = (None, String::new(), 20usize, String::from("gpt2_logits"));
    let mut dtype = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let v = it.next().unwrap_or_default();
        match a.as_str() {
            "--model" => model_dir = Some(PathBuf::from(v)),
            "--prompt" => prompt = v,
            "--tokens" => {
                tokens = v
                    .parse()
                    .map_err(|_| Error::value("gpt2_logits", "--tokens", "a count", &v))?
            }
            "--out" => out = v,
            "--dtype" => {
                dtype = Some(
                    DType::parse(&v).ok_or_else(|| Error::value("gpt2_logits", "--dtype", "f16, bf16 or f32", &v))?,
                )
            }
            _ => {
                return Err(Error::value(
                    "gpt2_logits",
                    "argument",
                    "--model/--prompt/--tokens/--out/--dtype",
                    a,
                ))
            }
        }
    }
    let dir = model_dir.ok_or_else(|| Error::value("gpt2_logits", "--model", "a model directory", "nothing"))?;
    let ctx = Context::new()?;
    let weights = Weights::load(&dir)?;
    let dtype = dtype.unwrap_or(weights.dtype);
    let model = Gpt2::with_dtype(&ctx, &weights, dtype)?;
    let ids = Tokenizer::gpt2()?.encode(&prompt);
    let mut cache = model.new_cache()?;
    let opts = StepOptions::default();

    let start = Instant::now();
    let logits = model.step(&ids, &mut cache, opts)?.logits.to_vec()?;
    let prefill_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut all = logits.clone();
    let mut next = argmax(&logits);
    let mut generated = vec![next];
    let mut steps = vec![];
    for _ in 1..tokens {
        let start = Instant::now();
        let logits = model.step(&[next], &mut cache, opts)?.logits.to_vec()?;
        steps.push(start.elapsed().as_secs_f64() * 1e3);
        next = argmax(&logits);
        generated.push(next);
        all.extend_from_slice(&logits);
    }
    steps.sort_by(|a, b| a.total_cmp(b));
    let decode = steps.get(steps.len() / 2).copied().unwrap_or(f64::NAN);
    let json = format!(
        "{{\"adapter\": {:?}, \"dtype\": \"{dtype}\", \"prompt_ids\": {:?}, \"generated\": {:?}, \"prefill_ms\": {prefill_ms:.4}, \"decode_ms_median\": {decode:.4}}}\n",
        ctx.info().name,
        ids,
        generated
    );
    let write = |path: String, bytes: &[u8]| {
        std::fs::write(&path, bytes).map_err(|e| Error::Io {
            what: path,
            message: e.to_string(),
        })
    };
    write(format!("{out}.json"), json.as_bytes())?;
    write(
        format!("{out}.logits.f32"),
        &all.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
    )?;
    print!("{json}");
    Ok(())
}
