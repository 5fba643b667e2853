//! GPT-2's [`Stepper`] (its KV cache and one step's logits): what the op-by-op loop every
//! model shares runs, and with [`crate::generate::Decoder`] (`compiled.rs`) what gives GPT-2
//! the generation methods of [`crate::generate::Generate`].

use super::kv_cache::KvCache;
use super::model::{Gpt2, StepOptions};
use crate::context::Context;
use crate::error::Result;
use crate::generate::Stepper;
use crate::tensor::Tensor;

impl Stepper for Gpt2 {
    type Cache = KvCache;
    const OP: &'static str = "Gpt2::generate";

    fn context(&self) -> &Context {
        Gpt2::context(self)
    }

    fn positions(&self) -> usize {
        self.config().n_positions
    }

    fn vocab_size(&self) -> usize {
        self.config().vocab_size
    }

    fn new_cache(&self) -> Result<KvCache> {
        Gpt2::new_cache(self)
    }

    fn next_logits(&self, ids: &[u32], cache: &mut KvCache) -> Result<Tensor> {
        Ok(self.step(ids, cache, StepOptions::default())?.logits)
    }
}
