//! Training a character-level minGRU model in the page: the same `wgsl_compute::train` pieces as
//! `examples/train_mingru.rs` (mixer layers with their backward chain, cross-entropy, Adam on
//! the device), driven one step per promise so the page repaints between steps.

use wgsl_compute::check::Rng;
use wgsl_compute::mixer::{MixerKind, MixerPath};
use wgsl_compute::models::{random_windows, CharModel, CharModelConfig};
use wgsl_compute::train::{Adam, CharVocab};
use wgsl_compute::{Context, Error, Result, Tensor};

/// The page's model: 2 residual mixer layers (width and batch size chosen in the page), rows
/// of 64 characters, Adam at 3e-3.
pub const LAYERS: usize = 2;
pub const SEQ: usize = 64;
pub const LR: f32 = 3e-3;

/// A model, its optimiser and its text.
pub struct Trainer {
    model: CharModel,
    adam: Adam,
    vocab: CharVocab,
    ids: Vec<u32>,
    rng: Rng,
    losses: Vec<f32>,
    batch: usize,
}

impl Trainer {
    /// A fresh model of `mixer` (`mingru`, `signed`, `rotation`, `givens` or `givens:K`) and
    /// `width` (model and state width) on `text`, which must be longer than one batch row;
    /// each step trains on `batch` rows.
    pub fn new(ctx: &Context, text: &str, mixer: &str, width: usize, batch: usize, seed: u64) -> Result<Trainer> {
        let kind = MixerKind::parse(mixer)?;
        if batch == 0 {
            return Err(Error::value("Trainer", "batch", "at least 1 row", batch));
        }
        let vocab = CharVocab::from_text(text)?;
        let ids = vocab.encode(text)?;
        if ids.len() <= SEQ + 1 {
            return Err(Error::value(
                "Trainer",
                "text",
                format!("more than {} characters", SEQ + 1),
                ids.len(),
            ));
        }
        let config = CharModelConfig {
            kind,
            path: MixerPath::Auto,
            vocab: vocab.len(),
            layers: LAYERS,
            d_model: width,
            d_state: width,
        };
        let model = CharModel::init(ctx, config, seed)?;
        let adam = Adam::new(&model.params(), LR)?;
        Ok(Trainer {
            model,
            adam,
            vocab,
            ids,
            rng: Rng::new(seed ^ 0x5eed),
            losses: Vec::new(),
            batch,
        })
    }

    /// One line: mixer, layers, widths, parameters, vocabulary, text length.
    pub fn describe(&self) -> String {
        let c = &self.model.config;
        format!(
            "{} layers of {}, width {}, {} parameters; vocabulary {}, {} characters; batches of {} x {SEQ}, Adam {LR}",
            c.layers,
            c.kind,
            c.d_model,
            self.model.size(),
            self.vocab.len(),
            self.ids.len(),
            self.batch
        )
    }

    /// One Adam step on a random batch; returns its loss (before the update).
    pub async fn step(&mut self) -> Result<f32> {
        let (inputs, targets) = random_windows(&self.ids, self.batch, SEQ, &mut self.rng)?;
        let lg = self.model.loss_and_grads_async(&inputs, &targets, self.batch).await?;
        let grads: Vec<&Tensor> = lg.grads.iter().collect();
        self.adam.step(&self.model.params(), &grads)?;
        self.losses.push(lg.loss);
        Ok(lg.loss)
    }

    /// Every step's loss so far.
    pub fn losses(&self) -> &[f32] {
        &self.losses
    }

    /// `n` characters sampled after `prompt` at `temperature` (characters outside the
    /// vocabulary are an error naming them).
    pub async fn sample(&mut self, prompt: &str, n: usize, temperature: f32) -> Result<String> {
        let mut context = self.vocab.encode(prompt)?;
        if context.is_empty() {
            context.push(self.ids[0]);
        }
        let ids = self
            .model
            .sample_async(&context, n, SEQ, temperature, &mut self.rng, |_| {})
            .await?;
        Ok(self.vocab.decode(&ids))
    }
}
