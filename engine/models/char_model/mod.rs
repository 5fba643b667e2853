//! A character-level language model on mixer layers, with its explicit backward chain:
//!
//!   x_0 = onehot(ids) E                 (B, T, Dm)   E (V, Dm)
//!   x_l = x_{l-1} + mixer_l(x_{l-1})     residual mixer layers
//!   logits = x_L W + c                   (B T, V)      W (Dm, V), c (V,)
//!   loss = mean cross-entropy against the next character
//!
//! The embedding is a one-hot matmul, so its gradient is onehot^T dx_0: no scatter kernel.
//! Trained with [`crate::train`] (cross-entropy, Adam, the character vocabulary) by
//! `examples/train_mingru.rs` and the page; the same forward recorded on the autograd tape
//! is `CharModel::loss_var` (`tape.rs`).

mod tape;

use crate::check::Rng;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::mixer::{MixerKind, MixerLayer, MixerPath};
use crate::ops::{add, linear, matmul, sum_last};
use crate::tensor::Tensor;
use crate::train::cross_entropy;

/// The model's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CharModelConfig {
    /// Which mixer every layer uses.
    pub kind: MixerKind,
    /// Materialised or angle-fused scans.
    pub path: MixerPath,
    /// Vocabulary size V.
    pub vocab: usize,
    /// Mixer layers.
    pub layers: usize,
    /// Residual width Dm.
    pub d_model: usize,
    /// Mixer state width D (a multiple of the mixer's block size).
    pub d_state: usize,
}

#[derive(Clone, Debug)]
/// A character language model: embedding, residual mixer layers, output head.
pub struct CharModel {
    /// Its sizes.
    pub config: CharModelConfig,
    /// (V, Dm).
    pub embed: Tensor,
    /// The mixer layers, input to output.
    pub layers: Vec<MixerLayer>,
    /// (Dm, V).
    pub head: Tensor,
    /// (V,).
    pub head_bias: Tensor,
}

/// A loss and the gradient of every parameter, in [`CharModel::params`] order.
#[derive(Debug)]
pub struct LossAndGrads {
    /// Mean cross-entropy in nats per character.
    pub loss: f32,
    /// One gradient per parameter, each of its parameter's shape.
    pub grads: Vec<Tensor>,
}

impl CharModel {
    /// Fresh weights from `seed`: embedding uniform in +-1, projections +-1/sqrt(fan in).
    pub fn init(ctx: &Context, config: CharModelConfig, seed: u64) -> Result<Self> {
        let op = "CharModel";
        if config.vocab < 2 || config.layers == 0 || config.d_model == 0 {
            return Err(Error::value(
                op,
                "config",
                "vocab >= 2, layers >= 1, d_model >= 1",
                format!("{config:?}"),
            ));
        }
        config.path.fused(config.kind)?;
        let (v, dm) = (config.vocab, config.d_model);
        // Checked before any host vector exists (the sizes are the caller's); the mixer
        // layers check their own.
        let n = crate::shape::numel(op, "config.vocab, config.d_model", &[v, dm])?;
        // n values uniform in +-scale (Rng::vec_range's draws), or an error where the
        // allocator refuses them.
        let uniform = |rng: &mut Rng, scale: f32, arg| -> Result<Vec<f32>> {
            let mut w = crate::tensor::host_vec(op, arg, n)?;
            w.extend((0..n).map(|_| rng.range(-1.0, 1.0) as f32 * scale));
            Ok(w)
        };
        let mut rng = Rng::new(seed);
        let embed = Tensor::from_slice(ctx, &[v, dm], &uniform(&mut rng, 1.0, "embed")?)?;
        let layers = (0..config.layers)
            .map(|_| {
                let mut layer = MixerLayer::init(ctx, config.kind, dm, config.d_state, &mut rng)?;
                layer.path = config.path;
                Ok(layer)
            })
            .collect::<Result<Vec<_>>>()?;
        let scale = 1.0 / (dm as f32).sqrt();
        let head = uniform(&mut rng, scale, "head")?;
        Ok(CharModel {
            config,
            embed,
            layers,
            head: Tensor::from_slice(ctx, &[dm, v], &head)?,
            head_bias: Tensor::zeros(ctx, &[v])?,
        })
    }

    /// Every parameter: the embedding, each layer's (w_in, b_in, w_out), the head and its bias.
    pub fn params(&self) -> Vec<&Tensor> {
        let mut p = vec![&self.embed];
        for l in &self.layers {
            p.extend(l.params());
        }
        p.push(&self.head);
        p.push(&self.head_bias);
        p
    }

