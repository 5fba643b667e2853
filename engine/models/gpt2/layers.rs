//! GPT-2 built from [`crate::nn`]'s layers, each parameter under its Hugging Face name:
//! [`Attention`] (`attn.c_attn`, `attn.c_proj`), [`Layer`] (`h.{i}`: `ln_1`, the attention,
//! `ln_2`, `mlp`) and [`Layers`] (`wte`, `wpe`, every `h.{i}`, `ln_f`). Made by a
//! [`VarBuilder`] (fresh with GPT-2's init, or taken from a checkpoint's store), run in a
//! [`Pass`]; [`super::Trainable`] is these layers over a checkpoint.
//!
//! ```
//! use wgsl_compute::autograd::Tape;
//! use wgsl_compute::models::gpt2::{layers::Layers, tiny::tiny_config};
//! use wgsl_compute::nn::{Module, Pass, VarBuilder};
//! let ctx = wgsl_compute::Context::cpu();
//! let config = tiny_config();
//! let vb = VarBuilder::new(&ctx, 0);
//! let gpt = Layers::new(&vb, &config)?; // GPT-2's init: normal(0.02), c_proj scaled
//! assert_eq!(gpt.param_names()[2], "h.0.ln_1.weight");
//! let tape = Tape::new(&ctx);
//! let pass = Pass::train(&tape, &gpt)?;
//! let loss = gpt.loss(&pass, &[1, 2, 3, 4], &[2, 3, 4, 5], 2)?; // 2 rows of 2 tokens: ()
//! let grads = loss.backward()?;
//! # let _ = grads;
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

use super::config::Config;
use crate::autograd::Var;
use crate::error::{Error, Result};
use crate::nn::{Activation, Embedding, Init, LayerNorm, Linear, Mlp, Module, Param, Pass, VarBuilder};
use crate::ops::Ids;

/// GPT-2's init deviation for weights (Hugging Face's `initializer_range`).
const INIT_STD: f32 = 0.02;

/// Causal self-attention: `c_attn` (C, 3C) makes q, k and v, `c_proj` (C, C) mixes the heads.
#[derive(Clone, Debug)]
pub struct Attention {
    /// x (.., C) -> q, k, v side by side (.., 3C).
    pub c_attn: Linear,
    /// The heads' outputs (.., C) -> (.., C), added to the residual.
    pub c_proj: Linear,
    n_head: usize,
}

impl Attention {
    /// Under `vb` (`h.{i}.attn`); `c_proj` drawn with deviation 0.02 / sqrt(2 n_layer), as
    /// GPT-2 scales the projections that add into the residual stream.
    pub fn new(vb: &VarBuilder, config: &Config) -> Result<Attention> {
        let c = config.n_embd;
        Ok(Attention {
            c_attn: Linear::with_init(&vb.pp("c_attn"), c, 3 * c, Init::Normal(INIT_STD), Some(Init::ZEROS))?,
            c_proj: Linear::with_init(&vb.pp("c_proj"), c, c, residual_init(config), Some(Init::ZEROS))?,
            n_head: config.n_head,
        })
    }

    /// `residual + c_proj(attention(a))` for `a` (B T, C) the normed input of `batch` rows of
    /// `t` positions: q, k and v are column slices of `c_attn`'s output (strided views, no copy,
    /// `Var::packed_attention`), causal softmax per (row, head) as batched products, `c_proj`
    /// with the residual fused.
    pub fn forward(&self, pass: &Pass, a: &Var, residual: &Var, batch: usize, t: usize) -> Result<Var> {
        self.c_attn.check("gpt2::Attention", a)?;
        if a.shape().first() != Some(&(batch * t)) {
            return Err(Error::shape(
                "gpt2::Attention",
                "a",
                format!("(batch t, C) with batch t = {batch} x {t}"),
                a.shape(),
            ));
        }
        let h = self.n_head;
        let (w, b) = self.c_attn.vars(pass)?;
        let b = b.ok_or_else(|| missing_bias("attn.c_attn"))?;
        // One (C, 3C) product (wider products run faster than three of C), and the attention
        // reads q, k and v from it as views.
        let qkv = a.linear(w, Some(b))?; // (B T, 3C)
        let y = Var::packed_attention(&qkv, batch, h)?; // (B T, C)
        let (pw, pb) = self.c_proj.vars(pass)?;
        y.linear_residual(pw, pb.ok_or_else(|| missing_bias("attn.c_proj"))?, residual)
    }
}

