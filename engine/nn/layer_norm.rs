//! [`LayerNorm`]: normalisation over the last axis with a learned scale and shift.

use super::builder::VarBuilder;
use super::init::Init;
use super::module::{Module, Param};
use super::pass::Pass;
use crate::autograd::Var;
use crate::error::{Error, Result};

/// Layer norm over the last axis: parameters `weight` (n,), ones, and `bias` (n,), zeros.
#[derive(Clone, Debug)]
pub struct LayerNorm {
    weight: Param,
    bias: Param,
    eps: f32,
    path: String,
}

impl LayerNorm {
    /// Over rows of `n` with epsilon `eps` (GPT-2: 1e-5).
    pub fn new(vb: &VarBuilder, n: usize, eps: f32) -> Result<LayerNorm> {
        if !(eps > 0.0 && eps.is_finite()) {
            return Err(Error::value("LayerNorm", "eps", "a positive finite number", eps));
        }
        Ok(LayerNorm {
            weight: vb.get("weight", &[n], Init::ONES)?,
            bias: vb.get("bias", &[n], Init::ZEROS)?,
            eps,
            path: vb.prefix().to_string(),
        })
    }

    /// x (..., n) -> (..., n).
    pub fn forward(&self, pass: &Pass, x: &Var) -> Result<Var> {
        let n = self.weight.shape()[0];
        if x.shape().last() != Some(&n) {
            return Err(Error::shape(
                "LayerNorm",
                "x",
                format!("(..., {n}) (the width of `{}`)", self.path),
                x.shape(),
            ));
        }
        x.layer_norm(pass.var(&self.weight)?, pass.var(&self.bias)?, self.eps)
    }
}

impl Module for LayerNorm {
    fn params(&self) -> Vec<Param> {
        vec![self.weight.clone(), self.bias.clone()]
    }
}
