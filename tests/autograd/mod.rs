//! The autograd tape: every backward rule against f64 central finite differences through
//! the CPU reference, on the CPU context and on every adapter present (the GPU tape also
//! against the CPU tape, whose recurrences run the hand-written f64 backward), and the
//! errors of bad input.

mod errors;
mod methods;
mod recurrences;
mod rules;

use wgsl_compute::autograd::{Tape, Var};
use wgsl_compute::check::{compare, Gate, Rng};
use wgsl_compute::{Context, Result, Tensor};

use crate::common::each_adapter;

/// Finite differences of an f32 forward with step [`STEP`] hold the tape's gradient to
/// this: the step's truncation (h^2 f''' / 6) and the f32 rounding of the loss divided by 2h.
pub const FD: Gate = Gate::new(2e-3, 2e-3);
/// The central-difference step.
pub const STEP: f64 = 1e-2;
/// The GPU tape against the CPU tape for the tensor ops' rules (f32 accumulation on both
/// sides of a few composed ops).
pub const CROSS: Gate = Gate::new(1e-4, 1e-4);

/// One input of a case: its shape and the range its uniform values are drawn from.
pub struct Input {
    pub shape: Vec<usize>,
    pub lo: f64,
    pub hi: f64,
    /// Values within this of 0 move out by it (inputs of a function with a kink at 0).
    pub gap: f64,
}

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

/// `sum(w * f(xs))` in f64 with recording off, on the CPU context.
fn loss(f: &dyn Fn(&[Var]) -> Result<Var>, ctx: &Context, xs: &[Vec<f32>], inputs: &[Input], w: &[f32]) -> f64 {
    let vars: Vec<Var> = xs
        .iter()
        .zip(inputs)
        .map(|(x, i)| Var::constant(&Tensor::from_slice(ctx, &i.shape, x).unwrap()))
        .collect();
    let y = f(&vars).unwrap().tensor().to_vec().unwrap();
    y.iter().zip(w).map(|(a, b)| *a as f64 * *b as f64).sum()
}

/// The tape's gradients of `sum(w * f(inputs))` for seeded inputs, on `ctx`.
fn tape_grads(
    f: &dyn Fn(&[Var]) -> Result<Var>,
    ctx: &Context,
    xs: &[Vec<f32>],
    inputs: &[Input],
    w: &[f32],
) -> Vec<Vec<f32>> {
    let tape = Tape::new(ctx);
    let vars: Vec<Var> = xs
        .iter()
        .zip(inputs)
        .map(|(x, i)| tape.var(&Tensor::from_slice(ctx, &i.shape, x).unwrap()).unwrap())
        .collect();
    let y = f(&vars).unwrap();
    let seed = Tensor::from_slice(ctx, y.shape(), w).unwrap();
    let grads = y.backward_with(&seed).unwrap();
    vars.iter()
        .map(|v| match grads.get(v) {
            Some(g) => g.to_vec().unwrap(),
            None => vec![0.0; v.tensor().len()],
        })
        .collect()
}

/// Checks the tape's gradient of every input of `f` against central differences on the CPU
/// context, then the tape on every adapter against the CPU tape under `cross`.
pub fn check(case: &str, seed: u64, inputs: &[Input], cross: Gate, f: impl Fn(&[Var]) -> Result<Var>) {
    let mut rng = Rng::new(seed);
    let xs: Vec<Vec<f32>> = inputs
        .iter()
        .map(|i| {
            let mut x = rng.vec_range(i.shape.iter().product(), i.lo, i.hi);
            for v in x.iter_mut().filter(|v| v.abs() < i.gap as f32) {
                *v += (i.gap as f32).copysign(*v);
            }
            x
        })
        .collect();
    let cpu = Context::cpu();
    let probe = {
        let vars: Vec<Var> = xs
            .iter()
            .zip(inputs)
            .map(|(x, i)| Var::constant(&Tensor::from_slice(&cpu, &i.shape, x).unwrap()))
            .collect();
        f(&vars).unwrap()
    };
    let w = rng.vec_range(probe.tensor().len(), -1.0, 1.0);
    let want = tape_grads(&f, &cpu, &xs, inputs, &w);
    for (k, x) in xs.iter().enumerate() {
        let mut fd = vec![0f32; x.len()];
        for j in 0..x.len() {
            let mut plus = xs.clone();
            plus[k][j] += STEP as f32;
            let mut minus = xs.clone();
            minus[k][j] -= STEP as f32;
            let h = (plus[k][j] as f64 - minus[k][j] as f64) / 2.0; // the step as stored
            fd[j] = ((loss(&f, &cpu, &plus, inputs, &w) - loss(&f, &cpu, &minus, inputs, &w)) / (2.0 * h)) as f32;
        }
        let c = compare(&want[k], &fd, FD);
        assert!(
            c.ok,
            "{case}: d/d input {k} {:?}, CPU tape vs finite differences: {c}",
            inputs[k].shape
        );
    }
    each_adapter(|ctx| {
        let got = tape_grads(&f, ctx, &xs, inputs, &w);
        for k in 0..xs.len() {
            let c = compare(&got[k], &want[k], cross);
            assert!(
                c.ok,
                "{case}: d/d input {k} on {} ({:?}) vs the CPU tape: {c}",
                ctx.info().name,
                ctx.info().backend
            );
        }
    });
}
