//! The models shipped with the crate, found from any working directory.
//!
//! | model | what | folder |
//! | --- | --- | --- |
//! | [`Shipped::Shakespeare`] | a 12M-parameter GPT-2 trained on Shakespeare's plays, f16 weights (24 MB) | `assets/models/shakespeare/` |
//! | [`Shipped::TinyRandom`] | an untrained 2-layer GPT-2-shaped test fixture (`gpt2::tiny_random_checkpoint`, seed 0; expect noise) | `assets/models/tiny-random/` |
//!
//! Each folder holds `config.json` and `model.safetensors` in the Hugging Face GPT-2 layout.
//! [`Shipped::dir`] looks in `ENGINE_MODELS` (a folder holding the model folders) when it is
//! set, else in the crate's own `assets/models/`, found through the path cargo built it from
//! (a checkout, or cargo's registry copy of the crate), so a program that depends on the crate
//! finds them without a relative path.
//!
//! ```no_run
//! use wgsl_compute::models::Shipped;
//! let weights = Shipped::Shakespeare.weights()?;
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

use std::path::PathBuf;

use crate::error::{Error, Result};

/// A model that ships with the crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shipped {
    /// A small GPT-2 trained on Shakespeare (the `gpt2` example's default).
    Shakespeare,
    /// An untrained GPT-2-shaped fixture for tests.
    TinyRandom,
}

impl Shipped {
    /// Every shipped model.
    pub const ALL: [Shipped; 2] = [Shipped::Shakespeare, Shipped::TinyRandom];

    /// Its folder's name under `assets/models/`.
    pub fn name(self) -> &'static str {
        match self {
            Shipped::Shakespeare => "shakespeare",
            Shipped::TinyRandom => "tiny-random",
        }
    }

    /// One line on what it is.
    pub fn describe(self) -> &'static str {
        match self {
            Shipped::Shakespeare => "a small GPT-2 trained on Shakespeare",
            Shipped::TinyRandom => "UNTRAINED random weights, a test fixture; expect noise, not text",
        }
    }

    /// The folder holding its `config.json` and `model.safetensors`: under `ENGINE_MODELS`
    /// when set, else under the crate's `assets/models/`. An error names the folders tried.
    pub fn dir(self) -> Result<PathBuf> {
        let roots: Vec<PathBuf> = match std::env::var_os("ENGINE_MODELS") {
            Some(root) => vec![PathBuf::from(root)],
            None => vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/models")],
        };
        roots
            .iter()
            .map(|root| root.join(self.name()))
            .find(|dir| dir.join("model.safetensors").is_file() && dir.join("config.json").is_file())
            .ok_or_else(|| Error::Io {
                what: format!("the shipped model `{}`", self.name()),
                message: format!(
                    "no config.json and model.safetensors in {} (set ENGINE_MODELS to a folder holding `{}/`)",
                    roots
                        .iter()
                        .map(|r| r.join(self.name()).display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    self.name()
                ),
            })
    }

    /// Its weights, loaded from [`Shipped::dir`].
    pub fn weights(self) -> Result<super::Weights> {
        super::Weights::load(&self.dir()?)
    }
}

impl std::fmt::Display for Shipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_model_is_found() {
        for m in Shipped::ALL {
            let dir = m.dir().unwrap();
            assert!(dir.ends_with(m.name()), "{}", dir.display());
        }
    }
}
