//! [`Pass`]: one forward's parameters, as leaves of a tape (training) or as constants
//! (evaluation), found by name.

use std::collections::HashMap;

use super::module::{Module, Param};
use crate::autograd::{Tape, Var};
use crate::error::{Error, Result};

/// The parameters of one forward pass, by name, and its mode. A layer's forward asks the
/// pass for its parameters' variables ([`Pass::var`]); a training pass also turns dropout on.
#[derive(Debug)]
pub struct Pass {
    /// Every parameter's variable, in the module's order (the optimiser's).
    vars: Vec<Var>,
    /// Name -> index in `vars`.
    index: HashMap<String, usize>,
    training: bool,
    /// Seed of the next dropout mask drawn in this pass.
    seed: std::cell::Cell<u64>,
}

impl Pass {
    /// A training pass: every parameter of `model` a leaf of `tape` sharing its buffer.
    pub fn train(tape: &Tape, model: &(impl Module + ?Sized)) -> Result<Pass> {
        let params = model.params();
        let vars = params
            .iter()
            .map(|p| tape.var(p.tensor()))
            .collect::<Result<Vec<_>>>()?;
        Self::from_vars(model, vars, true)
    }

    /// An evaluation pass: every parameter a constant (nothing recorded, no dropout).
    pub fn eval(model: &(impl Module + ?Sized)) -> Pass {
        let params = model.params();
        let vars = params.iter().map(|p| Var::constant(p.tensor())).collect();
        Self::build(&params, vars, false)
    }

    /// A pass over variables made elsewhere, one per parameter of `model` in its order and of
    /// its shape: inside `CompiledStep::capture`, `Pass::from_vars(&model, vars.to_vec(),
    /// true)`.
    pub fn from_vars(model: &(impl Module + ?Sized), vars: Vec<Var>, training: bool) -> Result<Pass> {
        let op = "Pass::from_vars";
        let params = model.params();
        if vars.len() != params.len() {
            return Err(Error::value(
                op,
                "vars",
                format!("{} variables (one per parameter of the model)", params.len()),
                vars.len(),
            ));
        }
        for (p, v) in params.iter().zip(&vars) {
            if v.shape() != p.shape() {
                return Err(Error::shape(
                    op,
                    "vars",
                    format!("{:?} for `{}`", p.shape(), p.name()),
                    v.shape(),
                ));
            }
        }
        Ok(Self::build(&params, vars, training))
    }

    fn build(params: &[Param], vars: Vec<Var>, training: bool) -> Pass {
        let index = params
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name().to_string(), i))
            .collect();
        Pass {
            vars,
            index,
            training,
            seed: std::cell::Cell::new(0),
        }
    }

    /// The same pass drawing its dropout masks from `seed` (give each step its own).
    pub fn with_seed(self, seed: u64) -> Pass {
        self.seed.set(seed);
        self
    }

    /// Every parameter's variable in the model's order: `optimizer.step_vars(pass.vars(),
    /// &grads)`.
    pub fn vars(&self) -> &[Var] {
        &self.vars
    }

    /// True for [`Pass::train`] (dropout on).
    pub fn is_training(&self) -> bool {
        self.training
    }

    /// The variable of `param`, found by its name; an error when the pass was made from a
    /// model without it, or holds it with another shape.
    pub fn var(&self, param: &Param) -> Result<&Var> {
        let op = "Pass::var";
        let Some(v) = self.index.get(param.name()).map(|&i| &self.vars[i]) else {
            return Err(Error::value(
                op,
                "param",
                "a parameter of the model the pass was made from",
                format!("`{}`, which it lacks", param.name()),
            ));
        };
        if v.shape() != param.shape() {
            return Err(Error::shape(
                op,
                "param",
                format!("{:?} for `{}` (the layer's shape)", param.shape(), param.name()),
                v.shape(),
            ));
        }
        Ok(v)
    }

    /// A fresh seed for one dropout mask (counts up from the pass's seed).
    pub(crate) fn next_seed(&self) -> u64 {
        let s = self.seed.get();
        self.seed.set(s.wrapping_add(0x9E37_79B9_7F4A_7C15));
        s
    }
}
