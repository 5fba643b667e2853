//! Writes the untrained tiny GPT-2 test checkpoint to `assets/models/tiny-random/`.
//!
//! `cargo run --release -p wgsl-compute-dev --bin make_tiny_gpt2 [-- DIR]`. The bytes are a pure function
//! of the seed, and a test checks the shipped files equal a fresh generation.

use std::path::PathBuf;

use wgsl_compute::models::gpt2::{write_tiny_random, TINY_SEED};

const USAGE: &str = "usage: make_tiny_gpt2 [DIR]
Writes the untrained tiny GPT-2 test checkpoint (seed 2024) to DIR
(default: assets/models/tiny-random).";

fn main() -> Result<(), wgsl_compute::Error> {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let dir = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("dev/ is in the repository")
            .join("assets/models/tiny-random")
    });
    write_tiny_random(&dir, TINY_SEED)?;
    println!("wrote the untrained tiny GPT-2 (seed {TINY_SEED}) to {}", dir.display());
    Ok(())
}
