//! The bench's `train_plan` suite: one training step of an MLP (x (B, w0) -> tanh w1 -> tanh
//! w2 -> w3, mean squared error, Adam) on the autograd tape eagerly, against the same step
//! captured once as a plan (`train::CompiledStep`) and replayed. Both write the step's batch
//! and read its loss back; the median wall ms per step of each. Two sizes: a small one,
//! whose step is its ops' host work and launches (what a plan removes), and one whose
//! products are most of the step on a CPU adapter.

use std::time::Instant;

use wgsl_compute::autograd::{Tape, Var};
use wgsl_compute::check::Rng;
use wgsl_compute::train::{Adam, CompiledStep, Optimizer};
use wgsl_compute::{Context, Result, Tensor};

/// The sizes: (batch, widths).
pub const SIZES: [(usize, [usize; 4]); 2] = [(16, [32, 64, 64, 8]), (64, [128, 256, 256, 16])];

fn loss(v: &[Var], x: &Tensor, y: &Tensor) -> Result<Var> {
    let mut h = Var::constant(x);
    for l in 0..3 {
        h = h.linear(&v[2 * l], Some(&v[2 * l + 1]))?;
        if l < 2 {
            h = h.tanh()?;
        }
    }
    let d = h.sub(&Var::constant(y))?;
    d.mul(&d)?.mean_all()
}

fn params(ctx: &Context, widths: [usize; 4]) -> Result<Vec<Tensor>> {
    let mut rng = Rng::new(2);
    let mut p = vec![];
    for l in 0..3 {
        let (i, o) = (widths[l], widths[l + 1]);
        p.push(Tensor::from_slice(ctx, &[i, o], &rng.vec_range(i * o, -0.1, 0.1))?);
        p.push(Tensor::from_slice(ctx, &[o], &rng.vec_range(o, -0.1, 0.1))?);
    }
    Ok(p)
}

/// (eager ms, planned ms, dispatches of the plan, the dispatch floor's ms for as many
/// dispatches) per step for batch `b` and `widths`.
pub fn bench(ctx: &Context, quick: bool, (b, widths): (usize, [usize; 4])) -> Result<(f64, f64, usize, f64)> {
    let mut rng = Rng::new(4);
    let batches: Vec<(Vec<f32>, Vec<f32>)> = (0..4)
        .map(|_| {
            (
                rng.vec_range(b * widths[0], -1.0, 1.0),
                rng.vec_range(b * widths[3], -1.0, 1.0),
            )
        })
        .collect();
    let (warmup, repeat) = if quick { (3, 15) } else { (10, 50) };
    let median = |mut f: Box<dyn FnMut(usize) -> Result<()> + '_>| -> Result<f64> {
        for i in 0..warmup {
            f(i)?;
        }
        let mut t = vec![];
        for i in 0..repeat {
            let s = Instant::now();
            f(i)?;
            t.push(s.elapsed().as_secs_f64() * 1e3);
        }
        t.sort_by(|a, b| a.total_cmp(b));
        Ok(t[t.len() / 2])
    };
    let x = Tensor::zeros(ctx, &[b, widths[0]])?;
    let y = Tensor::zeros(ctx, &[b, widths[3]])?;

    let p = params(ctx, widths)?;
    let refs: Vec<&Tensor> = p.iter().collect();
    let mut adam = Adam::new(&refs, 1e-3)?;
    let eager = median(Box::new(|i| {
        let (xb, yb) = &batches[i % batches.len()];
        x.write(xb)?;
        y.write(yb)?;
        let tape = Tape::new(ctx);
        let vars = p.iter().map(|t| tape.var(t)).collect::<Result<Vec<_>>>()?;
        let l = loss(&vars, &x, &y)?;
        adam.step_vars(&vars, &l.backward()?)?;
        l.tensor().to_vec().map(drop)
    }))?;

    let p = params(ctx, widths)?;
    let refs: Vec<&Tensor> = p.iter().collect();
    let mut adam = Adam::new(&refs, 1e-3)?;
    let step = CompiledStep::capture(ctx, &refs, &[&x, &y], &mut adam, |v| loss(v, &x, &y))?;
    let planned = median(Box::new(|i| {
        let (xb, yb) = &batches[i % batches.len()];
        x.write(xb)?;
        y.write(yb)?;
        step.step()?.to_vec().map(drop)
    }))?;
    // What as many dependent one-element dispatches cost, read back the same way: the part
    // of the planned step no kernel can cut (`Plan::dispatch_floor`).
    let n = step.plan().dispatches();
    let (floor_plan, floor_out) = wgsl_compute::plan::Plan::dispatch_floor(ctx, n)?;
    let floor = median(Box::new(|_| {
        floor_plan.replay(ctx)?;
        floor_out.to_vec().map(drop)
    }))?;
    Ok((eager, planned, n, floor))
}
