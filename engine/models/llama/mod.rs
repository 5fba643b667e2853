//! A Llama-style decoder (RMSNorm, rotary position embeddings, SwiGLU, grouped-query
//! attention, an untied head) loading Hugging Face `LlamaForCausalLM` files: its config
//! ([`Config`]) and its forward with a key/value cache on the engine's tensor ops
//! ([`Llama`]), generating through the op-by-op loop every model shares
//! ([`crate::generate::generate_eager_async`]) with any [`crate::generate::Sampling`] or
//! through compiled plans ([`crate::generate::Generator`]), and training on the tape
//! ([`train`]: [`Llama::loss_var`]).
//! Everything specific to the model is in this folder.
//!
//! ```
//! use wgsl_compute::generate::{Generate, Sampling};
//! use wgsl_compute::models::llama::Llama;
//! let ctx = wgsl_compute::Context::cpu();
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/models/llama-tiny-random"); // a test fixture
//! let model = Llama::load(&ctx, std::path::Path::new(dir))?;
//! let ids = model.generate(&[1, 17, 42], 4, Sampling::Greedy, |_| {})?;
//! assert_eq!(ids.len(), 4);
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

pub mod config;
pub mod model;
pub mod train;

pub use config::Config;
pub use model::{Cache, Llama};