impl Module for Attention {
    fn params(&self) -> Vec<Param> {
        let mut p = self.c_attn.params();
        p.extend(self.c_proj.params());
        p
    }
}

/// One transformer layer `h.{i}`: `x + attn(ln_1(x))`, then `+ mlp(ln_2(.))`.
#[derive(Clone, Debug)]
pub struct Layer {
    /// Before the attention.
    pub ln_1: LayerNorm,
    /// Causal self-attention.
    pub attn: Attention,
    /// Before the MLP.
    pub ln_2: LayerNorm,
    /// `c_fc` (C, 4C), GELU, `c_proj` (4C, C).
    pub mlp: Mlp,
}

impl Layer {
    /// Under `vb` (`h.{i}`).
    pub fn new(vb: &VarBuilder, config: &Config) -> Result<Layer> {
        let (c, eps) = (config.n_embd, config.layer_norm_epsilon);
        // Made in Hugging Face's order, which is the builder's store's order.
        let ln_1 = LayerNorm::new(&vb.pp("ln_1"), c, eps)?;
        let attn = Attention::new(&vb.pp("attn"), config)?;
        let ln_2 = LayerNorm::new(&vb.pp("ln_2"), c, eps)?;
        let mlp = vb.pp("mlp");
        let c_fc = Linear::with_init(&mlp.pp("c_fc"), c, 4 * c, Init::Normal(INIT_STD), Some(Init::ZEROS))?;
        let c_proj = Linear::with_init(&mlp.pp("c_proj"), 4 * c, c, residual_init(config), Some(Init::ZEROS))?;
        Ok(Layer {
            ln_1,
            attn,
            ln_2,
            mlp: Mlp {
                c_fc,
                c_proj,
                act: Activation::Gelu,
            },
        })
    }

    /// x (B T, C) -> (B T, C) for `batch` rows of `t` positions.
    pub fn forward(&self, pass: &Pass, x: &Var, batch: usize, t: usize) -> Result<Var> {
        let x = self.attn.forward(pass, &self.ln_1.forward(pass, x)?, x, batch, t)?;
        // The MLP's second projection adds the residual in the same launch.
        let m = self.ln_2.forward(pass, &x)?;
        self.mlp.c_fc.check("gpt2::Layer", &m)?;
        let (fw, fb) = self.mlp.c_fc.vars(pass)?;
        let hidden = m.linear_gelu(fw, fb.ok_or_else(|| missing_bias("mlp.c_fc"))?)?; // (B T, 4C)
        let (pw, pb) = self.mlp.c_proj.vars(pass)?;
        hidden.linear_residual(pw, pb.ok_or_else(|| missing_bias("mlp.c_proj"))?, &x)
    }
}

impl Module for Layer {
    fn params(&self) -> Vec<Param> {
        let mut p = self.ln_1.params();
        p.extend(self.attn.params());
        p.extend(self.ln_2.params());
        p.extend(self.mlp.params());
        p
    }
}

/// The whole model: `wte` (V, C), `wpe` (P, C), the layers `h`, `ln_f`; the head is `wte`
/// (tied).
#[derive(Clone, Debug)]
pub struct Layers {
    /// Token embeddings (V, C), also the head.
    pub wte: Embedding,
    /// Position embeddings (P, C).
    pub wpe: Embedding,
    /// The layers `h.0` ..
    pub h: Vec<Layer>,
    /// The final layer norm.
    pub ln_f: LayerNorm,
    config: Config,
}

