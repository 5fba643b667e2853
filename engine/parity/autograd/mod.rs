//! Gradient checks as parity rows: the autograd tape's gradients of `sum(w * f(inputs))` for
//! seeded inputs and a seeded weighting `w`, two rows per case.
//! - [`Against::FiniteDifferences`]: the tape on the CPU context against f64 central
//!   differences of the CPU forward (step [`STEP`], gate [`gates::GRADIENT_FD`]). It runs on
//!   the CPU context whatever context the row is given, so it checks the rule itself.
//! - [`Against::CpuTape`]: the tape on the given context against the CPU tape, within the
//!   case's own gate (the tensor ops' [`gates::GRADIENT_TAPE`], or the recurrence family's
//!   backward gate, whose CPU rule is its hand-written f64 backward).
//!
//! Together they hold a device's gradients to the finite differences. Every read is
//! `to_vec_async`, so the browser runs the same rows as the native suite. [`cases`] holds the
//! case lists.

pub mod cases;

pub use cases::{autograd_cases, elementwise_cases, product_cases, recurrence_cases, row_cases};

use super::Row;
use crate::autograd::{Tape, Var};
use crate::check::{gates, Gate, Rng};
use crate::context::Context;
use crate::error::Result;
use crate::expr::{Binary, Unary};
use crate::mixer::{MixerKind, MixerPath};
use crate::tensor::Tensor;

/// The central-difference step.
pub const STEP: f64 = 1e-2;

/// One input of a case: its shape and the range its uniform values are drawn from.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// The input's shape.
    pub shape: Vec<usize>,
    /// Lower end of the draw.
    pub lo: f64,
    /// Upper end of the draw.
    pub hi: f64,
    /// Values within this of 0 move out by it (inputs of a function with a kink at 0).
    pub gap: f64,
}

/// An input of `shape` drawn uniformly from `[lo, hi)`.
pub fn input(shape: &[usize], lo: f64, hi: f64) -> Input {
    Input {
        shape: shape.to_vec(),
        lo,
        hi,
        gap: 0.0,
    }
}

/// [`input`] with no value within `gap` of 0 (a kink there would defeat finite differences).
pub fn input_away(shape: &[usize], lo: f64, hi: f64, gap: f64) -> Input {
    Input {
        gap,
        ..input(shape, lo, hi)
    }
}

/// The function whose gradients a case checks.
#[derive(Clone, Copy, Debug)]
pub enum Body {
    /// `v[0].unary(op)`.
    Unary(Unary),
    /// `v[0].binary(op, &v[1])`.
    Binary(Binary),
    /// `Var::mixer_scan(kind, path, &v[0])`.
    Mixer(MixerKind, MixerPath),
    /// Any composition of ops over the inputs.
    Formula(fn(&[Var]) -> Result<Var>),
}

impl Body {
    fn apply(&self, v: &[Var]) -> Result<Var> {
        match *self {
            Body::Unary(op) => v[0].unary(op),
            Body::Binary(op) => v[0].binary(op, &v[1]),
            Body::Mixer(kind, path) => Var::mixer_scan(kind, path, &v[0]),
            Body::Formula(f) => f(v),
        }
    }
}

/// What a row holds the tape's gradients to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Against {
    /// The CPU tape against f64 central differences of the CPU forward.
    FiniteDifferences,
    /// The given context's tape against the CPU tape.
    CpuTape,
}

/// One gradient check: a function of seeded inputs, and what its gradients are held to.
#[derive(Clone, Debug)]
pub struct GradCase {
    /// The op as the table prints it, e.g. `softmax_last, causal`.
    pub name: String,
    /// Seed of the inputs and of the weighting of the output.
    pub seed: u64,
    /// The inputs, each a variable of the tape.
    pub inputs: Vec<Input>,
    /// The function.
    pub body: Body,
    /// The device tape against the CPU tape is held to this.
    pub gate: Gate,
    /// Which comparison this row makes.
    pub against: Against,
}

/// Two cases are the same check when they name the same op, seed and comparison (a
/// [`Body::Formula`] is a function pointer, which does not compare reliably).
impl PartialEq for GradCase {
    fn eq(&self, other: &Self) -> bool {
        (&self.name, self.seed, &self.inputs, self.against) == (&other.name, other.seed, &other.inputs, other.against)
    }
}

impl GradCase {
    /// The input shapes as the table prints them, e.g. `3x5, 1x5`.
    pub fn shape(&self) -> String {
        let dims = |s: &[usize]| s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
        self.inputs
            .iter()
            .map(|i| dims(&i.shape))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The row's comparison as the table prints it.
    pub fn strategy(&self) -> &'static str {
        match self.against {
            Against::FiniteDifferences => "CPU tape vs finite differences",
            Against::CpuTape => "tape vs CPU tape",
        }
    }

