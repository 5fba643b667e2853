//! GPT-2 on the autograd tape: [`Trainable`] holds a checkpoint's parameters as F32 tensors
//! in a [`ParamStore`] under the Hugging Face names (`wte.weight`, `h.0.ln_1.weight`, ...),
//! as the [`Layers`] of [`super::layers`], and records the training forward, token ids to
//! mean next-token cross-entropy, on a [`Tape`], so that `loss.backward()` gives every
//! parameter's gradient and an optimiser steps them in place. [`Trainable::weights`] reads
//! the parameters back as [`Weights`], to generate with [`Gpt2`](super::Gpt2) or to save.
//!
//! The forward is the inference model's arithmetic (`Gpt2::forward`) over a batch of rows
//! ([`Layers::loss`]). Dropout is not applied (the shipped configs' `*_pdrop` are ignored).
//!
//! ```no_run
//! use wgsl_compute::autograd::Tape;
//! use wgsl_compute::models::gpt2::{train::Trainable, Weights};
//! use wgsl_compute::train::{Adam, Optimizer};
//! use wgsl_compute::Context;
//! let ctx = Context::new()?;
//! let weights = Weights::load(std::path::Path::new("assets/models/tiny-random"))?;
//! let model = Trainable::new(&ctx, &weights)?;
//! let mut adam = Adam::new(&model.params().tensors(), 1e-3)?;
//! let (inputs, targets) = (vec![1, 2, 3, 4], vec![2, 3, 4, 5]); // 2 rows of 2 tokens
//! for _ in 0..10 {
//!     let tape = Tape::new(&ctx);
//!     let vars = model.vars(&tape)?;
//!     let loss = model.loss_var(&vars, &inputs, &targets, 2)?; // ()
//!     adam.step_vars(&vars, &loss.backward()?)?;
//! }
//! let tuned = model.weights()?; // to generate with Gpt2::new(&ctx, &tuned)
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

use super::config::Config;
use super::layers::Layers;
use super::weights::Weights;
use crate::autograd::{Tape, Var};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::nn::{Module, Pass, VarBuilder};
use crate::ops::Ids;
use crate::tensor::Tensor;
use crate::train::ParamStore;

/// Parameters per block, in [`Trainable::params`] order after `wte` and `wpe`.
const BLOCK_PARAMS: [&str; 12] = [
    "ln_1.weight",
    "ln_1.bias",
    "attn.c_attn.weight",
    "attn.c_attn.bias",
    "attn.c_proj.weight",
    "attn.c_proj.bias",
    "ln_2.weight",
    "ln_2.bias",
    "mlp.c_fc.weight",
    "mlp.c_fc.bias",
    "mlp.c_proj.weight",
    "mlp.c_proj.bias",
];

/// A GPT-2 whose parameters train: F32 tensors, updated in place by an optimiser.
pub struct Trainable {
    layers: Layers,
    params: ParamStore,
}

impl Trainable {
    /// Uploads `weights` (validated) as F32 parameters on `ctx`.
    pub fn new(ctx: &Context, weights: &Weights) -> Result<Trainable> {
        weights.validate()?;
        let mut params = ParamStore::new();
        let mut put = |name: String, shape: &[usize], values: Vec<f32>| -> Result<()> {
            params.insert(name, Tensor::from_slice(ctx, shape, &values)?)
        };
        let m = |a: &ndarray::Array2<f32>| (a.shape().to_vec(), a.iter().copied().collect::<Vec<f32>>());
        let v = |a: &ndarray::Array1<f32>| (a.shape().to_vec(), a.to_vec());
        let (wte, wpe) = (m(&weights.wte), m(&weights.wpe));
        put("wte.weight".into(), &wte.0, wte.1)?;
        put("wpe.weight".into(), &wpe.0, wpe.1)?;
        for (i, b) in weights.blocks.iter().enumerate() {
            // In BLOCK_PARAMS order.
            let block = [
                v(&b.ln_1_weight),
                v(&b.ln_1_bias),
                m(&b.attn_weight),
                v(&b.attn_bias),
                m(&b.attn_proj_weight),
                v(&b.attn_proj_bias),
                v(&b.ln_2_weight),
                v(&b.ln_2_bias),
                m(&b.fc_weight),
                v(&b.fc_bias),
                m(&b.mlp_proj_weight),
                v(&b.mlp_proj_bias),
            ];
            for (name, (shape, values)) in BLOCK_PARAMS.iter().zip(block) {
                put(format!("h.{i}.{name}"), &shape, values)?;
            }
        }
        let (lnw, lnb) = (v(&weights.ln_f_weight), v(&weights.ln_f_bias));
        put("ln_f.weight".into(), &lnw.0, lnw.1)?;
        put("ln_f.bias".into(), &lnb.0, lnb.1)?;
        // The layers take every tensor by name; their store lists them in the layers' order.
        let vb = VarBuilder::from_store(params)?;
        let layers = Layers::new(&vb, &weights.config)?;
        Ok(Trainable {
            params: layers.store()?,
            layers,
        })
    }

