//! Generation, for any model: choosing the next token ([`sampling`]: greedy or seeded top-k
//! on the host), its device twin and the per-sequence state a decode plan reads
//! ([`device`]: [`DecodeState`], the device sampler, `shaders/generate/`), the op-by-op loop
//! every model shares ([`eager`]: [`generate_eager_async`] over a model that implements
//! [`Stepper`]), and the decode loop over compiled plans ([`generator`]: [`Generator`] over a
//! model that implements [`Decoder`]; [`generate_async`] takes it where a plan can be built
//! and the op-by-op loop otherwise).
//!
//! Above [`crate::ops`] and [`crate::plan`], below [`crate::models`]: a model implements
//! [`Stepper`] (GPT-2 and the Llama-style decoder do) and, for compiled plans, [`Decoder`]
//! (GPT-2, in `models::gpt2::compiled`); nothing here names a model.
//!
//! ```no_run
//! use wgsl_compute::generate::{Generator, Sampling};
//! use wgsl_compute::models::gpt2::{Gpt2, Weights};
//! let ctx = wgsl_compute::Context::new()?;
//! let model = Gpt2::new(&ctx, &Weights::load(std::path::Path::new("assets/models/tiny-random"))?)?;
//! let mut g = Generator::new(&model)?;                // captures the decode plan
//! let ids = g.generate(&[464, 3290], 8, Sampling::recommended(3), |_| {})?;
//! assert_eq!(ids.len(), 8);
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

pub(crate) mod at_state;
pub mod device;
pub mod eager;
pub mod generator;
pub(crate) mod head;
pub(crate) mod methods;
pub(crate) mod project;
pub mod sampling;

pub(crate) use at_state::{attention_decode, row_at_state, Pick, Queries};
pub use device::{sample, DecodeState, DEVICE_TOP_K_MAX};
pub use eager::{generate_eager_async, Stepper};
pub use generator::{generate_async, Decoder, Generator, Streaming};
pub(crate) use head::{head, HEAD_MAX_C};
pub use methods::Generate;
pub(crate) use project::{ln_matvec, Project, Prologue};
pub use sampling::{argmax, choose, Sampler, Sampling};
