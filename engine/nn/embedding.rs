//! [`Embedding`]: a table's rows by id.

use super::builder::VarBuilder;
use super::init::Init;
use super::module::{Module, Param};
use super::pass::Pass;
use crate::autograd::Var;
use crate::error::{Error, Result};

/// An embedding table `weight` (V, C).
#[derive(Clone, Debug)]
pub struct Embedding {
    weight: Param,
    path: String,
}

impl Embedding {
    /// V rows of C, normal with deviation 1 (torch's default).
    pub fn new(vb: &VarBuilder, v: usize, c: usize) -> Result<Embedding> {
        Self::with_init(vb, v, c, Init::Normal(1.0))
    }

    /// V rows of C drawn from `init` (GPT-2: `Init::Normal(0.02)`).
    pub fn with_init(vb: &VarBuilder, v: usize, c: usize, init: Init) -> Result<Embedding> {
        Ok(Embedding {
            weight: vb.get("weight", &[v, c], init)?,
            path: vb.prefix().to_string(),
        })
    }

    /// The table (V, C).
    pub fn weight(&self) -> &Param {
        &self.weight
    }

    /// ids (T ids below V) -> (T, C).
    pub fn forward(&self, pass: &Pass, ids: &[u32]) -> Result<Var> {
        let v = self.weight.shape()[0];
        if let Some(bad) = ids.iter().find(|&&id| id as usize >= v) {
            return Err(Error::value(
                "Embedding",
                "ids",
                format!("ids below {v} (the rows of `{}`)", self.path),
                bad,
            ));
        }
        Var::gather_rows(pass.var(&self.weight)?, ids)
    }
}

impl Module for Embedding {
    fn params(&self) -> Vec<Param> {
        vec![self.weight.clone()]
    }
}
