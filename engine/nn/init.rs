//! [`Init`]: how a fresh parameter's values are drawn from the builder's generator.

use crate::check::Rng;
use crate::error::{Error, Result};

/// A parameter's initial values. The random schemes draw from the [`VarBuilder`]'s seeded
/// generator in parameter creation order, so one seed gives one model.
///
/// [`VarBuilder`]: super::VarBuilder
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Init {
    /// Every element `c`.
    Const(f32),
    /// Uniform in `(-bound, bound)`, each draw `rng.range(-1, 1) as f32 * bound`.
    Uniform(f32),
    /// Normal with mean 0 and this standard deviation.
    Normal(f32),
}

impl Init {
    /// Zeros.
    pub const ZEROS: Init = Init::Const(0.0);
    /// Ones.
    pub const ONES: Init = Init::Const(1.0);

    /// Uniform in +-1/sqrt(fan_in): [`crate::nn::Linear`]'s default (as torch's and the
    /// mixer layers').
    pub fn fan_in(fan_in: usize) -> Init {
        Init::Uniform(1.0 / (fan_in.max(1) as f32).sqrt())
    }

    /// `n` values; `name` (the parameter's path) is for errors.
    pub(crate) fn values(&self, rng: &mut Rng, n: usize, name: &str) -> Result<Vec<f32>> {
        let op = "VarBuilder::get";
        match *self {
            Init::Uniform(b) | Init::Normal(b) if !(b.is_finite() && b >= 0.0) => {
                return Err(Error::value(
                    op,
                    "init",
                    format!("a finite bound or deviation >= 0 for `{name}`"),
                    b,
                ))
            }
            Init::Const(c) if !c.is_finite() => {
                return Err(Error::value(op, "init", format!("a finite constant for `{name}`"), c))
            }
            _ => {}
        }
        let mut v = crate::tensor::host_vec(op, "shape", n)?;
        match *self {
            Init::Const(c) => v.resize(n, c),
            Init::Uniform(b) => v.extend((0..n).map(|_| rng.range(-1.0, 1.0) as f32 * b)),
            Init::Normal(s) => v.extend((0..n).map(|_| (rng.normal() * s as f64) as f32)),
        }
        Ok(v)
    }
}
