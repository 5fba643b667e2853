//! [`VarBuilder`]: makes a model's parameters under dotted paths, fresh from a seed or taken
//! from a checkpoint, and collects them in one [`ParamStore`] in creation order.

use std::cell::RefCell;
use std::rc::Rc;

use super::init::Init;
use super::module::Param;
use crate::check::Rng;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::train::ParamStore;

/// What every builder of one model shares: where values come from and what was made.
struct Shared {
    ctx: Context,
    rng: Rng,
    /// A checkpoint to take every parameter from (None: fresh values from `rng`).
    source: Option<ParamStore>,
    made: ParamStore,
}

/// Makes parameters under a path prefix. Cloning, [`VarBuilder::pp`] and the builders it
/// returns share one store and one generator, so a model is made by handing a child builder
/// to each layer:
///
/// ```
/// use wgsl_compute::nn::{Linear, Module, VarBuilder};
/// let ctx = wgsl_compute::Context::cpu();
/// let vb = VarBuilder::new(&ctx, 42);
/// let fc = Linear::new(&vb.pp("h").pp(0).pp("mlp").pp("c_fc"), 4, 16)?;
/// assert_eq!(fc.param_names(), ["h.0.mlp.c_fc.weight", "h.0.mlp.c_fc.bias"]);
/// let checkpoint = vb.store().to_bytes()?;            // safetensors, these names
/// let again = VarBuilder::from_bytes(&ctx, &checkpoint, "checkpoint")?;
/// let same = Linear::new(&again.pp("h").pp(0).pp("mlp").pp("c_fc"), 4, 16)?; // its values
/// # let _ = same;
/// # Ok::<(), wgsl_compute::Error>(())
/// ```
#[derive(Clone)]
pub struct VarBuilder {
    shared: Rc<RefCell<Shared>>,
    prefix: String,
}

impl std::fmt::Debug for VarBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.shared.borrow();
        write!(f, "VarBuilder(`{}`, {} made)", self.prefix, s.made.len())
    }
}

impl VarBuilder {
    /// A builder of fresh parameters on `ctx`, drawn from a generator seeded with `seed`.
    pub fn new(ctx: &Context, seed: u64) -> Self {
        Self::with_source(ctx, Rng::new(seed), None)
    }

    /// A builder that takes every parameter from `checkpoint` by its full name (the
    /// tensors are shared, not copied); a name the checkpoint lacks, or a shape that differs,
    /// is an error naming the parameter. Inits are ignored.
    pub fn from_store(checkpoint: ParamStore) -> Result<Self> {
        let Some(first) = checkpoint.tensors().first().map(|t| t.context().clone()) else {
            return Err(Error::value(
                "VarBuilder::from_store",
                "checkpoint",
                "at least one tensor",
                "an empty store",
            ));
        };
        Ok(Self::with_source(&first, Rng::new(0), Some(checkpoint)))
    }

    /// [`VarBuilder::from_store`] of a safetensors file's bytes, uploaded to `ctx`; `what`
    /// names the file in errors.
    pub fn from_bytes(ctx: &Context, bytes: &[u8], what: &str) -> Result<Self> {
        Self::from_store(ParamStore::from_bytes(ctx, bytes, what)?)
    }

    fn with_source(ctx: &Context, rng: Rng, source: Option<ParamStore>) -> Self {
        VarBuilder {
            shared: Rc::new(RefCell::new(Shared {
                ctx: ctx.clone(),
                rng,
                source,
                made: ParamStore::new(),
            })),
            prefix: String::new(),
        }
    }

    /// A builder whose names start with this one's prefix and `part` (`"h"`, `0`, ...).
    pub fn pp(&self, part: impl std::fmt::Display) -> Self {
        VarBuilder {
            shared: self.shared.clone(),
            prefix: self.full(&part.to_string()),
        }
    }

    /// The path so far (`"h.0.mlp"`; empty at the root).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The context the parameters live on.
    pub fn context(&self) -> Context {
        self.shared.borrow().ctx.clone()
    }

    fn full(&self, name: &str) -> String {
        match self.prefix.is_empty() {
            true => name.to_string(),
            false => format!("{}.{name}", self.prefix),
        }
    }

    /// Parameter `name` under this prefix, of `shape`: drawn from `init`, or taken from the
    /// checkpoint. A name made twice is an error.
    pub fn get(&self, name: &str, shape: &[usize], init: Init) -> Result<Param> {
        let op = "VarBuilder::get";
        let full = self.full(name);
        let mut s = self.shared.borrow_mut();
        let n = crate::shape::numel(op, "shape", shape)?;
        let tensor = match &s.source {
            Some(src) => {
                let Some(t) = src.get(&full) else {
                    return Err(Error::value(
                        op,
                        "name",
                        format!("a tensor `{full}` of shape {shape:?} in the checkpoint"),
                        format!("none (the checkpoint has {} tensors)", src.len()),
                    ));
                };
                if t.shape() != shape {
                    return Err(Error::shape(
                        op,
                        "checkpoint",
                        format!("{shape:?} for `{full}`"),
                        t.shape(),
                    ));
                }
                t.clone()
            }
            None => {
                let values = init.values(&mut s.rng, n, &full)?;
                Tensor::from_slice(&s.ctx, shape, &values)?
            }
        };
        s.made.insert(full.clone(), tensor.clone())?;
        Ok(Param::new(full, tensor))
    }

    /// Every parameter made so far by this builder and those sharing it, in creation order
    /// (the tensors are shared: an optimiser stepping them updates the layers).
    pub fn store(&self) -> ParamStore {
        self.shared.borrow().made.clone()
    }
}
