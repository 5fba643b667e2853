//! A Llama-style decoder's sizes, read from a Hugging Face `config.json` (`LlamaConfig`).

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};

/// The sizes and constants of a Llama-style decoder.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Tokens in the vocabulary (V).
    pub vocab_size: usize,
    /// Model width (C).
    pub hidden_size: usize,
    /// SwiGLU width (the gate and up projections' output).
    pub intermediate_size: usize,
    /// Decoder layers.
    pub num_hidden_layers: usize,
    /// Query heads (H).
    pub num_attention_heads: usize,
    /// Key/value heads (H divides into groups of H / KVH query heads sharing one).
    pub num_key_value_heads: usize,
    /// Width of a head (D; `hidden_size / num_attention_heads` unless given).
    pub head_dim: usize,
    /// The longest sequence (prompt and generated tokens).
    pub max_position_embeddings: usize,
    /// RMSNorm's epsilon.
    pub rms_norm_eps: f32,
    /// RoPE's base.
    pub rope_theta: f64,
    /// Whether the head is the token embedding (else `lm_head.weight` of its own).
    pub tie_word_embeddings: bool,
}

impl Config {
    /// `dir/config.json` (a regular file of at most 1 MiB).
    pub fn load(dir: &Path) -> Result<Config> {
        let path = dir.join("config.json");
        let text = crate::io::read_text(&path, crate::io::MAX_CONFIG_BYTES)?;
        Config::from_json(&text, &path.display().to_string())
    }

    /// Parses `config.json` text (`what` names it in errors): the `LlamaConfig` keys, RoPE's
    /// base either as `rope_theta` or inside `rope_parameters` (transformers 5). Only the
    /// default RoPE (no scaling) and SiLU are supported.
    pub fn from_json(text: &str, what: &str) -> Result<Config> {
        let io = |message: String| Error::io(what, message);
        let obj = &crate::io::json_object(text, what)?;
        let size = |key: &str| -> Result<Option<usize>> {
            obj.get(key)
                .filter(|x| !x.is_null())
                .map(|x| {
                    x.as_u64()
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| io(format!("`{key}` is {x}, expected a non-negative integer")))
                })
                .transpose()
        };
        let need = |key: &str| size(key)?.ok_or_else(|| io(format!("`{key}` is missing")));
        let number = |x: &Value, key: &str| {
            x.as_f64()
                .ok_or_else(|| io(format!("`{key}` is {x}, expected a number")))
        };
        let rope = obj
            .get("rope_parameters")
            .or_else(|| obj.get("rope_scaling"))
            .filter(|x| !x.is_null());
        if let Some(kind) = rope.and_then(|r| r.get("rope_type")).and_then(Value::as_str) {
            if kind != "default" {
                return Err(io(format!("rope_type `{kind}` is not supported (default is)")));
            }
        }
        let rope_theta = match (obj.get("rope_theta"), rope.and_then(|r| r.get("rope_theta"))) {
            (Some(x), _) | (None, Some(x)) => number(x, "rope_theta")?,
            (None, None) => 10000.0,
        };
        if let Some(act) = obj.get("hidden_act").and_then(Value::as_str) {
            if act != "silu" {
                return Err(io(format!("hidden_act `{act}` is not SiLU")));
            }
        }
        let heads = need("num_attention_heads")?;
        let hidden = need("hidden_size")?;
        let c = Config {
            vocab_size: need("vocab_size")?,
            hidden_size: hidden,
            intermediate_size: need("intermediate_size")?,
            num_hidden_layers: need("num_hidden_layers")?,
            num_attention_heads: heads,
            num_key_value_heads: size("num_key_value_heads")?.unwrap_or(heads),
            head_dim: size("head_dim")?.unwrap_or(hidden.checked_div(heads).unwrap_or(0)),
            max_position_embeddings: need("max_position_embeddings")?,
            rms_norm_eps: obj
                .get("rms_norm_eps")
                .map(|x| number(x, "rms_norm_eps"))
                .transpose()?
                .unwrap_or(1e-6) as f32,
            rope_theta,
            tie_word_embeddings: obj.get("tie_word_embeddings").and_then(Value::as_bool).unwrap_or(false),
        };
        c.validate().map_err(io)?;
        Ok(c)
    }

    /// Checks the sizes agree: positive, KVH dividing H, an even head width.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let positive = [
            ("vocab_size", self.vocab_size),
            ("hidden_size", self.hidden_size),
            ("intermediate_size", self.intermediate_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("num_key_value_heads", self.num_key_value_heads),
            ("head_dim", self.head_dim),
            ("max_position_embeddings", self.max_position_embeddings),
        ];
        if let Some((k, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("`{k}` is 0, expected a positive size"));
        }
        if !self.num_attention_heads.is_multiple_of(self.num_key_value_heads) {
            return Err(format!(
                "num_key_value_heads = {} does not divide num_attention_heads = {}",
                self.num_key_value_heads, self.num_attention_heads
            ));
        }
        if !self.head_dim.is_multiple_of(2) {
            return Err(format!("head_dim = {} is odd (RoPE rotates pairs)", self.head_dim));
        }
        let eps_ok = self.rms_norm_eps > 0.0 && self.rms_norm_eps.is_finite();
        let theta_ok = self.rope_theta.is_finite() && self.rope_theta > 1.0;
        if !(eps_ok && theta_ok) {
            return Err(format!(
                "rms_norm_eps = {} and rope_theta = {}: expected eps > 0 and theta > 1",
                self.rms_norm_eps, self.rope_theta
            ));
        }
        Ok(())
    }
}
