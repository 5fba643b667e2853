//! GPT-2 in the browser: load a checkpoint from bytes, generate with a callback per token.
//!
//! The model is `wgsl_compute::models::gpt2` (safetensors loader, byte-level BPE tokenizer, forward
//! pass with a KV cache) on the page's context; generation samples (temperature, top-k, seed)
//! or takes the arg-max, through the compiled plans (`wgsl_compute::models::gpt2::Generator`: ids
//! chosen on the device, read back a chunk at a time), so the page repaints between chunks.

use std::cell::RefCell;
use std::rc::Rc;

use wgsl_compute::models::gpt2::{
    random_checkpoint, Config, Generator, Gpt2, Sampling, Tokenizer, Weights, END_OF_TEXT,
};
use wgsl_compute::{Context, DType, Result};

/// The page's GPT-2 status line.
pub const STATUS: &str =
    "GPT-2 (wgsl_compute::models::gpt2): sampled or greedy generation through compiled plans with a KV cache, GPT-2's byte-level BPE";

/// A GPT-2 model loaded on a context.
#[derive(Clone)]
pub struct Model {
    gpt2: Rc<Gpt2>,
    /// The matrices' dtype on the device, and the checkpoint's.
    dtype: DType,
    stored: DType,
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
            dtype,
            stored,
        })
    }

    /// A model of GPT-2's shape with `n_layer` layers, width `n_embd` and `n_head` heads
    /// (vocabulary 50257, context 1024) and seeded random weights, its matrices in `dtype`:
    /// the benchmark's models (`bench --only gpt2_sizes` builds the same ones natively).
    pub fn random(ctx: &Context, n_layer: usize, n_embd: usize, n_head: usize, dtype: DType) -> Result<Model> {
        let mut config = Config::default();
        (config.n_layer, config.n_embd, config.n_head) = (n_layer, n_embd, n_head);
        let bytes = random_checkpoint(&config, 1, DType::F32);
        let weights = Weights::from_safetensors(config, &bytes, "random")?;
        drop(bytes);
        Ok(Model {
            gpt2: Rc::new(Gpt2::with_dtype(ctx, &weights, dtype)?),
            dtype,
            stored: DType::F32,
        })
    }

    /// A generator of this model kept for timing: its plans are built on the first run and
    /// reused, as the native benchmark's are.
    pub fn timer(&self) -> Result<Timer> {
        Ok(Timer {
            generator: Rc::new(RefCell::new(Generator::new(&self.gpt2)?)),
        })
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
    /// Returns every generated id.
    pub async fn generate(
        &self,
        prompt: &str,
        n_tokens: usize,
        sampling: Sampling,
        mut on_token: impl FnMut(u32, &str),
    ) -> Result<Vec<u32>> {
        let tok = Tokenizer::gpt2()?;
        let mut ids = tok.encode(prompt);
        if ids.is_empty() {
            ids.push(END_OF_TEXT);
        }
        let mut pending = Vec::<u8>::new();
        let mut failed = None;
        let out = self
            .gpt2
            // Plans even on a software adapter (SwiftShader): the page shows the compiled path.
            .generate_compiled_async(&ids, n_tokens, sampling, |id| match tok.decode_bytes(&[id]) {
                Ok(bytes) => {
                    pending.extend(bytes);
                    let valid = match std::str::from_utf8(&pending) {
                        Ok(s) => s.len(),
                        Err(e) => e.valid_up_to(),
                    };
                    on_token(id, &String::from_utf8_lossy(&pending[..valid]));
                    pending.drain(..valid);
                }
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
}

/// Greedy generation from token ids through one kept [`Generator`], for timing from JS.
#[derive(Clone)]
pub struct Timer {
    generator: Rc<RefCell<Generator>>,
}

impl Timer {
    /// `n` greedy tokens after `prompt`; fails while another run of this timer is going.
    pub async fn run(&self, prompt: &[u32], n: usize) -> Result<Vec<u32>> {
        let mut g = self
            .generator
            .try_borrow_mut()
            .map_err(|_| wgsl_compute::Error::Unsupported {
                op: "Timer::run",
                message: "another run of this timer is still going".into(),
            })?;
        g.generate_async(prompt, n, Sampling::Greedy, |_| {}).await
    }
}
