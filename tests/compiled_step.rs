//! A whole training step as a plan (`train::CompiledStep`): N replays against N eager steps
//! of the same model and optimiser (losses and parameters), no buffer created by a replay,
//! and the errors.

use wgsl_compute::autograd::Var;
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::train::{Adam, CompiledStep, Optimizer, Sgd};
use wgsl_compute::{Context, Error, Result, Tensor};

use crate::common::{assert_close, each_adapter};

/// The planned step against the eager one: the plan's fusion pass folds elementwise chains
/// into one kernel, whose f32 arithmetic may round differently from the separate launches.
const PLAN_VS_EAGER: Gate = Gate::new(1e-5, 1e-5);

/// A 2-layer tanh MLP's mean squared error: x (B, 8) -> (B, 4) against y.
fn mse(v: &[Var], x: &Tensor, y: &Tensor) -> Result<Var> {
    let h = Var::constant(x).linear(&v[0], Some(&v[1]))?.tanh()?; // (B, 16)
    let d = h.linear(&v[2], Some(&v[3]))?.sub(&Var::constant(y))?; // (B, 4)
    d.mul(&d)?.mean_all() // ()
}

/// Each step's (x, y) values.
type Batches = Vec<(Vec<f32>, Vec<f32>)>;

/// Fresh parameters (seeded), the batches of each step (seeded).
fn setup(ctx: &Context) -> (Vec<Tensor>, Batches) {
    let mut rng = Rng::new(3);
    let shapes: [&[usize]; 4] = [&[8, 16], &[16], &[16, 4], &[4]];
    let params = shapes
        .iter()
        .map(|s| Tensor::from_slice(ctx, s, &rng.vec_range(s.iter().product(), -0.5, 0.5)).unwrap())
        .collect();
    let batches = (0..6)
        .map(|_| (rng.vec_range(32 * 8, -1.0, 1.0), rng.vec_range(32 * 4, -1.0, 1.0)))
        .collect();
    (params, batches)
}

fn eager(ctx: &Context, opt: &mut dyn FnMut(&[&Tensor]) -> Box<dyn Optimizer>) -> (Vec<f32>, Vec<Vec<f32>>) {
    let (params, batches) = setup(ctx);
    let refs: Vec<&Tensor> = params.iter().collect();
    let mut o = opt(&refs);
    let mut losses = vec![];
    for (xb, yb) in &batches {
        let x = Tensor::from_slice(ctx, &[32, 8], xb).unwrap();
        let y = Tensor::from_slice(ctx, &[32, 4], yb).unwrap();
        let tape = wgsl_compute::autograd::Tape::new(ctx);
        let vars: Vec<Var> = params.iter().map(|p| tape.var(p).unwrap()).collect();
        let loss = mse(&vars, &x, &y).unwrap();
        losses.push(loss.tensor().to_vec().unwrap()[0]);
        o.step_vars(&vars, &loss.backward().unwrap()).unwrap();
    }
    (losses, params.iter().map(|p| p.to_vec().unwrap()).collect())
}

fn planned(ctx: &Context, opt: &mut dyn FnMut(&[&Tensor]) -> Box<dyn Optimizer>) -> (Vec<f32>, Vec<Vec<f32>>) {
    let (params, batches) = setup(ctx);
    let refs: Vec<&Tensor> = params.iter().collect();
    let mut o = opt(&refs);
    let x = Tensor::zeros(ctx, &[32, 8]).unwrap();
    let y = Tensor::zeros(ctx, &[32, 4]).unwrap();
    let step = CompiledStep::capture(ctx, &refs, &[&x, &y], o.as_mut(), |v| mse(v, &x, &y)).unwrap();
    let mut losses = vec![];
    let mut created = None;
    for (i, (xb, yb)) in batches.iter().enumerate() {
        x.write(xb).unwrap();
        y.write(yb).unwrap();
        losses.push(step.step().unwrap().to_vec().unwrap()[0]);
        // After the first replay (which may create the readback's staging), none creates a buffer.
        let now = ctx.pool_stats().created;
        if i >= 1 {
            assert_eq!(Some(now), created, "replay {i} created buffers");
        }
        created = Some(now);
    }
    (losses, params.iter().map(|p| p.to_vec().unwrap()).collect())
}

