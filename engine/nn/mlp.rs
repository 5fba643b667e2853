//! [`Mlp`]: GPT-2's MLP, `c_proj(act(c_fc(x)))`, and the [`Activation`]s it can use.

use super::builder::VarBuilder;
use super::linear::Linear;
use super::module::{Module, Param};
use super::pass::Pass;
use crate::autograd::Var;
use crate::error::Result;

/// An elementwise nonlinearity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// GELU, tanh form (GPT-2's); fused into the projection when it has a bias.
    Gelu,
    /// max(x, 0).
    Relu,
    /// tanh.
    Tanh,
    /// The logistic sigmoid.
    Sigmoid,
}

impl Activation {
    /// `act(x)` elementwise. (...) -> (...).
    pub fn apply(self, x: &Var) -> Result<Var> {
        match self {
            Activation::Gelu => x.gelu(),
            Activation::Relu => x.relu(),
            Activation::Tanh => x.tanh(),
            Activation::Sigmoid => x.sigmoid(),
        }
    }
}

/// Two linear layers with an activation between: `c_fc` (in, hidden) and `c_proj`
/// (hidden, out), both with biases.
#[derive(Clone, Debug)]
pub struct Mlp {
    /// in -> hidden.
    pub c_fc: Linear,
    /// hidden -> out.
    pub c_proj: Linear,
    /// Between the two.
    pub act: Activation,
}

impl Mlp {
    /// `c_fc` then `c_proj` under `vb`, each [`Linear::new`].
    pub fn new(vb: &VarBuilder, d_in: usize, hidden: usize, d_out: usize, act: Activation) -> Result<Mlp> {
        Ok(Mlp {
            c_fc: Linear::new(&vb.pp("c_fc"), d_in, hidden)?,
            c_proj: Linear::new(&vb.pp("c_proj"), hidden, d_out)?,
            act,
        })
    }

    /// x (..., in) -> (..., out).
    pub fn forward(&self, pass: &Pass, x: &Var) -> Result<Var> {
        self.c_fc.check("Mlp", x)?;
        let h = match (self.act, self.c_fc.vars(pass)?) {
            (Activation::Gelu, (w, Some(b))) => x.linear_gelu(w, b)?, // one fused launch
            (act, (w, b)) => act.apply(&x.linear(w, b)?)?,
        };
        self.c_proj.forward(pass, &h)
    }
}

impl Module for Mlp {
    fn params(&self) -> Vec<Param> {
        let mut p = self.c_fc.params();
        p.extend(self.c_proj.params());
        p
    }
}
