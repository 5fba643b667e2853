//! The CPU reference forward of GPT-2: plain ndarray, f64 activations and accumulation.
//!
//! Independent of the engine's ops (no KV cache, no tensors): recomputes the whole sequence,
//! so the GPU model's cached path is checked against a full recomputation.

use ndarray::{s, Array1, Array2, ArrayView1, Axis};

use super::Weights;
use crate::error::{Error, Result};

/// Everything `--verify` compares, for every position of the sequence.
#[derive(Clone, Debug)]
pub struct Trace {
    /// Token + position embeddings (T, C).
    pub embeddings: Array2<f32>,
    /// The residual stream after each block, n_layer of (T, C).
    pub residuals: Vec<Array2<f32>>,
    /// Logits (T, V).
    pub logits: Array2<f32>,
}

/// Runs GPT-2 on `ids` (T tokens, T <= n_positions) from scratch.
///
/// Errors: weights that do not match their config ([`Weights::validate`]: the fields are
/// public), no ids or more than n_positions, an id outside the vocabulary.
pub fn forward(w: &Weights, ids: &[u32]) -> Result<Trace> {
    w.validate()?;
    let cfg = &w.config;
    let (t, c) = (ids.len(), cfg.n_embd);
    if t == 0 || t > cfg.n_positions {
        return Err(Error::value(
            "gpt2 reference",
            "ids",
            format!("1..={} tokens", cfg.n_positions),
            t,
        ));
    }
    let mut x = Array2::<f64>::zeros((t, c));
    for (p, &id) in ids.iter().enumerate() {
        if id as usize >= cfg.vocab_size {
            return Err(Error::value(
                "gpt2 reference",
                "ids",
                format!("below {}", cfg.vocab_size),
                id,
            ));
        }
        for j in 0..c {
            x[[p, j]] = w.wte[[id as usize, j]] as f64 + w.wpe[[p, j]] as f64;
        }
    }
    let embeddings = x.mapv(|v| v as f32);
    let eps = cfg.layer_norm_epsilon as f64;
    let (nh, hd) = (cfg.n_head, cfg.head_dim());
    let mut residuals = Vec::with_capacity(cfg.n_layer);
    for b in &w.blocks {
        let h = layer_norm(&x, b.ln_1_weight.view(), b.ln_1_bias.view(), eps);
        let qkv = linear(&h, &b.attn_weight, b.attn_bias.view()); // (T, 3C)
        let mut attn = Array2::<f64>::zeros((t, c));
        let scale = 1.0 / (hd as f64).sqrt();
        for head in 0..nh {
            let q = qkv.slice(s![.., head * hd..(head + 1) * hd]);
            let k = qkv.slice(s![.., c + head * hd..c + (head + 1) * hd]);
            let v = qkv.slice(s![.., 2 * c + head * hd..2 * c + (head + 1) * hd]);
            for i in 0..t {
                // Causal: query i sees keys 0..=i.
                let scores: Vec<f64> = (0..=i).map(|j| q.row(i).dot(&k.row(j)) * scale).collect();
                let max = scores.iter().cloned().fold(f64::MIN, f64::max);
                let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                let sum: f64 = e.iter().sum();
                for (j, ej) in e.iter().enumerate() {
                    let p = ej / sum;
                    for d in 0..hd {
                        attn[[i, head * hd + d]] += p * v[[j, d]];
                    }
                }
            }
        }
        x = x + linear(&attn, &b.attn_proj_weight, b.attn_proj_bias.view());
        let h = layer_norm(&x, b.ln_2_weight.view(), b.ln_2_bias.view(), eps);
        let f = linear(&h, &b.fc_weight, b.fc_bias.view()).mapv(gelu_tanh);
        x = x + linear(&f, &b.mlp_proj_weight, b.mlp_proj_bias.view());
        residuals.push(x.mapv(|v| v as f32));
    }
    let h = layer_norm(&x, w.ln_f_weight.view(), w.ln_f_bias.view(), eps);
    // Logits tied to wte: h (T, C) @ wte^T (C, V).
    let mut logits = Array2::<f32>::zeros((t, cfg.vocab_size));
    for (vi, row) in w.wte.axis_iter(Axis(0)).enumerate() {
        for i in 0..t {
            let acc: f64 = h.row(i).iter().zip(row.iter()).map(|(a, b)| a * *b as f64).sum();
            logits[[i, vi]] = acc as f32;
        }
    }
    Ok(Trace {
        embeddings,
        residuals,
        logits,
    })
}

/// Row-wise layer norm with f64 statistics: (T, C) -> (T, C).
fn layer_norm(x: &Array2<f64>, g: ArrayView1<f32>, b: ArrayView1<f32>, eps: f64) -> Array2<f64> {
    let c = x.ncols() as f64;
    let mut out = x.clone();
    for mut row in out.axis_iter_mut(Axis(0)) {
        let mean = row.sum() / c;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / c;
        let inv = 1.0 / (var + eps).sqrt();
        for (j, v) in row.iter_mut().enumerate() {
            *v = (*v - mean) * inv * g[j] as f64 + b[j] as f64;
        }
    }
    out
}

/// `x (T, K) @ w (K, N) + bias (N,)` accumulated in f64.
fn linear(x: &Array2<f64>, w: &Array2<f32>, bias: ArrayView1<f32>) -> Array2<f64> {
    let n = w.ncols();
    let mut out = Array2::<f64>::zeros((x.nrows(), n));
    for (xi, mut oi) in x.axis_iter(Axis(0)).zip(out.axis_iter_mut(Axis(0))) {
        let mut acc = Array1::<f64>::from_iter(bias.iter().map(|&b| b as f64));
        for (k, &xk) in xi.iter().enumerate() {
            acc.zip_mut_with(&w.row(k), |a, &wv| *a += xk * wv as f64);
        }
        oi.assign(&acc);
    }
    out
}

/// GPT-2's GELU, the tanh approximation.
fn gelu_tanh(x: f64) -> f64 {
    let k = (2.0 / std::f64::consts::PI).sqrt();
    0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh())
}
