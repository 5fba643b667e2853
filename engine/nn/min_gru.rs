//! [`MinGru`]: a minGRU-style mixer layer on the tape, `out_proj(mixer(in_proj(x)))`, for
//! every [`MixerKind`]: the same forward as `mixer::MixerLayer`, with its parameters named.

use super::builder::VarBuilder;
use super::linear::Linear;
use super::module::{Module, Param};
use super::pass::Pass;
use crate::autograd::Var;
use crate::error::{Error, Result};
use crate::mixer::{MixerKind, MixerPath};

/// A mixer layer: `in_proj` (Dm, 2D) with bias, the mixer's scan (B, T, 2D) -> (B, T, D),
/// `out_proj` (D, Dm) without bias.
#[derive(Clone, Debug)]
pub struct MinGru {
    /// Which mixer.
    pub kind: MixerKind,
    /// Which GPU path runs its scan.
    pub path: MixerPath,
    /// Dm -> 2D: the mixer's pre-activations (layout in [`MixerKind`]).
    pub in_proj: Linear,
    /// D -> Dm.
    pub out_proj: Linear,
}

impl MinGru {
    /// Model width `d_model`, state width `d` (a positive multiple of the kind's block size):
    /// weights uniform in +-1/sqrt(fan in), drawn `in_proj` then `out_proj` (as
    /// `MixerLayer::init` draws them), bias zeros; the path [`MixerPath::Auto`].
    pub fn new(vb: &VarBuilder, kind: MixerKind, d_model: usize, d: usize) -> Result<MinGru> {
        kind.blocks(d)?;
        let two_d = crate::shape::mul(kind.name_static(), "d (state width)", d, 2)?;
        Ok(MinGru {
            kind,
            path: MixerPath::Auto,
            in_proj: Linear::new(&vb.pp("in_proj"), d_model, two_d)?,
            out_proj: Linear::no_bias(&vb.pp("out_proj"), d, d_model)?,
        })
    }

    /// The same layer on scan path `path` (checked against the kind).
    pub fn with_path(mut self, path: MixerPath) -> Result<MinGru> {
        path.fused(self.kind)?;
        self.path = path;
        Ok(self)
    }

    /// x (B, T, Dm) -> (B, T, Dm).
    pub fn forward(&self, pass: &Pass, x: &Var) -> Result<Var> {
        if x.shape().len() != 3 {
            let (dm, _) = self.in_proj.widths();
            return Err(Error::shape("MinGru", "x", format!("(B, T, {dm})"), x.shape()));
        }
        self.in_proj.check("MinGru", x)?;
        let pre = self.in_proj.forward(pass, x)?; // (B, T, 2D)
        let h = Var::mixer_scan(self.kind, self.path, &pre)?; // (B, T, D)
        self.out_proj.forward(pass, &h) // (B, T, Dm)
    }
}

impl Module for MinGru {
    fn params(&self) -> Vec<Param> {
        let mut p = self.in_proj.params();
        p.extend(self.out_proj.params());
        p
    }
}
