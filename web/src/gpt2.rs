//! GPT-2 in the browser: load a checkpoint from bytes, generate with a callback per token.
//!
//! The model is `wgsl_compute::models::gpt2` (safetensors loader, byte-level BPE tokenizer, forward
//! pass with a KV cache) on the page's context; generation samples (temperature, top-k, seed)
//! or takes the arg-max, through the compiled plans (`wgsl_compute::models::gpt2::Generator`: ids
//! chosen on the device, read back a chunk at a time), so the page repaints between chunks.
//! The generator and its plans are built on the first generation and kept with the model.
//! A generation ends early when the model's [`Stop`] is requested: checked between tokens.
//! [`Tuner`] fine-tunes a checkpoint on text through the autograd tape, one step per promise.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;

use wgsl_compute::autograd::Tape;
use wgsl_compute::generate::{choose, Sampler, Sampling, Streaming};
use wgsl_compute::models::gpt2::{
    random_checkpoint, train::windows, Config, Generator, Gpt2, StepOptions, TextStream, Tokenizer, Trainable, Weights,
    END_OF_TEXT,
};
use wgsl_compute::train::{Adam, Optimizer};
use wgsl_compute::{Context, DType, Error, Result, Rng};

/// The page's GPT-2 status line.
pub const STATUS: &str =
    "GPT-2 (wgsl_compute::models::gpt2): sampled or greedy generation through compiled plans with a KV cache, GPT-2's byte-level BPE";

/// The page's Stop for a generation: a flag the generation checks between tokens. Shared by
/// the clones of a [`Model`]; each generation clears it as it starts.
#[derive(Clone, Default)]
pub struct Stop(Rc<Cell<bool>>);

impl Stop {
    /// Asks the running generation to end after the token it is on.
    pub fn request(&self) {
        self.0.set(true);
    }

    /// Whether a stop was asked since the generation started.
    pub fn requested(&self) -> bool {
        self.0.get()
    }

    fn clear(&self) {
        self.0.set(false);
    }
}

/// `run` to its end, or `None` as soon as it is polled after `stop` was requested. Dropping a
/// generation's future between two awaits is safe: its in-flight reads own their staging
/// buffers, and the next generation resets the decode state and the KV cache positions.
async fn until_stopped<F: Future>(run: F, stop: &Stop) -> Option<F::Output> {
    let mut run = pin!(run);
    std::future::poll_fn(|cx| {
        if stop.requested() {
            return Poll::Ready(None);
        }
        run.as_mut().poll(cx).map(Some)
    })
    .await
}

/// A GPT-2 model loaded on a context.
#[derive(Clone)]
pub struct Model {
    gpt2: Rc<Gpt2>,
    /// The compiled plans' generator, built on the first generation and kept: a plan capture
    /// per Generate click cost the page its first tokens. `None` until then, or where plans
    /// cannot be built (the CPU reference).
    generator: Rc<RefCell<Option<Generator>>>,
    /// The matrices' dtype on the device, and the checkpoint's.
    dtype: DType,
    stored: DType,
    /// Ends a running generation early (the page's Stop button).
    pub stop: Stop,
}

impl Model {
    /// Loads a model from the Hugging Face `config.json` text and `model.safetensors` bytes
    /// (F32, F16 or BF16 tensors), its matrices in `dtype` on the device, or in the dtype the
    /// checkpoint stores them in when `None` (the shipped model: F16), as the `gpt2` example's
    /// `--dtype` does. A file that is not a GPT-2 checkpoint is an `Error::Io` naming the file
    /// or tensor.
    pub fn load(ctx: &Context, config_json: &str, weights: &[u8], dtype: Option<DType>) -> Result<Model> {
        let config = Config::from_json(config_json, "config.json")?;
        let weights = Weights::from_safetensors(config, weights, "model.safetensors")?;
        let stored = weights.dtype;
        let dtype = dtype.unwrap_or(stored);
        Ok(Model {
            gpt2: Rc::new(Gpt2::with_dtype(ctx, &weights, dtype)?),
            generator: Rc::default(),
            dtype,
            stored,
            stop: Stop::default(),
        })
    }

    /// A model of GPT-2's shape with `n_layer` layers, width `n_embd` and `n_head` heads
    /// (vocabulary 50257, context 1024) and seeded random weights, its matrices in `dtype`:
    /// the benchmark's models (`bench --only gpt2_sizes` builds the same ones natively).
    pub fn random(ctx: &Context, n_layer: usize, n_embd: usize, n_head: usize, dtype: DType) -> Result<Model> {
        let mut config = Config::default();
        (config.n_layer, config.n_embd, config.n_head) = (n_layer, n_embd, n_head);
        let bytes = random_checkpoint(&config, 1, DType::F32)?;
        let weights = Weights::from_safetensors(config, &bytes, "random")?;
        drop(bytes);
        Ok(Model {
            gpt2: Rc::new(Gpt2::with_dtype(ctx, &weights, dtype)?),
            generator: Rc::default(),
            dtype,
            stored: DType::F32,
            stop: Stop::default(),
        })
    }

