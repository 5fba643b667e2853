//! The Llama-style decoder on the autograd tape: its weights as variables
//! ([`Llama::vars`], in [`Llama::weights`] order) and the training forward, token ids to mean
//! next-token cross-entropy ([`Llama::loss_var`]), recorded so that `loss.backward()` gives
//! every weight's gradient and an optimiser steps the model's own tensors in place: the
//! trained model generates at once. The arithmetic is [`Llama::forward`]'s from an empty
//! cache (`Var::rms_norm`, `Var::rope` over the model's angle tables, grouped heads repeated,
//! `Var::attention`, `Var::swiglu`).
//!
//! ```
//! use wgsl_compute::autograd::Tape;
//! use wgsl_compute::models::llama::Llama;
//! use wgsl_compute::train::{Adam, Optimizer};
//! let ctx = wgsl_compute::Context::cpu();
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/models/llama-tiny-random");
//! let model = Llama::load(&ctx, std::path::Path::new(dir))?;
//! let mut adam = Adam::new(&model.weights(), 1e-3)?;
//! let (ids, targets) = ([1, 17, 42, 5], [17, 42, 5, 9]);
//! for _ in 0..2 {
//!     let tape = Tape::new(&ctx);
//!     let vars = model.vars(&tape)?;
//!     let loss = model.loss_var(&vars, &ids, &targets)?; // ()
//!     adam.step_vars(&vars, &loss.backward()?)?;
//! }
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

use super::model::Llama;
use crate::autograd::{Tape, Var};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

impl Llama {
    /// Every trainable weight: the embedding, the final norm, the head (not when it is the
    /// embedding itself), then each layer's (input norm, q k v, o, post norm, gate and up,
    /// down).
    pub fn weights(&self) -> Vec<&Tensor> {
        let mut w = vec![&self.embed, &self.norm];
        if !self.tied {
            w.push(&self.head);
        }
        w.extend(self.layers.iter().flat_map(|l| l.tensors()));
        w
    }

    /// The weights as variables of `tape`, in [`Llama::weights`] order.
    pub fn vars(&self, tape: &Tape) -> Result<Vec<Var>> {
        self.weights().into_iter().map(|t| tape.var(t)).collect()
    }

    /// The logits (T, V) of one row of token ids, recorded on the tape of `vars`.
    pub fn logits_var(&self, vars: &[Var], ids: &[u32]) -> Result<Var> {
        let op = "Llama::logits_var";
        let cfg = &self.config;
        let per_layer = 6;
        let first_layer = if self.tied { 2 } else { 3 };
        if vars.len() != first_layer + per_layer * self.layers.len() {
            return Err(Error::value(
                op,
                "vars",
                format!(
                    "the {} variables of Llama::vars",
                    first_layer + per_layer * self.layers.len()
                ),
                vars.len(),
            ));
        }
        self.check_ids(op, ids, 0)?;
        let t = ids.len();
        let (d, h, kvh, inter) = (
            cfg.head_dim,
            cfg.num_attention_heads,
            cfg.num_key_value_heads,
            cfg.intermediate_size,
        );
        let (hd, kvd, eps) = (h * d, kvh * d, cfg.rms_norm_eps);
        let (cos, sin) = (self.rope_cos.narrow(0, 0, t)?, self.rope_sin.narrow(0, 0, t)?); // (T, D)
                                                                                           // Each of KVH heads (KVH, T, D) repeated for its H / KVH query heads -> (H, T, D).
        let repeat = |x: &Var| -> Result<Var> {
            if h == kvh {
                return Ok(x.clone());
            }
            let heads: Vec<Var> = (0..h)
                .map(|j| x.narrow(0, j / (h / kvh), j / (h / kvh) + 1))
                .collect::<Result<_>>()?;
            Var::cat(&heads.iter().collect::<Vec<_>>(), 0)
        };
        let mut x = Var::gather_rows(&vars[0], ids)?; // (T, C)
        for layer in vars[first_layer..].chunks(per_layer) {
            let [input_norm, qkv_w, o, post_norm, gate_up, down] = layer else {
                return Err(Error::value(op, "vars", "six variables a layer", layer.len()));
            };
            let qkv = x.rms_norm(input_norm, eps)?.matmul(qkv_w)?; // (T, H D + 2 KVH D)
            let heads = |a: usize, b: usize, n: usize| qkv.narrow(1, a, b)?.reshape(&[t, n, d])?.transpose(0, 1); // (n, T, D)
            let q = qkv
                .narrow(1, 0, hd)?
                .reshape(&[t, h, d])?
                .rope(&cos, &sin)?
                .transpose(0, 1)?; // (H, T, D)
            let k = qkv
                .narrow(1, hd, hd + kvd)?
                .reshape(&[t, kvh, d])?
                .rope(&cos, &sin)?
                .transpose(0, 1)?; // (KVH, T, D)
            let v = heads(hd + kvd, hd + 2 * kvd, kvh)?; // (KVH, T, D)
            let y = Var::attention(&q, &repeat(&k)?, &repeat(&v)?, 0)?; // (H, T, D)
            let y = y.transpose(0, 1)?.reshape(&[t, hd])?; // (T, H D)
            x = x.add(&y.matmul(o)?)?;
            let gu = x.rms_norm(post_norm, eps)?.matmul(gate_up)?; // (T, 2 I)
            let s = Var::swiglu(&gu.narrow(1, 0, inter)?, &gu.narrow(1, inter, 2 * inter)?)?; // (T, I)
            x = x.add(&s.matmul(down)?)?;
        }
        let head = &vars[if self.tied { 0 } else { 2 }]; // (V, C)
        x.rms_norm(&vars[1], eps)?.matmul(&head.transpose(0, 1)?) // (T, V)
    }

    /// The mean next-token cross-entropy of `ids` (one row of T tokens) against `targets`
    /// (T ids below the vocabulary), recorded on the tape of `vars`. -> ().
    pub fn loss_var(&self, vars: &[Var], ids: &[u32], targets: &[u32]) -> Result<Var> {
        if targets.len() != ids.len() {
            return Err(Error::value(
                "Llama::loss_var",
                "targets",
                format!("{} ids, one a token", ids.len()),
                targets.len(),
            ));
        }
        self.logits_var(vars, ids)?.cross_entropy(targets)
    }
}
