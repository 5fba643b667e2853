//! Writes the untrained tiny GPT-2 test checkpoint to `assets/models/tiny-random/`.
//!
//! `cargo run --release --example make_tiny_gpt2 [-- DIR]`. The bytes are a pure function
//! of the seed, and a test checks the shipped files equal a fresh generation.

use std::path::PathBuf;

use engine::models::gpt2::{write_tiny_random, TINY_SEED};

fn main() -> Result<(), engine::Error> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/models/tiny-random"));
    write_tiny_random(&dir, TINY_SEED)?;
    println!("wrote the untrained tiny GPT-2 (seed {TINY_SEED}) to {}", dir.display());
    Ok(())
}