#[test]
fn compiled_step_replays_equal_eager_steps_for_adam_and_sgd() {
    // A context of its own: it counts the buffers the context creates, which tests running in
    // parallel on a shared one add to (even under `each_adapter_alone`: not every test takes it).
    each_adapter(|shared| {
        let ctx = &crate::common::fresh(shared);
        let mut adam = |p: &[&Tensor]| -> Box<dyn Optimizer> { Box::new(Adam::new(p, 1e-2).unwrap()) };
        let mut sgd = |p: &[&Tensor]| -> Box<dyn Optimizer> { Box::new(Sgd::new(p, 5e-2, 0.9).unwrap()) };
        for (name, opt) in [
            ("adam", &mut adam as &mut dyn FnMut(&[&Tensor]) -> Box<dyn Optimizer>),
            ("sgd", &mut sgd),
        ] {
            let (le, pe) = eager(ctx, opt);
            let (lp, pp) = planned(ctx, opt);
            assert_close(
                ctx,
                &format!("{name}: planned vs eager losses"),
                &lp,
                &le,
                PLAN_VS_EAGER,
            );
            for (k, (a, b)) in pp.iter().zip(&pe).enumerate() {
                assert_close(ctx, &format!("{name}: param {k} after 6 steps"), a, b, PLAN_VS_EAGER);
            }
            assert!(lp[5] < lp[0], "{name}: the planned loss falls: {lp:?}");
        }
    });
}