    /// Number of scalar parameters.
    pub fn size(&self) -> usize {
        self.params().iter().map(|p| p.len()).sum()
    }

    /// (B, T) from `ids` in `batch` rows; every id below V.
    pub(crate) fn rows(&self, op: &'static str, ids: &[u32], batch: usize) -> Result<(usize, usize)> {
        if batch == 0 || ids.is_empty() || !ids.len().is_multiple_of(batch) {
            return Err(Error::value(
                op,
                "ids",
                format!("a non-empty multiple of the batch size {batch}"),
                ids.len(),
            ));
        }
        if let Some(&bad) = ids.iter().find(|&&i| i as usize >= self.config.vocab) {
            return Err(Error::value(
                op,
                "ids",
                format!("ids below the vocabulary size {}", self.config.vocab),
                bad,
            ));
        }
        Ok((batch, ids.len() / batch))
    }

    /// onehot(ids) (B T, V).
    pub(crate) fn onehot(&self, ids: &[u32]) -> Result<Tensor> {
        let v = self.config.vocab;
        // (B T, V) is checked before the host vector exists: ids.len() is the caller's.
        let n = crate::shape::numel("CharModel", "ids", &[ids.len(), v])?;
        let mut data = crate::tensor::host_vec("CharModel", "ids", n)?;
        data.resize(n, 0.0);
        for (r, &i) in ids.iter().enumerate() {
            data[r * v + i as usize] = 1.0;
        }
        Tensor::from_slice(self.embed.context(), &[ids.len(), v], &data)
    }

    /// Logits (B T, V) for `ids` (batch rows of T characters, row-major).
    pub fn logits(&self, ids: &[u32], batch: usize) -> Result<Tensor> {
        let (b, t) = self.rows("CharModel::logits", ids, batch)?;
        let mut x = matmul(&self.onehot(ids)?, &self.embed)?.reshape(&[b, t, self.config.d_model])?;
        for layer in &self.layers {
            let (y, _) = layer.forward(&x)?;
            x = add(&x, &y)?;
        }
        linear(
            &x.reshape(&[b * t, self.config.d_model])?,
            &self.head,
            Some(&self.head_bias),
        )
    }

    /// Mean next-character cross-entropy of `inputs` against `targets` (same length).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn loss(&self, inputs: &[u32], targets: &[u32], batch: usize) -> Result<f32> {
        pollster::block_on(self.loss_async(inputs, targets, batch))
    }

    /// [`CharModel::loss`] without blocking (the browser's form).
    pub async fn loss_async(&self, inputs: &[u32], targets: &[u32], batch: usize) -> Result<f32> {
        let ce = cross_entropy(&self.logits(inputs, batch)?, targets)?;
        Ok(sum_last(&ce.loss)?.to_vec_async().await?[0] / targets.len() as f32)
    }

    /// The loss and every parameter's gradient (forward, then the backward chain in reverse).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn loss_and_grads(&self, inputs: &[u32], targets: &[u32], batch: usize) -> Result<LossAndGrads> {
        pollster::block_on(self.loss_and_grads_async(inputs, targets, batch))
    }

    /// [`CharModel::loss_and_grads`] without blocking (the browser's form).
    pub async fn loss_and_grads_async(&self, inputs: &[u32], targets: &[u32], batch: usize) -> Result<LossAndGrads> {
        let (b, t) = self.rows("CharModel::loss_and_grads", inputs, batch)?;
        let (rows, dm) = (b * t, self.config.d_model);
        let onehot = self.onehot(inputs)?;
        let mut x = matmul(&onehot, &self.embed)?.reshape(&[b, t, dm])?;
        let mut tapes = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            let (y, tape) = layer.forward(&x)?;
            x = add(&x, &y)?;
            tapes.push(tape);
        }
        let x_last = x.reshape(&[rows, dm])?;
        let ce = cross_entropy(&linear(&x_last, &self.head, Some(&self.head_bias))?, targets)?;

        let d_head = matmul(&x_last.transpose(0, 1)?, &ce.grad)?;
        let d_head_bias = sum_last(&ce.grad.transpose(0, 1)?)?;
        let mut dx = matmul(&ce.grad, &self.head.transpose(0, 1)?)?.reshape(&[b, t, dm])?;
        let mut layer_grads = Vec::with_capacity(self.layers.len());
        for (layer, tape) in self.layers.iter().zip(&tapes).rev() {
            let g = layer.backward(tape, &dx)?;
            dx = add(&dx, &g.x)?;
            layer_grads.push(g);
        }
        let d_embed = matmul(&onehot.transpose(0, 1)?, &dx.reshape(&[rows, dm])?)?;

        let mut grads = vec![d_embed];
        for g in layer_grads.iter().rev() {
            grads.extend(g.params().into_iter().cloned());
        }
        grads.push(d_head);
        grads.push(d_head_bias);
        let loss = sum_last(&ce.loss)?.to_vec_async().await?[0] / rows as f32;
        Ok(LossAndGrads { loss, grads })
    }

    /// Draws `n` ids after `context` (at least one id), each from softmax(logits /
    /// `temperature`) of the last `window` ids, calling `on_id` as each is chosen. The
    /// temperature must be positive and finite (as for GPT-2's `Sampler`).
    pub async fn sample_async(
        &self,
        context: &[u32],
        n: usize,
        window: usize,
        temperature: f32,
        rng: &mut Rng,
        mut on_id: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        if context.is_empty() || window == 0 {
            return Err(Error::value(
                "CharModel::sample",
                "context / window",
                "at least one id and a window of at least one",
                format!("{} ids, window {window}", context.len()),
            ));
        }
        // The same rule as GPT-2's `Sampler::new`: a positive, finite temperature.
        if !(temperature > 0.0 && temperature.is_finite()) {
            return Err(Error::value(
                "CharModel::sample",
                "temperature",
                "a positive finite number",
                temperature,
            ));
        }
        let mut ids = context.to_vec();
        let v = self.config.vocab;
        for _ in 0..n {
            let logits = self
                .logits(&ids[ids.len().saturating_sub(window)..], 1)?
                .to_vec_async()
                .await?;
            let next = draw(&logits[logits.len() - v..], temperature, rng);
            on_id(next);
            ids.push(next);
        }
        Ok(ids.split_off(context.len()))
    }

    /// [`CharModel::sample_async`], blocking.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn sample(
        &self,
        context: &[u32],
        n: usize,
        window: usize,
        temperature: f32,
        rng: &mut Rng,
        on_id: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        pollster::block_on(self.sample_async(context, n, window, temperature, rng, on_id))
    }
}

