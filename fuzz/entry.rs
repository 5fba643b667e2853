//! The raw-byte entry point of each parser, one function per fuzz target: the libFuzzer
//! targets in `fuzz/fuzz_targets/` call these, and `tests/fuzz.rs` replays the committed
//! corpus (`fuzz/corpus/<target>/`) through the same functions on stable Rust. Each must
//! return for any bytes: a clean `Err` is fine, a panic is a bug.

use std::sync::OnceLock;

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::io::safetensors;
use wgsl_compute::models::gpt2::{self, Config, Tokenizer, Weights};
use wgsl_compute::Context;

/// A target's entry point: any bytes, no panic.
pub type Entry = fn(&[u8]);

/// The targets, by the name of their corpus folder and their entry point.
pub const TARGETS: [(&str, Entry); 5] = [
    ("safetensors", safetensors),
    ("config", config),
    ("sexpr", sexpr),
    ("tokenizer", tokenizer),
    ("tune_cache", tune_cache),
];

/// `safetensors::parse`, every tensor's `to_f32`, then the GPT-2 loader with the tiny config.
pub fn safetensors(bytes: &[u8]) {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    let config = CONFIG.get_or_init(|| gpt2::tiny_random_checkpoint(gpt2::TINY_SEED).0);
    if let Ok(file) = safetensors::parse(bytes, "fuzz") {
        for (name, t) in &file {
            let _ = t.to_f32(name);
        }
        let _ = Weights::from_safetensors(config.clone(), bytes, "fuzz");
    }
}

/// `Config::from_json`: what parses stays inside the documented limits.
pub fn config(bytes: &[u8]) {
    if let Ok(c) = Config::from_json(&String::from_utf8_lossy(bytes), "fuzz") {
        assert!(c.n_embd <= gpt2::config::MAX_EMBD && c.vocab_size <= gpt2::config::MAX_VOCAB);
    }
}

/// `ElementScan::from_sexpr` over x (2, 3), decay (3), initial (3); a program that checks
/// runs on the CPU context.
pub fn sexpr(bytes: &[u8]) {
    let bindings = Bindings::new()
        .tensor("x", ArrayD::from_elem(IxDyn(&[2, 3]), 0.5))
        .tensor("decay", ArrayD::from_elem(IxDyn(&[3]), 0.9))
        .tensor("initial", ArrayD::zeros(IxDyn(&[3])));
    if let Ok(scan) = ElementScan::from_sexpr(&String::from_utf8_lossy(bytes), &bindings) {
        let _ = scan.ir();
        let _ = scan.run(&Context::cpu());
    }
}

/// GPT-2's tokenizer: any text round-trips through encode and decode; the bytes as
/// little-endian u32 ids decode or fail cleanly.
pub fn tokenizer(bytes: &[u8]) {
    let Ok(tok) = Tokenizer::gpt2() else {
        return;
    };
    let text = String::from_utf8_lossy(bytes);
    let ids = tok.encode(&text);
    assert_eq!(tok.decode(&ids).ok().as_deref(), Some(&*text), "round trip of {text:?}");
    let ids: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let _ = tok.decode(&ids);
}

/// The tune cache file's reader (`engine/tune/file.rs`), for the adapter of its documented
/// example.
pub fn tune_cache(bytes: &[u8]) {
    let _ = wgsl_compute::tune::parse_cache_text(&String::from_utf8_lossy(bytes));
}
