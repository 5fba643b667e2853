//! GPT-2: config, safetensors weights ([`crate::io`]), the byte-level BPE tokenizer, the
//! forward pass on the engine's ops with a key/value cache, its fused decode kernels, and
//! generation ([`crate::generate`]'s [`Decoder`](crate::generate::Decoder), implemented in
//! [`compiled`]).
//!
//! ```no_run
//! use wgsl_compute::generate::{Generate, Sampling};
//! use wgsl_compute::models::gpt2::{Gpt2, Tokenizer, Weights};
//! let ctx = wgsl_compute::Context::new()?;
//! let weights = Weights::load(std::path::Path::new("assets/models/tiny-random"))?;
//! let model = Gpt2::new(&ctx, &weights)?;
//! let tok = Tokenizer::gpt2()?;
//! let ids = model.generate(&tok.encode("Hello"), 5, Sampling::Greedy, |_| {})?;
//! println!("{}", tok.decode(&ids)?);
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

pub mod compiled;
pub mod config;
pub(crate) mod decode;
pub mod generate;
pub mod kv_cache;
pub mod layers;
pub mod model;
pub mod reference;
pub mod shipped;
pub mod text_stream;
pub mod tiny;
pub mod tokenizer;
pub mod train;
pub mod weights;

pub use compiled::Generator;
pub use config::Config;
pub use kv_cache::KvCache;
pub use model::{Gpt2, Step, StepOptions};
pub use shipped::Shipped;
pub use text_stream::TextStream;
pub use tiny::{random_checkpoint, tiny_random_checkpoint, write_tiny_random, TINY_SEED};
pub use tokenizer::{Tokenizer, END_OF_TEXT};
pub use train::Trainable;
pub use weights::{Block, Weights};
