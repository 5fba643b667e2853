//! [`Dropout`]: in a training pass, zeroes each element with probability p and scales the
//! rest by 1/(1 - p); in an evaluation pass, the identity.

use super::pass::Pass;
use crate::autograd::Var;
use crate::check::Rng;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Dropout with probability `p` (no parameters). The mask of each call is drawn on the host
/// from the pass's seed ([`Pass::with_seed`]), so a seeded run repeats.
#[derive(Clone, Copy, Debug)]
pub struct Dropout {
    p: f32,
}

impl Dropout {
    /// `p` in [0, 1).
    pub fn new(p: f32) -> Result<Dropout> {
        if !(0.0..1.0).contains(&p) {
            return Err(Error::value("Dropout", "p", "a probability in [0, 1)", p));
        }
        Ok(Dropout { p })
    }

    /// x -> x (eval, or p = 0), else x * mask, mask 0 or 1/(1 - p). (...) -> (...).
    pub fn forward(&self, pass: &Pass, x: &Var) -> Result<Var> {
        if !pass.is_training() || self.p == 0.0 {
            return Ok(x.clone());
        }
        let mut rng = Rng::new(pass.next_seed());
        let keep = 1.0 / (1.0 - self.p);
        let n = x.tensor().len();
        let mut mask = crate::tensor::host_vec("Dropout", "x", n)?;
        mask.extend((0..n).map(|_| if rng.uniform() as f32 >= self.p { keep } else { 0.0 }));
        x.mul(&Var::constant(&Tensor::from_slice(
            x.tensor().context(),
            x.shape(),
            &mask,
        )?))
    }
}