#[test]
fn compiled_step_bad_input_is_an_error() {
    let cpu = Context::cpu();
    let w = Tensor::zeros(&cpu, &[2, 1]).unwrap();
    let mut adam = Adam::new(&[&w], 1e-2).unwrap();
    let r = CompiledStep::capture(&cpu, &[&w], &[], &mut adam, |v| v[0].sum_all());
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{:?}", r.err());
    each_adapter(|ctx| {
        let w = Tensor::zeros(ctx, &[2, 1]).unwrap();
        let mut adam = Adam::new(&[&w], 1e-2).unwrap();
        // A loss of more than one element.
        let r = CompiledStep::capture(ctx, &[&w], &[], &mut adam, |v| v[0].exp());
        assert!(matches!(r, Err(Error::Shape { .. })), "{:?}", r.err());
        // An upload inside the forward is the capture's error, naming what uploaded.
        let r = CompiledStep::capture(ctx, &[&w], &[], &mut adam, |v| {
            let c = Var::constant(&Tensor::from_slice(ctx, &[2, 1], &[2.0, 3.0])?);
            v[0].mul(&c)?.sum_all()
        });
        let e = r.err().unwrap();
        assert!(
            matches!(
                e,
                Error::Unsupported {
                    op: "CompiledStep::capture",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("`Tensor::from_slice` uploads"), "{e}");
        // A parameter of another context.
        let other = Tensor::zeros(&cpu, &[2, 1]).unwrap();
        let r = CompiledStep::capture(ctx, &[&other], &[], &mut adam, |v| v[0].sum_all());
        assert!(r.is_err());
    });
}

/// A step whose forward makes its constants inside the capture (`Tensor::full`, the scalar
/// ops, the operators: issue 45) replays like the same step run eagerly.
#[test]
fn compiled_step_constants_inside_the_capture_match_eager_steps() {
    /// x (B, 8) -> (B, 4): a gated MLP written as the math reads.
    fn gated(v: &[Var], x: &Tensor, y: &Tensor) -> Result<Var> {
        let ctx = x.context();
        let two = Var::constant(&Tensor::full(ctx, &[1], 2.0)?); // (1,), made in the capture
        let h = Var::constant(x).linear(&v[0], Some(&v[1]))?; // (B, 16)
        let z = h.sigmoid()?;
        let mixed = ((1.0 - &z)? * &h.tanh()?)?.add(&(&z * &two)?)?.softplus()?; // (B, 16)
        let d = (mixed.linear(&v[2], Some(&v[3]))? - &Var::constant(y))?; // (B, 4)
        (&d * &d)?.mean_all()
    }
    each_adapter(|ctx| {
        let run = |planned: bool| -> (Vec<f32>, Vec<Vec<f32>>) {
            let (params, batches) = setup(ctx);
            let refs: Vec<&Tensor> = params.iter().collect();
            let mut adam = Adam::new(&refs, 1e-2).unwrap();
            let (x, y) = (
                Tensor::zeros(ctx, &[32, 8]).unwrap(),
                Tensor::zeros(ctx, &[32, 4]).unwrap(),
            );
            let mut losses = vec![];
            if planned {
                let step = CompiledStep::capture(ctx, &refs, &[&x, &y], &mut adam, |v| gated(v, &x, &y)).unwrap();
                for (xb, yb) in &batches {
                    x.write(xb).unwrap();
                    y.write(yb).unwrap();
                    losses.push(step.step().unwrap().item().unwrap());
                }
            } else {
                for (xb, yb) in &batches {
                    x.write(xb).unwrap();
                    y.write(yb).unwrap();
                    let tape = wgsl_compute::autograd::Tape::new(ctx);
                    let vars: Vec<Var> = params.iter().map(|p| tape.var(p).unwrap()).collect();
                    let loss = gated(&vars, &x, &y).unwrap();
                    losses.push(loss.item().unwrap());
                    adam.step_vars(&vars, &loss.backward().unwrap()).unwrap();
                }
            }
            (losses, params.iter().map(|p| p.to_vec().unwrap()).collect())
        };
        let (le, pe) = run(false);
        let (lp, pp) = run(true);
        assert_close(ctx, "constants in the capture: losses", &lp, &le, PLAN_VS_EAGER);
        for (k, (a, b)) in pp.iter().zip(&pe).enumerate() {
            assert_close(
                ctx,
                &format!("constants in the capture: param {k}"),
                a,
                b,
                PLAN_VS_EAGER,
            );
        }
    });
}

/// The capture's errors in `CompiledStep`'s own words: an op that uploads is named (the op
/// the forward called), and a tensor the forward reads that is not passed in is said to be
/// missing from `inputs`, not from the plan's `hold`.
#[test]
fn compiled_step_errors_name_the_op_and_the_missing_input() {
    each_adapter(|ctx| {
        let w = Tensor::from_slice(ctx, &[4, 3], &[0.1; 12]).unwrap();
        let mut adam = Adam::new(&[&w], 1e-2).unwrap();
        // Cross-entropy uploads its targets: the error names it.
        let x = Tensor::zeros(ctx, &[2, 4]).unwrap();
        let r = CompiledStep::capture(ctx, &[&w], &[&x], &mut adam, |v| {
            Var::constant(&x).matmul(&v[0])?.cross_entropy(&[0, 2])
        });
        let e = r.err().unwrap().to_string();
        assert!(
            e.contains("CompiledStep::capture") && e.contains("`cross_entropy`"),
            "{e}"
        );
        // A batch tensor the forward reads but `inputs` does not list.
        let forgotten = Tensor::zeros(ctx, &[2, 4]).unwrap();
        let r = CompiledStep::capture(ctx, &[&w], &[], &mut adam, |v| {
            Var::constant(&forgotten).matmul(&v[0])?.sum_all()
        });
        let e = r.err().unwrap();
        assert!(
            matches!(
                e,
                Error::Unsupported {
                    op: "CompiledStep::capture",
                    ..
                }
            ),
            "{e}"
        );
        let e = e.to_string();
        assert!(e.contains("`inputs`") && !e.contains("`hold`"), "{e}");
    });
}

/// A parameter the loss does not use (frozen) is skipped by a captured step as by an eager
/// one: it keeps its bits, and the others train.
#[test]
fn compiled_step_skips_a_frozen_parameter() {
    each_adapter(|ctx| {
        let (params, batches) = setup(ctx);
        let refs: Vec<&Tensor> = params.iter().collect();
        let before: Vec<Vec<f32>> = params.iter().map(|p| p.to_vec().unwrap()).collect();
        let mut sgd = Sgd::new(&refs, 5e-2, 0.9).unwrap();
        let (x, y) = (
            Tensor::zeros(ctx, &[32, 8]).unwrap(),
            Tensor::zeros(ctx, &[32, 16]).unwrap(),
        );
        // Only the first layer: params 2 and 3 are frozen.
        let step = CompiledStep::capture(ctx, &refs, &[&x, &y], &mut sgd, |v| {
            let d = Var::constant(&x)
                .linear(&v[0], Some(&v[1]))?
                .tanh()?
                .sub(&Var::constant(&y))?;
            d.mul(&d)?.mean_all()
        })
        .unwrap();
        for (xb, _) in &batches {
            x.write(xb).unwrap();
            step.step().unwrap();
        }
        let after: Vec<Vec<f32>> = params.iter().map(|p| p.to_vec().unwrap()).collect();
        assert_ne!(after[0], before[0], "the used weight trains");
        assert_eq!(after[2], before[2], "a frozen weight keeps its bits");
        assert_eq!(after[3], before[3], "a frozen bias keeps its bits");
    });
}
