//! [`Linear`]: `x w + b` with w (in, out), GPT-2's `Conv1D` layout (Hugging Face's GPT-2
//! names map one to one).

use super::builder::VarBuilder;
use super::init::Init;
use super::module::{Module, Param};
use super::pass::Pass;
use crate::autograd::Var;
use crate::error::{Error, Result};

/// A linear layer: parameters `weight` (in, out) and optionally `bias` (out,).
#[derive(Clone, Debug)]
pub struct Linear {
    weight: Param,
    bias: Option<Param>,
    /// The builder's prefix, for errors.
    path: String,
}

impl Linear {
    /// With a bias: weight uniform in +-1/sqrt(in) ([`Init::fan_in`]), bias zeros.
    pub fn new(vb: &VarBuilder, d_in: usize, d_out: usize) -> Result<Linear> {
        Self::with_init(vb, d_in, d_out, Init::fan_in(d_in), Some(Init::ZEROS))
    }

    /// Without a bias; weight uniform in +-1/sqrt(in).
    pub fn no_bias(vb: &VarBuilder, d_in: usize, d_out: usize) -> Result<Linear> {
        Self::with_init(vb, d_in, d_out, Init::fan_in(d_in), None)
    }

    /// `weight` (in, out) drawn from `weight`, then `bias` (out,) from `bias` when given.
    pub fn with_init(vb: &VarBuilder, d_in: usize, d_out: usize, weight: Init, bias: Option<Init>) -> Result<Linear> {
        let w = vb.get("weight", &[d_in, d_out], weight)?;
        let b = bias.map(|init| vb.get("bias", &[d_out], init)).transpose()?;
        Ok(Linear {
            weight: w,
            bias: b,
            path: vb.prefix().to_string(),
        })
    }

    /// (in, out).
    pub fn widths(&self) -> (usize, usize) {
        (self.weight.shape()[0], self.weight.shape()[1])
    }

    /// The weight (in, out).
    pub fn weight(&self) -> &Param {
        &self.weight
    }

    /// The bias (out,), if any.
    pub fn bias(&self) -> Option<&Param> {
        self.bias.as_ref()
    }

    /// Checks x (..., in); `layer` names the layer type in the error.
    pub(crate) fn check(&self, layer: &'static str, x: &Var) -> Result<()> {
        let (d_in, _) = self.widths();
        if x.shape().last() != Some(&d_in) {
            return Err(Error::shape(
                layer,
                "x",
                format!("(..., {d_in}) (the in-width of `{}`)", self.path),
                x.shape(),
            ));
        }
        Ok(())
    }

    /// The weight's and the bias's variables in `pass`.
    pub(crate) fn vars<'p>(&self, pass: &'p Pass) -> Result<(&'p Var, Option<&'p Var>)> {
        let w = pass.var(&self.weight)?;
        Ok((w, self.bias.as_ref().map(|b| pass.var(b)).transpose()?))
    }

    /// x (..., in) -> (..., out).
    pub fn forward(&self, pass: &Pass, x: &Var) -> Result<Var> {
        self.check("Linear", x)?;
        let (w, b) = self.vars(pass)?;
        x.linear(w, b)
    }
}

impl Module for Linear {
    fn params(&self) -> Vec<Param> {
        let mut p = vec![self.weight.clone()];
        p.extend(self.bias.clone());
        p
    }
}