    /// Decode steps a submission from now on (`Streaming::Chunks(chunk)`; the library's
    /// default, 8, until set): what the Dawn runner varies to see where the time goes.
    pub fn set_chunk(&self, chunk: usize) -> Result<()> {
        let mut slot = self.generator.try_borrow_mut().map_err(|_| Error::Unsupported {
            op: "Gpt2::set_chunk",
            message: "a generation of this model is still running".into(),
        })?;
        if slot.is_none() && self.gpt2.context().is_gpu() {
            *slot = Some(Generator::new(&self.gpt2)?);
        }
        if let Some(g) = slot.as_mut() {
            g.set_streaming(Streaming::Chunks(chunk));
        }
        Ok(())
    }

    /// One line on the model (layers, heads, width, context, vocabulary, the weights' dtype).
    pub fn describe(&self) -> String {
        let c = self.gpt2.config();
        let how = if self.dtype == self.stored {
            "as stored".to_string()
        } else {
            format!("stored {}, converted on the device", self.stored)
        };
        format!(
            "{} layers, {} heads, width {}, context {}, vocabulary {}, weights {} ({how})",
            c.n_layer, c.n_head, c.n_embd, c.n_positions, c.vocab_size, self.dtype
        )
    }

    /// Generation of `n_tokens` after `prompt` by `sampling` (an empty prompt starts from
    /// `<|endoftext|>`), calling `on_token(id, text)` as each token is chosen; `text` is the
    /// newly completed UTF-8 (a character split over tokens comes with its last token).
    /// Returns every generated id: fewer than `n_tokens` when [`Model::stop`] was requested.
    /// `pause` is awaited after each token of the op-by-op path (the CPU reference), whose
    /// steps never wait on a device: the page passes a macrotask there so that it repaints and
    /// hears a Stop click between tokens.
    pub async fn generate<P: Future<Output = ()>>(
        &self,
        prompt: &str,
        n_tokens: usize,
        sampling: Sampling,
        pause: impl FnMut() -> P,
        mut on_token: impl FnMut(u32, &str),
    ) -> Result<Vec<u32>> {
        let tok = Tokenizer::gpt2()?;
        let mut ids = tok.encode(prompt);
        if ids.is_empty() {
            ids.push(END_OF_TEXT);
        }
        let mut text = TextStream::new(tok);
        let mut failed = None;
        let out = self
            .generate_ids(&ids, n_tokens, sampling, pause, |id| match text.push(id) {
                Ok(piece) => on_token(id, &piece),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            })
            .await?;
        match failed {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// `n_tokens` ids after the prompt's ids by `sampling`, `on_token` called with each:
    /// through the kept generator's compiled plans (even on a software adapter such as
    /// SwiftShader: the page shows the compiled path), op by op where they cannot run (then
    /// awaiting `pause` after each token). Ends early, with the ids so far, once
    /// [`Model::stop`] is requested.
    pub async fn generate_ids<P: Future<Output = ()>>(
        &self,
        prompt: &[u32],
        n_tokens: usize,
        sampling: Sampling,
        pause: impl FnMut() -> P,
        mut on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        let busy = || Error::Unsupported {
            op: "Gpt2::generate",
            message: "another generation of this model is still running".into(),
        };
        let mut slot = self.generator.try_borrow_mut().map_err(|_| busy())?;
        self.stop.clear();
        if slot.is_none() && self.gpt2.context().is_gpu() {
            match Generator::new(&self.gpt2) {
                Ok(g) => *slot = Some(g),
                Err(Error::Unsupported { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        let Some(g) = slot.as_mut() else {
            return self.generate_eager(prompt, n_tokens, sampling, pause, on_token).await;
        };
        let mut out = Vec::with_capacity(n_tokens);
        let run = g.generate_async(prompt, n_tokens, sampling, |id| {
            out.push(id);
            on_token(id);
        });
        match until_stopped(run, &self.stop).await {
            None => Ok(out),
            // A sampler the device does not run (top-k above its limit) is refused before any
            // token is chosen: the call then goes op by op, as the library's own fallback does.
            Some(Err(Error::Unsupported { .. })) => {
                drop(slot);
                self.generate_eager(prompt, n_tokens, sampling, pause, on_token).await
            }
            Some(r) => r,
        }
    }

    /// The op-by-op decode loop of `Gpt2::generate_eager_async` (the same steps, the same
    /// ids), checking [`Model::stop`] and awaiting `pause` between tokens.
    async fn generate_eager<P: Future<Output = ()>>(
        &self,
        prompt: &[u32],
        n: usize,
        sampling: Sampling,
        mut pause: impl FnMut() -> P,
        mut on_token: impl FnMut(u32),
    ) -> Result<Vec<u32>> {
        let limit = self.gpt2.config().n_positions;
        // The library's length check, word for word: the page reads the prompt's length from it.
        if prompt.is_empty() || n > limit || prompt.len() > limit - n {
            return Err(Error::value(
                "Gpt2::generate",
                "prompt + tokens",
                format!("1..={limit} positions (n_positions)"),
                format!("{} + {n}", prompt.len()),
            ));
        }
        let mut sampler = Sampler::new(sampling)?;
        let mut cache = self.gpt2.new_cache()?;
        let mut out = Vec::with_capacity(n);
        let mut input = prompt.to_vec();
        while out.len() < n && !self.stop.requested() {
            let step = self.gpt2.step(&input, &mut cache, StepOptions::default())?;
            let id = choose(&step.logits, &mut sampler).await?;
            on_token(id);
            out.push(id);
            input = vec![id];
            pause().await;
        }
        Ok(out)
    }
}

/// Rows per fine-tuning step in the page, and tokens per row (at most the model's context).
pub const TUNE_BATCH: usize = 2;
pub const TUNE_CONTEXT: usize = 64;
/// Adam's learning rate for the page's fine-tune (the `gpt2_finetune` example's default).
pub const TUNE_LR: f32 = 1e-3;

/// A fine-tune of a checkpoint on text in the page: the `gpt2_finetune` example's loop
/// (`models::gpt2::Trainable` on the autograd tape, Adam in place), one step per promise.
pub struct Tuner {
    ctx: Context,
    model: Trainable,
    adam: Adam,
    tokens: Vec<u32>,
    context: usize,
    rng: Rng,
    losses: Vec<f32>,
    stored: DType,
}

impl Tuner {
    /// A tuner of the checkpoint (`config.json` text, `model.safetensors` bytes) on the
    /// first `corpus` tokens of `text`, which must hold more than one row of tokens.
    pub fn new(ctx: &Context, config_json: &str, weights: &[u8], text: &str, corpus: usize) -> Result<Tuner> {
        let config = Config::from_json(config_json, "config.json")?;
        let weights = Weights::from_safetensors(config, weights, "model.safetensors")?;
        let context = TUNE_CONTEXT.min(weights.config.n_positions);
        // Only the head of the text is needed: about 4 bytes a token, with room to spare.
        let mut end = text.len().min(corpus.saturating_mul(8).max(1024));
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let mut tokens = Tokenizer::gpt2()?.encode(&text[..end]);
        tokens.truncate(corpus.max(context + 1));
        if tokens.len() <= context {
            return Err(Error::value(
                "Gpt2Tuner",
                "text",
                format!("more than {context} tokens"),
                tokens.len(),
            ));
        }
        let model = Trainable::new(ctx, &weights)?;
        let adam = Adam::new(&model.params().tensors(), TUNE_LR)?;
        Ok(Tuner {
            ctx: ctx.clone(),
            model,
            adam,
            tokens,
            context,
            rng: Rng::new(1),
            losses: vec![],
            stored: weights.dtype,
        })
    }

    /// One line: parameters, the text's tokens, the batch, Adam's rate.
    pub fn describe(&self) -> String {
        format!(
            "{:.1}M parameters in f32; {} tokens of text; batches of {TUNE_BATCH} x {}, Adam {TUNE_LR}",
            self.model.parameter_count() as f64 / 1e6,
            self.tokens.len(),
            self.context
        )
    }

    /// One Adam step on random windows of the text; returns its loss (before the update).
    pub async fn step(&mut self) -> Result<f32> {
        let last = self.tokens.len() - self.context - 1;
        let starts: Vec<usize> = (0..TUNE_BATCH).map(|_| self.rng.below(last + 1)).collect();
        let (x, y) = windows(&self.tokens, &starts, self.context)?;
        let tape = Tape::new(&self.ctx);
        let vars = self.model.vars(&tape)?;
        let loss = self.model.loss_var(&vars, &x, &y, TUNE_BATCH)?; // ()
        self.adam.step_vars(&vars, &loss.backward()?)?;
        let value = loss.tensor().to_vec_async().await?[0];
        self.losses.push(value);
        Ok(value)
    }

    /// Every step's loss so far.
    pub fn losses(&self) -> &[f32] {
        &self.losses
    }

    /// The tuned parameters as a model to generate with, its matrices in the dtype the
    /// checkpoint stored them in.
    pub async fn model(&self) -> Result<Model> {
        let weights = self.model.weights_async().await?;
        Ok(Model {
            gpt2: Rc::new(Gpt2::with_dtype(&self.ctx, &weights, self.stored)?),
            generator: Rc::default(),
            dtype: self.stored,
            stored: self.stored,
            stop: Stop::default(),
        })
    }
}