impl Layers {
    /// Every parameter under `vb`, in Hugging Face's order: `wte`, `wpe`, `h.0` .. `h.{L-1}`
    /// (each `ln_1`, `attn.c_attn`, `attn.c_proj`, `ln_2`, `mlp.c_fc`, `mlp.c_proj`), `ln_f`.
    pub fn new(vb: &VarBuilder, config: &Config) -> Result<Layers> {
        let (c, eps) = (config.n_embd, config.layer_norm_epsilon);
        if config.n_head == 0 || !c.is_multiple_of(config.n_head) {
            return Err(Error::value(
                "gpt2::Layers::new",
                "config",
                format!("n_head dividing n_embd = {c}"),
                config.n_head,
            ));
        }
        let wte = Embedding::with_init(&vb.pp("wte"), config.vocab_size, c, Init::Normal(INIT_STD))?;
        let wpe = Embedding::with_init(&vb.pp("wpe"), config.n_positions, c, Init::Normal(0.01))?;
        let h = (0..config.n_layer)
            .map(|i| Layer::new(&vb.pp("h").pp(i), config))
            .collect::<Result<Vec<_>>>()?;
        Ok(Layers {
            wte,
            wpe,
            h,
            ln_f: LayerNorm::new(&vb.pp("ln_f"), c, eps)?,
            config: config.clone(),
        })
    }

    /// The sizes.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The final layer norm's output (batch T, C) for `inputs` (`batch` rows of T ids, row
    /// after row; T at most `n_positions`; on the host or the device, [`Ids`]), and the tied
    /// head's table. `op` names the caller
    /// in errors.
    pub(crate) fn hidden<'p>(
        &self,
        op: &'static str,
        pass: &'p Pass,
        inputs: Ids<'_>,
        batch: usize,
    ) -> Result<(Var, &'p Var)> {
        let cfg = &self.config;
        if batch == 0 || inputs.is_empty() || !inputs.len().is_multiple_of(batch) {
            return Err(Error::value(
                op,
                "batch",
                format!("a positive divisor of the {} input ids", inputs.len()),
                batch,
            ));
        }
        let t = inputs.len() / batch;
        if t > cfg.n_positions {
            return Err(Error::value(
                op,
                "inputs",
                format!("rows of at most n_positions = {} tokens", cfg.n_positions),
                format!("{batch} rows of {t}"),
            ));
        }
        let wte = pass.var(self.wte.weight())?;
        let mut x = Var::embedding_rows(wte, pass.var(self.wpe.weight())?, inputs, batch)?; // (B T, C)
        for layer in &self.h {
            x = layer.forward(pass, &x, batch, t)?;
        }
        Ok((self.ln_f.forward(pass, &x)?, wte))
    }

    /// The mean next-token cross-entropy of `inputs` against `targets` (`batch` rows of T
    /// ids each): a () variable. The tied head and the loss run in row blocks, so the
    /// (B T, V) logits are never whole.
    pub fn loss<'i>(
        &self,
        pass: &Pass,
        inputs: impl Into<Ids<'i>>,
        targets: impl Into<Ids<'i>>,
        batch: usize,
    ) -> Result<Var> {
        let (h, wte) = self.hidden("gpt2::Layers::loss", pass, inputs.into(), batch)?;
        Var::head_cross_entropy(&h, wte, targets, None)
    }

    /// The logits (batch T, V) of every position of `inputs` (as [`Layers::loss`]).
    pub fn logits<'i>(&self, pass: &Pass, inputs: impl Into<Ids<'i>>, batch: usize) -> Result<Var> {
        let (h, wte) = self.hidden("gpt2::Layers::logits", pass, inputs.into(), batch)?;
        h.matmul(&wte.transpose(0, 1)?)
    }
}

impl Module for Layers {
    fn params(&self) -> Vec<Param> {
        let mut p = self.wte.params();
        p.extend(self.wpe.params());
        p.extend(self.h.params());
        p.extend(self.ln_f.params());
        p
    }
}

/// GPT-2's init of the projections into the residual stream: 0.02 / sqrt(2 n_layer).
fn residual_init(config: &Config) -> Init {
    Init::Normal(INIT_STD / ((2 * config.n_layer.max(1)) as f32).sqrt())
}

/// A GPT-2 projection made without its bias (only possible through a hand-built layer).
fn missing_bias(name: &'static str) -> Error {
    Error::value("gpt2::Layers", name, "a projection with a bias (GPT-2 has one)", "none")
}
