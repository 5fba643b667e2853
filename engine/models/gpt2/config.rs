//! The model's hyperparameters, read from a Hugging Face GPT-2 `config.json`.
//!
//! Missing fields take GPT-2 124M's values, so a bare `{}` is the small model. Older files
//! spell the context length `n_ctx`; both are accepted.

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};

/// GPT-2 hyperparameters (Hugging Face names).
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Number of transformer blocks.
    pub n_layer: usize,
    /// Attention heads per block; divides `n_embd`.
    pub n_head: usize,
    /// Width of the residual stream C.
    pub n_embd: usize,
    /// Longest sequence (rows of `wpe`).
    pub n_positions: usize,
    /// Rows of `wte`; 50257 for GPT-2's tokenizer.
    pub vocab_size: usize,
    /// Layer norm epsilon.
    pub layer_norm_epsilon: f32,
}

impl Default for Config {
    /// GPT-2 124M.
    fn default() -> Self {
        Config {
            n_layer: 12,
            n_head: 12,
            n_embd: 768,
            n_positions: 1024,
            vocab_size: 50257,
            layer_norm_epsilon: 1e-5,
        }
    }
}

/// Largest `config.json` read, in bytes (Hugging Face's GPT-2 configs are under 1 KiB).
pub use crate::io::MAX_CONFIG_BYTES;
/// Most blocks a config may ask for.
pub const MAX_LAYERS: usize = 1 << 12;
/// Widest residual stream (and most heads) a config may ask for; 4 * n_embd stays small.
pub const MAX_EMBD: usize = 1 << 16;
/// Longest context a config may ask for.
pub const MAX_POSITIONS: usize = 1 << 20;
/// Largest vocabulary: token ids travel to the GPU as f32, exact below 2^24.
pub const MAX_VOCAB: usize = 1 << 24;

impl Config {
    /// Reads and parses a `config.json` file, refusing anything that is not a regular file
    /// of at most [`MAX_CONFIG_BYTES`] (so `/dev/zero` or a huge file is an error, not a hang).
    pub fn read(path: &std::path::Path) -> Result<Config> {
        let text = crate::io::read_text(path, MAX_CONFIG_BYTES)?;
        Config::from_json(&text, &path.display().to_string())
    }

    /// Parses `config.json` text; `what` names the file in errors.
    pub fn from_json(text: &str, what: &str) -> Result<Config> {
        let io = |message: String| Error::io(what, message);
        let obj = &crate::io::json_object(text, what)?;
        let d = Config::default();
        let size = |keys: &[&str], default: usize| -> Result<usize> {
            for k in keys {
                if let Some(x) = obj.get(*k) {
                    return x
                        .as_u64()
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| io(format!("`{k}` is {x}, expected a non-negative integer")));
                }
            }
            Ok(default)
        };
        let eps = match obj.get("layer_norm_epsilon") {
            None => d.layer_norm_epsilon,
            Some(x) => x
                .as_f64()
                .ok_or_else(|| io(format!("`layer_norm_epsilon` is {x}, expected a number")))?
                as f32,
        };
        if let Some(act) = obj.get("activation_function").and_then(Value::as_str) {
            if !matches!(act, "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast") {
                return Err(io(format!(
                    "activation_function `{act}` is not GPT-2's tanh GELU (gelu_new)"
                )));
            }
        }
        let c = Config {
            n_layer: size(&["n_layer"], d.n_layer)?,
            n_head: size(&["n_head"], d.n_head)?,
            n_embd: size(&["n_embd"], d.n_embd)?,
            n_positions: size(&["n_positions", "n_ctx"], d.n_positions)?,
            vocab_size: size(&["vocab_size"], d.vocab_size)?,
            layer_norm_epsilon: eps,
        };
        c.validate().map_err(io)?;
        Ok(c)
    }

    /// The configuration as `config.json` text (Hugging Face field names), with an optional
    /// `_comment` field.
    pub fn to_json(&self, comment: Option<&str>) -> String {
        let mut m = Map::new();
        if let Some(c) = comment {
            m.insert("_comment".into(), json!(c));
        }
        m.insert("activation_function".into(), json!("gelu_new"));
        m.insert("architectures".into(), json!(["GPT2LMHeadModel"]));
        // Through the shortest decimal of the f32, so 1e-5 is written as 1e-5.
        let eps: f64 = self.layer_norm_epsilon.to_string().parse().unwrap_or(1e-5);
        m.insert("layer_norm_epsilon".into(), json!(eps));
        m.insert("model_type".into(), json!("gpt2"));
        m.insert("n_embd".into(), json!(self.n_embd));
        m.insert("n_head".into(), json!(self.n_head));
        m.insert("n_layer".into(), json!(self.n_layer));
        m.insert("n_positions".into(), json!(self.n_positions));
        m.insert("tie_word_embeddings".into(), json!(true));
        m.insert("vocab_size".into(), json!(self.vocab_size));
        let mut s = serde_json::to_string_pretty(&Value::Object(m)).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Width of one attention head, `n_embd / n_head`.
    pub fn head_dim(&self) -> usize {
        self.n_embd / self.n_head.max(1)
    }

    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        for (name, v, max) in [
            ("n_layer", self.n_layer, MAX_LAYERS),
            ("n_head", self.n_head, MAX_EMBD),
            ("n_embd", self.n_embd, MAX_EMBD),
            ("n_positions", self.n_positions, MAX_POSITIONS),
            ("vocab_size", self.vocab_size, MAX_VOCAB),
        ] {
            if v == 0 {
                return Err(format!("`{name}` is 0"));
            }
            if v > max {
                return Err(format!("`{name}` is {v}, above the limit of {max}"));
            }
        }
        if !self.n_embd.is_multiple_of(self.n_head) {
            return Err(format!(
                "n_embd {} is not a multiple of n_head {}",
                self.n_embd, self.n_head
            ));
        }
        if self.layer_norm_epsilon.is_nan() || self.layer_norm_epsilon <= 0.0 {
            return Err(format!(
                "layer_norm_epsilon {} is not positive",
                self.layer_norm_epsilon
            ));
        }
        Ok(())
    }
}
