//! [`Var`]: a tensor, and where it was recorded. The one way an op enters the tape is
//! [`Var::record`]: it checks that the inputs share a tape and a context, runs the forward
//! and, unless recording is off, appends the op with its backward rule. Every op method on
//! `Var` (in the sibling files) is one call of it.

use std::cell::Cell;
use std::sync::Arc;

use super::tape::{self, is_recording, Grads, Rule, RuleFn, Tape};
use crate::context::op_scope::in_op;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

thread_local! {
    /// The outermost [`Var::composite`] running on this thread: its name is what the tape
    /// records for every op inside it.
    static COMPOSITE: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// A tensor whose ops are recorded on a [`Tape`] (a variable), or a constant that carries no
/// gradient. Cloning is cheap and shares the tensor and the tape.
#[derive(Clone)]
pub struct Var {
    tensor: Tensor,
    /// The tape and this variable's entry on it; None for a constant.
    node: Option<(Tape, usize)>,
}

impl std::fmt::Debug for Var {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.node {
            Some((_, i)) => write!(f, "Var#{i}({:?})", self.tensor),
            None => write!(f, "Var::constant({:?})", self.tensor),
        }
    }
}

/// A backward rule from a closure: `f(dL/d output, need)` -> one gradient per input.
pub fn rule(f: impl RuleFn) -> Rule {
    Arc::new(f)
}

/// `f()` when `need`, else None: one input's gradient, computed only when it is wanted.
pub fn when(need: bool, f: impl FnOnce() -> Result<Tensor>) -> Result<Option<Tensor>> {
    need.then(f).transpose()
}

impl Var {
    /// A constant: ops on it are not recorded and it gets no gradient.
    pub fn constant(t: &Tensor) -> Var {
        Var {
            tensor: t.clone(),
            node: None,
        }
    }

    pub(crate) fn on_tape(tensor: Tensor, tape: Tape, index: usize) -> Var {
        Var {
            tensor,
            node: Some((tape, index)),
        }
    }

    /// The value.
    pub fn tensor(&self) -> &Tensor {
        &self.tensor
    }

    /// The value's dimensions.
    pub fn shape(&self) -> &[usize] {
        self.tensor.shape()
    }

    /// The tape this variable is recorded on (None for a constant).
    pub fn tape(&self) -> Option<&Tape> {
        self.node.as_ref().map(|(t, _)| t)
    }

    /// True for a variable, false for a constant.
    pub fn is_variable(&self) -> bool {
        self.node.is_some()
    }

    pub(crate) fn node(&self) -> Option<(Tape, usize)> {
        self.node.clone()
    }

    /// The same value as a constant: gradients stop here.
    pub fn detach(&self) -> Var {
        Var::constant(&self.tensor)
    }

    /// dL/d every variable this one-element loss depends on (seed 1), freeing the tape
    /// entries it passes through. A loss of more than one element needs [`Var::backward_with`].
    pub fn backward(&self) -> Result<Grads> {
        self.backward_from(&self.unit_seed()?, false)
    }

    /// The gradients of `sum(seed * self)`; seed has this variable's shape.
    pub fn backward_with(&self, seed: &Tensor) -> Result<Grads> {
        self.backward_from(seed, false)
    }

    /// [`Var::backward`] (seed 1) or [`Var::backward_with`] (a seed) keeping the tape, so
    /// that another backward may pass through the same entries.
    pub fn backward_retained(&self, seed: Option<&Tensor>) -> Result<Grads> {
        match seed {
            Some(s) => self.backward_from(s, true),
            None => self.backward_from(&self.unit_seed()?, true),
        }
    }

    fn unit_seed(&self) -> Result<Tensor> {
        if self.tensor.len() != 1 {
            return Err(Error::shape(
                "backward",
                "loss",
                "one element (a scalar loss), or a seed gradient through backward_with",
                self.shape(),
            ));
        }
        Tensor::full(self.tensor.context(), self.shape(), 1.0)
    }

    /// The tape the inputs of `op` share (None when none is a variable), checking that they
    /// live on one context and that no two tapes meet.
    fn common_tape(op: &'static str, inputs: &[&Var]) -> Result<Option<Tape>> {
        let Some(first) = inputs.first() else {
            return Err(Error::value(op, "inputs", "at least one", 0));
        };
        let ctx = first.tensor.context();
        let mut found: Option<Tape> = None;
        for v in inputs {
            v.tensor.expect_context(ctx, op, "inputs")?;
            let Some((t, _)) = &v.node else { continue };
            match &found {
                Some(f) if !f.same(t) => {
                    return Err(Error::value(
                        op,
                        "inputs",
                        "variables of one tape",
                        "variables of two tapes",
                    ))
                }
                Some(_) => {}
                None => found = Some(t.clone()),
            }
        }
        Ok(found)
    }