    /// The gate this row is held to.
    pub fn row_gate(&self) -> Gate {
        match self.against {
            Against::FiniteDifferences => gates::GRADIENT_FD,
            Against::CpuTape => self.gate,
        }
    }

    /// The seeded inputs, and the weighting `w` of the output (one value per output element).
    fn draws(&self, cpu: &Context) -> Result<(Vec<Vec<f32>>, Vec<f32>)> {
        let mut rng = Rng::new(self.seed);
        let xs: Vec<Vec<f32>> = self
            .inputs
            .iter()
            .map(|i| {
                let mut x = rng.vec_range(i.shape.iter().product(), i.lo, i.hi);
                for v in x.iter_mut().filter(|v| v.abs() < i.gap as f32) {
                    *v += (i.gap as f32).copysign(*v);
                }
                x
            })
            .collect();
        let outputs = self.body.apply(&constants(cpu, &self.inputs, &xs)?)?.tensor().len();
        let w = rng.vec_range(outputs, -1.0, 1.0);
        Ok((xs, w))
    }
}

/// The inputs as unrecorded variables of `ctx`.
fn constants(ctx: &Context, inputs: &[Input], xs: &[Vec<f32>]) -> Result<Vec<Var>> {
    xs.iter()
        .zip(inputs)
        .map(|(x, i)| Ok(Var::constant(&Tensor::from_slice(ctx, &i.shape, x)?)))
        .collect()
}

/// `sum(w * f(xs))` in f64 with recording off.
async fn loss(c: &GradCase, ctx: &Context, xs: &[Vec<f32>], w: &[f32]) -> Result<f64> {
    let y = c
        .body
        .apply(&constants(ctx, &c.inputs, xs)?)?
        .tensor()
        .to_vec_async()
        .await?;
    Ok(y.iter().zip(w).map(|(a, b)| *a as f64 * *b as f64).sum())
}

/// The tape's gradients of `sum(w * f(xs))` on `ctx`, every input's flattened one after another
/// (zeros for an input the output does not depend on).
async fn tape_grads(c: &GradCase, ctx: &Context, xs: &[Vec<f32>], w: &[f32]) -> Result<Vec<f32>> {
    let tape = Tape::new(ctx);
    let vars = xs
        .iter()
        .zip(&c.inputs)
        .map(|(x, i)| tape.var(&Tensor::from_slice(ctx, &i.shape, x)?))
        .collect::<Result<Vec<Var>>>()?;
    let y = c.body.apply(&vars)?;
    let grads = y.backward_with(&Tensor::from_slice(ctx, y.shape(), w)?)?;
    let mut out = Vec::new();
    for v in &vars {
        match grads.get(v) {
            Some(g) => out.extend(g.to_vec_async().await?),
            None => out.extend(std::iter::repeat_n(0.0, v.tensor().len())),
        }
    }
    Ok(out)
}

/// Central differences of [`loss`] on `cpu`, in the order of [`tape_grads`].
async fn finite_differences(c: &GradCase, cpu: &Context, xs: &[Vec<f32>], w: &[f32]) -> Result<Vec<f32>> {
    let mut out = Vec::new();
    for (k, x) in xs.iter().enumerate() {
        for j in 0..x.len() {
            let mut plus = xs.to_vec();
            plus[k][j] += STEP as f32;
            let mut minus = xs.to_vec();
            minus[k][j] -= STEP as f32;
            let h = (plus[k][j] as f64 - minus[k][j] as f64) / 2.0; // the step as stored
            let d = loss(c, cpu, &plus, w).await? - loss(c, cpu, &minus, w).await?;
            out.push((d / (2.0 * h)) as f32);
        }
    }
    Ok(out)
}

/// Runs one gradient check on `ctx` (an [`Against::FiniteDifferences`] row runs on the CPU
/// context whatever `ctx` is).
pub async fn run_case(ctx: &Context, c: &GradCase) -> Row {
    let row = Row::pending(c.name.clone(), "backward", c.shape(), c.strategy().into(), c.row_gate());
    let cpu = Context::cpu();
    let pair = async {
        let (xs, w) = c.draws(&cpu)?;
        Ok::<_, crate::error::Error>(match c.against {
            Against::FiniteDifferences => (
                tape_grads(c, &cpu, &xs, &w).await?,
                finite_differences(c, &cpu, &xs, &w).await?,
            ),
            Against::CpuTape => (tape_grads(c, ctx, &xs, &w).await?, tape_grads(c, &cpu, &xs, &w).await?),
        })
    };
    row.judged(pair.await)
}
