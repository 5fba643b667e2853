//! GPT-2 in the browser: load a checkpoint from bytes, generate with a JS callback per token.
//!
//! Stub: `engine::models::gpt2` (config, safetensors loader, tokenizer, forward with a KV
//! cache) is being written on another branch. Until it lands every entry point fails with
//! [`STATUS`], which the page shows in its GPT-2 panel; the JS surface in
//! [`crate::bindings`] (`loadGpt2`, `Gpt2.generate`) is the final one, so wiring it changes
//! no JS.

use engine::{Error, Result};

/// True when this build can load and run GPT-2.
pub const AVAILABLE: bool = false;

/// Why GPT-2 cannot run in this build, for the page's GPT-2 panel.
pub const STATUS: &str =
    "GPT-2 is not available in this build yet: engine::models::gpt2 has not landed (the parity suite works)";

/// A GPT-2 model loaded on a context (nothing yet: see [`STATUS`]).
#[derive(Clone)]
pub struct Model;

impl Model {
    /// Loads a model from the Hugging Face `config.json` text and `model.safetensors` bytes.
    pub fn load(_ctx: &engine::Context, _config_json: &str, _weights: &[u8]) -> Result<Model> {
        Err(not_available("gpt2::load"))
    }

    /// One line on the model (layers, heads, width, context, vocabulary).
    pub fn describe(&self) -> String {
        String::new()
    }

    /// Greedy generation of `n_tokens` after `prompt`, calling `on_token(id, text)` as each
    /// token is chosen; returns every generated id.
    pub async fn generate(
        &self,
        _prompt: &str,
        _n_tokens: usize,
        _on_token: impl FnMut(u32, &str),
    ) -> Result<Vec<u32>> {
        Err(not_available("gpt2::generate"))
    }
}

fn not_available(op: &'static str) -> Error {
    Error::Unsupported {
        op,
        message: STATUS.into(),
    }
}