    /// Runs op `op` on the inputs' tensors with `forward`, which returns the output and the
    /// backward rule, and records it when some input is a variable and recording is on (see
    /// [`tape::no_grad`]). The rule's `need[k]` is true when input k is a variable. The one
    /// entry point of every op: a new op is one call of this.
    pub fn record(
        op: &'static str,
        inputs: &[&Var],
        forward: impl FnOnce(&[&Tensor]) -> Result<(Tensor, Rule)>,
    ) -> Result<Var> {
        Self::record_inner(op, inputs, |t| forward(t).map(|(y, r)| (y, Some(r))))
    }

    /// [`Var::record`] for an op without a gradient: a backward that reaches it fails with
    /// [`Error::NoGradient`] naming `op`.
    pub fn record_without_rule(
        op: &'static str,
        inputs: &[&Var],
        forward: impl FnOnce(&[&Tensor]) -> Result<Tensor>,
    ) -> Result<Var> {
        Self::record_inner(op, inputs, |t| forward(t).map(|y| (y, None)))
    }

    /// Runs `f`, an op built of other recorded ops, under the one name `op`: every entry it
    /// records carries `op`, so an error of the tape (a backward through a freed entry, an
    /// upload inside a captured step) names the op the caller called, not a part of it
    /// (`sum_all`, not the `sum_last` it is made of). Nested composites keep the outermost
    /// name.
    pub fn composite<R>(op: &'static str, f: impl FnOnce() -> Result<R>) -> Result<R> {
        struct Restore(Option<&'static str>);
        impl Drop for Restore {
            fn drop(&mut self) {
                COMPOSITE.with(|c| c.set(self.0));
            }
        }
        let outer = COMPOSITE.with(|c| c.replace(Some(c.get().unwrap_or(op))));
        let _restore = Restore(outer);
        f()
    }

    fn record_inner(
        op: &'static str,
        inputs: &[&Var],
        forward: impl FnOnce(&[&Tensor]) -> Result<(Tensor, Option<Rule>)>,
    ) -> Result<Var> {
        let op = COMPOSITE.with(Cell::get).unwrap_or(op);
        let tape = Self::common_tape(op, inputs)?;
        let tensors: Vec<&Tensor> = inputs.iter().map(|v| &v.tensor).collect();
        let (out, rule) = in_op(op, || forward(&tensors))?;
        match tape {
            Some(tape) if is_recording() => {
                let ids = inputs.iter().map(|v| v.node.as_ref().map(|(_, i)| *i)).collect();
                let index = tape.push(op, ids, &out, rule);
                Ok(Var::on_tape(out, tape, index))
            }
            _ => Ok(Var::constant(&out)),
        }
    }
}

impl Var {
    /// [`tape::backward`] from this variable, after checking that it is on a tape and that
    /// `seed` matches it.
    fn backward_from(&self, seed: &Tensor, retain: bool) -> Result<Grads> {
        let op = "backward";
        let Some((tape, root)) = self.node() else {
            return Err(Error::value(
                op,
                "loss",
                "a variable recorded on a tape",
                "a constant (no input was a variable, or it was made under no_grad)",
            ));
        };
        let ctx = tape.context();
        self.tensor().expect_context(&ctx, op, "loss")?;
        seed.expect_context(&ctx, op, "seed")?;
        if seed.shape() != self.shape() {
            return Err(Error::mismatch(op, "seed", seed.shape(), "loss", self.shape()));
        }
        tape::backward(tape, root, seed, retain)
    }
}

impl Tape {
    /// A variable (a leaf: its gradient is kept) holding `t`, which must live on this
    /// tape's context.
    pub fn var(&self, t: &Tensor) -> Result<Var> {
        let index = self.push_leaf(t)?;
        Ok(Var::on_tape(t.clone(), self.clone(), index))
    }
}

impl Grads {
    /// dL/d `v` (the shape of `v`), or None when the loss does not depend on `v` or `v` is
    /// not a variable of this backward's tape.
    pub fn get(&self, v: &Var) -> Option<&Tensor> {
        let (tape, index) = v.node()?;
        if !tape.same(&self.tape) {
            return None;
        }
        self.grads.get(index)?.as_ref()
    }

    /// dL/d `v`, to replace (e.g. by gradient clipping); None as for [`Grads::get`]. A
    /// replacement must keep the variable's shape for an optimiser to accept it.
    pub fn get_mut(&mut self, v: &Var) -> Option<&mut Tensor> {
        let (tape, index) = v.node()?;
        if !tape.same(&self.tape) {
            return None;
        }
        self.grads.get_mut(index)?.as_mut()
    }
}
