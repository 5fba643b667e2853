//! The op-by-op generation loop every model shares: the prompt as one step, then one step a
//! token through the model's cache, each token chosen on the host ([`choose`]) and handed to
//! the caller as soon as it is chosen. A model implements [`Stepper`] (its cache and one
//! step's logits) and gets [`generate_eager_async`]; models with compiled plans implement
//! [`crate::generate::Decoder`] too.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::generate::{choose, Sampler, Sampling};
use crate::tensor::Tensor;

/// A model that runs op by op through a cache of the positions it has seen.
pub trait Stepper {
    /// The model's per-sequence cache (keys and values, recurrent state, ...).
    type Cache;

    /// How errors of bad input to the model's generation name it, e.g. `"Gpt2::generate"`.
    const OP: &'static str;

    /// The context the model's tensors live on.
    fn context(&self) -> &Context;

    /// Longest sequence, prompt and generated tokens together (the cache's capacity).
    fn positions(&self) -> usize;

    /// Token ids are below this.
    fn vocab_size(&self) -> usize;

    /// An empty cache for one sequence of up to [`Stepper::positions`] tokens.
    fn new_cache(&self) -> Result<Self::Cache>;

    /// The logits (1, V) of the position after `ids`, the tokens that follow those `cache`
    /// holds; their keys and values (or state) join the cache.
    fn next_logits(&self, ids: &[u32], cache: &mut Self::Cache) -> Result<Tensor>;
}

/// Generates `n` tokens after `prompt` (>= 1 token) op by op, calling `on_token` with each id
/// as soon as it is chosen. Returns the new ids. `op` names the caller in errors.
pub async fn generate_eager_async<M: Stepper>(
    op: &'static str,
    model: &M,
    prompt: &[u32],
    n: usize,
    sampling: Sampling,
    mut on_token: impl FnMut(u32),
) -> Result<Vec<u32>> {
    check_prompt(op, model, prompt, n)?;
    let mut sampler = Sampler::new(sampling)?;
    let mut cache = model.new_cache()?;
    let mut out = Vec::with_capacity(n);
    let mut input = prompt.to_vec();
    while out.len() < n {
        let logits = model.next_logits(&input, &mut cache)?;
        let id = choose(&logits, &mut sampler).await?;
        on_token(id);
        out.push(id);
        input = vec![id];
    }
    Ok(out)
}

/// A generation of `n` tokens after `prompt` suits `model`: the prompt holds at least one
/// token, prompt and new tokens fit its positions (checked, no overflow), and every id is
/// below its vocabulary size. Both loops (this one and [`crate::generate::Generator`]'s)
/// check through here; `op` names the caller in errors.
pub(crate) fn check_prompt<M: Stepper>(op: &'static str, model: &M, prompt: &[u32], n: usize) -> Result<()> {
    let (limit, vocab_size) = (model.positions(), model.vocab_size());
    if prompt.is_empty() || n > limit || prompt.len() > limit - n {
        return Err(Error::value(
            op,
            "prompt + tokens",
            format!("1..={limit} positions (n_positions)"),
            format!("{} + {n}", prompt.len()),
        ));
    }
    if let Some(&bad) = prompt.iter().find(|&&id| id as usize >= vocab_size) {
        return Err(Error::value(op, "prompt", format!("token ids below {vocab_size}"), bad));
    }
    Ok(())
}