/// A draw from softmax(logits / temperature) (temperature checked positive by the caller,
/// floored at 1e-3).
fn draw(logits: &[f32], temperature: f32, rng: &mut Rng) -> u32 {
    let m = logits.iter().fold(f32::MIN, |m, &x| m.max(x));
    let t = temperature.max(1e-3);
    let weights: Vec<f64> = logits.iter().map(|&x| (((x - m) / t) as f64).exp()).collect();
    let mut u = rng.uniform() * weights.iter().sum::<f64>();
    for (i, w) in weights.iter().enumerate() {
        if u < *w {
            return i as u32;
        }
        u -= w;
    }
    (weights.len() - 1) as u32
}

/// The most ids [`random_windows`] returns per vector (`rows * seq`): 2^28 ids, 1 GiB, far
/// above any batch a storage binding holds.
pub const MAX_WINDOW_IDS: usize = 1 << 28;

/// `rows` windows of `seq + 1` ids at random offsets of `ids`: (inputs, next-id targets), each
/// `rows * seq` ids, row-major. `ids` must be longer than `seq`, and `rows * seq` at most
/// [`MAX_WINDOW_IDS`].
pub fn random_windows(ids: &[u32], rows: usize, seq: usize, rng: &mut Rng) -> Result<(Vec<u32>, Vec<u32>)> {
    if ids.len() <= seq {
        return Err(Error::value(
            "random_windows",
            "ids",
            format!("more than seq = {seq} ids"),
            ids.len(),
        ));
    }
    // (rows, seq) come from a caller: an overflowing or unallocatable size is an error, not
    // an abort in the allocator.
    let too_large = || {
        Error::value(
            "random_windows",
            "rows * seq",
            format!("at most {MAX_WINDOW_IDS} ids"),
            format!("{rows} * {seq}"),
        )
    };
    let n = rows
        .checked_mul(seq)
        .filter(|&n| n <= MAX_WINDOW_IDS)
        .ok_or_else(too_large)?;
    let mut inputs = Vec::new();
    let mut targets = Vec::new();
    inputs.try_reserve_exact(n).map_err(|_| too_large())?;
    targets.try_reserve_exact(n).map_err(|_| too_large())?;
    for _ in 0..rows {
        let start = rng.below(ids.len() - seq);
        inputs.extend_from_slice(&ids[start..start + seq]);
        targets.extend_from_slice(&ids[start + 1..start + seq + 1]);
    }
    Ok((inputs, targets))
}
