//! [`CharModel`] on the autograd tape: the same forward as `CharModel::logits`, recorded op
//! by op, so that `loss.backward()` gives every parameter's gradient and an optimiser steps
//! them through [`crate::train::Optimizer::step_vars`]. The hand-written backward chain
//! (`CharModel::loss_and_grads`) computes the same gradients; `tests/optim.rs` holds the two
//! training curves together.

use super::CharModel;
use crate::autograd::{Tape, Var};
use crate::error::{Error, Result};

impl CharModel {
    /// Every parameter as a leaf of `tape`, in [`CharModel::params`] order, sharing the
    /// parameters' buffers (an optimiser stepping them updates the model).
    pub fn vars(&self, tape: &Tape) -> Result<Vec<Var>> {
        self.params().into_iter().map(|p| tape.var(p)).collect()
    }

    /// The mean next-character cross-entropy of `inputs` against `targets` (batch rows of T
    /// characters) recorded on the tape of `vars` (from [`CharModel::vars`]): a () variable.
    pub fn loss_var(&self, vars: &[Var], inputs: &[u32], targets: &[u32], batch: usize) -> Result<Var> {
        let op = "CharModel::loss_var";
        let want = self.params().len();
        if vars.len() != want {
            return Err(Error::value(
                op,
                "vars",
                format!("{want} variables (CharModel::vars)"),
                vars.len(),
            ));
        }
        let (b, t) = self.rows(op, inputs, batch)?;
        let dm = self.config.d_model;
        let onehot = Var::constant(&self.onehot(inputs)?); // (B T, V)
        let mut x = onehot.matmul(&vars[0])?.reshape(&[b, t, dm])?; // (B, T, Dm)
        for (l, layer) in self.layers.iter().enumerate() {
            let (w_in, b_in, w_out) = (&vars[1 + 3 * l], &vars[2 + 3 * l], &vars[3 + 3 * l]);
            let pre = x.linear(w_in, Some(b_in))?; // (B, T, 2D)
            let h = Var::mixer_scan(layer.kind, layer.path, &pre)?; // (B, T, D)
            x = x.add(&h.linear(w_out, None)?)?; // (B, T, Dm), residual
        }
        let (head, bias) = (&vars[want - 2], &vars[want - 1]);
        let logits = x.reshape(&[b * t, dm])?.linear(head, Some(bias))?; // (B T, V)
        logits.cross_entropy(targets) // ()
    }
}