    /// The sizes.
    pub fn config(&self) -> &Config {
        self.layers.config()
    }

    /// The model as [`crate::nn`] layers (sharing these parameters).
    pub fn layers(&self) -> &Layers {
        &self.layers
    }

    /// The parameters under their Hugging Face names: `wte.weight`, `wpe.weight`, each
    /// block's twelve (`h.{i}.ln_1.weight` ... `h.{i}.mlp.c_proj.bias`), `ln_f.weight`,
    /// `ln_f.bias`, in that order (an optimiser's order).
    pub fn params(&self) -> &ParamStore {
        &self.params
    }

    /// Parameters in all (elements).
    pub fn parameter_count(&self) -> usize {
        self.params.tensors().iter().map(|t| t.len()).sum()
    }

    /// Every parameter as a leaf of `tape` sharing its buffer, in [`Trainable::params`] order.
    pub fn vars(&self, tape: &Tape) -> Result<Vec<Var>> {
        self.params.vars(tape)
    }

    /// The mean next-token cross-entropy of `inputs` against `targets` (`batch` rows of T
    /// token ids each, row after row; T at most `n_positions`), recorded on the tape of
    /// `vars` (from [`Trainable::vars`]): a () variable. The ids are host slices or (B T,)
    /// tensors written by `Tensor::write_ids` ([`Ids`]): on the device nothing is uploaded,
    /// so the step can be captured as a `train::CompiledStep`.
    pub fn loss_var<'i>(
        &self,
        vars: &[Var],
        inputs: impl Into<Ids<'i>>,
        targets: impl Into<Ids<'i>>,
        batch: usize,
    ) -> Result<Var> {
        let pass = self.pass("gpt2::Trainable::loss_var", vars)?;
        let (h, wte) = self
            .layers
            .hidden("gpt2::Trainable::loss_var", &pass, inputs.into(), batch)?;
        // The tied head and the loss in row blocks: the (B T, V) logits are never whole.
        Var::head_cross_entropy(&h, wte, targets, None)
    }

    /// The logits (batch T, V) of every position of `inputs` (as [`Trainable::loss_var`]).
    pub fn logits_var<'i>(&self, vars: &[Var], inputs: impl Into<Ids<'i>>, batch: usize) -> Result<Var> {
        let pass = self.pass("gpt2::Trainable::logits_var", vars)?;
        let (h, wte) = self
            .layers
            .hidden("gpt2::Trainable::logits_var", &pass, inputs.into(), batch)?;
        h.matmul(&wte.transpose(0, 1)?) // (B T, V), tied head
    }

    /// The layers' training pass over `vars`, one per parameter in [`Trainable::params`]
    /// order; `op` names the caller in errors.
    fn pass(&self, op: &'static str, vars: &[Var]) -> Result<Pass> {
        let want = self.params.len();
        if vars.len() != want {
            return Err(Error::value(
                op,
                "vars",
                format!("{want} variables (Trainable::vars)"),
                vars.len(),
            ));
        }
        Pass::from_vars(&self.layers, vars.to_vec(), true)
    }

    /// The parameters read back as a checkpoint (F32), for `Gpt2::new` or saving.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn weights(&self) -> Result<Weights> {
        pollster::block_on(self.weights_async())
    }

    /// [`Trainable::weights`] without blocking (the browser's form).
    pub async fn weights_async(&self) -> Result<Weights> {
        let bytes = self.params.to_bytes_async().await?;
        Weights::from_safetensors(self.config().clone(), &bytes, "gpt2::Trainable parameters")
    }
}

/// Rows of `batch` x `t` next-token pairs cut from `tokens` at `starts`: the inputs
/// `tokens[s..s + t]` and the targets `tokens[s + 1..s + t + 1]`, row after row. Every start
/// must leave `t + 1` tokens.
pub fn windows(tokens: &[u32], starts: &[usize], t: usize) -> Result<(Vec<u32>, Vec<u32>)> {
    let (mut x, mut y) = (
        Vec::with_capacity(starts.len() * t),
        Vec::with_capacity(starts.len() * t),
    );
    for &s in starts {
        if s.checked_add(t + 1).is_none_or(|end| end > tokens.len()) {
            return Err(Error::value(
                "gpt2::train::windows",
                "starts",
                format!(
                    "starts at most {} (t + 1 = {} tokens of {})",
                    tokens.len().saturating_sub(t + 1),
                    t + 1,
                    tokens.len()
                ),
                s,
            ));
        }
        x.extend_from_slice(&tokens[s..s + t]);
        y.extend_from_slice(&tokens[s + 1..s + t + 1]);
    }
    Ok((x, y))
}
