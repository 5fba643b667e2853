//! Mixed precision (issue 44): the products recorded inside `autograd::autocast` run in F16
//! or BF16 against f32 parameters, forward and backward, within the half dtype's rounding of
//! the f32 results, with f32 outputs and gradients; the scope nests and ends; and
//! `train::LossScaler` skips a step whose gradients overflowed (halving its scale), grows
//! after finite steps, and trains a small MLP in F16 as far as f32 does, on the CPU context
//! and every adapter; a `CompiledStep` captures a BF16 forward and replays it as the eager
//! steps run.

use wgsl_compute::autograd::{autocast, Tape, Var};
use wgsl_compute::check::Rng;
use wgsl_compute::train::{Adam, CompiledStep, LossScaler, Optimizer};
use wgsl_compute::{Context, DType, Error, Tensor};

use crate::common::each_adapter;

fn each_context(mut f: impl FnMut(&Context)) {
    f(&Context::cpu());
    each_adapter(f);
}

fn tensor(ctx: &Context, shape: &[usize], seed: u64) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_slice(ctx, shape, &Rng::new(seed).vec_range(n, -1.0, 1.0)).unwrap()
}

/// The four products of x (5, 7), w (7, 3), bias (3,), residual (5, 3) in `dtype` (None: no
/// scope): each output and the gradients of sum(out * out) for x, w and bias.
fn products(ctx: &Context, dtype: Option<DType>) -> Vec<(String, Vec<f32>)> {
    let mut out = vec![];
    for op in ["matmul", "linear", "linear_gelu", "linear_residual"] {
        let tape = Tape::new(ctx);
        let x = tape.var(&tensor(ctx, &[5, 7], 1)).unwrap();
        let w = tape.var(&tensor(ctx, &[7, 3], 2)).unwrap();
        let b = tape.var(&tensor(ctx, &[3], 3)).unwrap();
        let r = tape.var(&tensor(ctx, &[5, 3], 4)).unwrap();
        let run = || match op {
            "matmul" => x.matmul(&w),
            "linear" => x.linear(&w, Some(&b)),
            "linear_gelu" => x.linear_gelu(&w, &b),
            _ => x.linear_residual(&w, &b, &r),
        };
        let y = autocast(dtype.unwrap_or(DType::F32), run).unwrap();
        assert_eq!(y.tensor().dtype(), DType::F32, "{op}: the output stays f32");
        let grads = (&y * &y).unwrap().sum_all().unwrap().backward().unwrap();
        out.push((format!("{op} out"), y.tensor().to_vec().unwrap()));
        let mut wanted = vec![("dx", &x), ("dw", &w)];
        if op != "matmul" {
            wanted.push(("dbias", &b));
        }
        if op == "linear_residual" {
            wanted.push(("dresidual", &r));
        }
        for (name, v) in wanted {
            let g = grads.get(v).unwrap();
            assert_eq!(
                g.dtype(),
                DType::F32,
                "{op} {name}: the gradient of an f32 variable is f32"
            );
            out.push((format!("{op} {name}"), g.to_vec().unwrap()));
        }
    }
    // Attention from a packed q|k|v projection: 2 rows of 3 positions, 2 heads of 2.
    let tape = Tape::new(ctx);
    let qkv = tape.var(&tensor(ctx, &[6, 12], 5)).unwrap(); // (B T, 3C)
    let run = || Var::packed_attention(&qkv, 2, 2);
    let y = autocast(dtype.unwrap_or(DType::F32), run).unwrap();
    assert_eq!(y.tensor().dtype(), DType::F32, "packed_attention: the output stays f32");
    let grads = (&y * &y).unwrap().sum_all().unwrap().backward().unwrap();
    out.push(("packed_attention out".into(), y.tensor().to_vec().unwrap()));
    let g = grads.get(&qkv).unwrap();
    assert_eq!(g.dtype(), DType::F32, "packed_attention dqkv is f32");
    out.push(("packed_attention dqkv".into(), g.to_vec().unwrap()));
    out
}

#[test]
fn autocast_products_match_f32_within_the_half_rounding_forward_and_backward() {
    each_context(|ctx| {
        let full = products(ctx, None);
        // Rounding both operands to the half dtype, relative to the largest magnitude of each
        // result: about 2^-11 (F16) or 2^-8 (BF16) per operand, summed over K = 7 products.
        for (dtype, tol) in [(DType::F16, 4e-3), (DType::BF16, 3e-2)] {
            let half = products(ctx, Some(dtype));
            let mut largest_rel = 0f32;
            for ((name, a), (_, b)) in full.iter().zip(&half) {
                let scale = a.iter().fold(0f32, |m, v| m.max(v.abs())).max(1e-6);
                let err = a.iter().zip(b).fold(0f32, |m, (p, q)| m.max((p - q).abs()));
                assert!(
                    err <= tol * scale,
                    "{dtype} {name} on {}: {err} > {tol} x {scale}",
                    ctx.info().name
                );
                largest_rel = largest_rel.max(err / scale);
            }
            // The scope took effect: the results are not the f32 ones.
            assert!(
                largest_rel > 0.0,
                "{dtype} on {}: no product ran in half",
                ctx.info().name
            );
        }
        // Outside any scope, and inside an F32 scope nested in an F16 one: f32, bit for bit.
        let nested = autocast(DType::F16, || products_f32_inside(ctx));
        assert_eq!(full, nested, "an F32 scope inside an F16 one is f32");
        assert_eq!(full, products(ctx, None), "the scope ended");
    });
}

/// `a` (m, k) @ `b` (k, n) in f64 on the host (the values as given: already rounded).
fn host_matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|l| a[i * k + l] as f64 * b[l * n + j] as f64).sum::<f64>() as f32;
        }
    }
    out
}

/// `t` (r, c) transposed on the host.
fn host_t(t: &[f32], r: usize, c: usize) -> Vec<f32> {
    (0..c * r).map(|i| t[(i % r) * c + i / r]).collect()
}

/// `t` rounded to `dtype` and widened back, as the products read it.
fn rounded(ctx: &Context, t: &[f32], dtype: DType) -> Vec<f32> {
    Tensor::from_slice(ctx, &[t.len()], t)
        .unwrap()
        .to_dtype(dtype)
        .unwrap()
        .to_vec()
        .unwrap()
}

#[test]
fn autocast_matmul_reads_every_operand_of_the_forward_and_backward_in_half() {
    // y = x @ w and L = sum(y * c) for a fixed c, so dL/dy = c: the forward reads x and w
    // rounded, the backward c rounded (dx = c w^T, dw = x^T c). Each is held to an f64
    // product of exactly those rounded values, tightly enough that an operand left in f32
    // (F16 rounds c by up to 2^-11) fails.
    each_context(|ctx| {
        let (m, k, n) = (6, 9, 5);
        let (xv, wv, cv) = (
            tensor(ctx, &[m, k], 51),
            tensor(ctx, &[k, n], 52),
            tensor(ctx, &[m, n], 53),
        );
        let (xs, ws, cs) = (xv.to_vec().unwrap(), wv.to_vec().unwrap(), cv.to_vec().unwrap());
        for dtype in [DType::F16, DType::BF16] {
            let tape = Tape::new(ctx);
            let (x, w) = (tape.var(&xv).unwrap(), tape.var(&wv).unwrap());
            let y = autocast(dtype, || x.matmul(&w)).unwrap();
            let grads = (&y * &Var::constant(&cv))
                .unwrap()
                .sum_all()
                .unwrap()
                .backward()
                .unwrap();
            let (xh, wh, ch) = (
                rounded(ctx, &xs, dtype),
                rounded(ctx, &ws, dtype),
                rounded(ctx, &cs, dtype),
            );
            let checks = [
                ("y", y.tensor().to_vec().unwrap(), host_matmul(&xh, &wh, m, k, n)),
                (
                    "dx",
                    grads.get(&x).unwrap().to_vec().unwrap(),
                    host_matmul(&ch, &host_t(&wh, k, n), m, n, k),
                ),
                (
                    "dw",
                    grads.get(&w).unwrap().to_vec().unwrap(),
                    host_matmul(&host_t(&xh, m, k), &ch, k, m, n),
                ),
            ];
            for (name, got, want) in checks {
                let scale = want.iter().fold(0f32, |a, v| a.max(v.abs()));
                let err = got.iter().zip(&want).fold(0f32, |a, (p, q)| a.max((p - q).abs()));
                assert!(
                    err <= 1e-5 * scale,
                    "{dtype} {name} on {}: {err} against {scale}",
                    ctx.info().name
                );
            }
        }
    });
}

fn products_f32_inside(ctx: &Context) -> Vec<(String, Vec<f32>)> {
    autocast(DType::F32, || products(ctx, None))
}

#[test]
fn loss_scaler_skips_an_overflowed_step_and_grows_after_finite_ones() {
    each_context(|ctx| {
        let w0 = tensor(ctx, &[4, 2], 5);
        let before = w0.to_vec().unwrap();
        let x = tensor(ctx, &[3, 4], 6);
        let mut adam = Adam::new(&[&w0], 1e-2).unwrap();
        let step = |scaler: &mut LossScaler, adam: &mut Adam| {
            let tape = Tape::new(ctx);
            let w = tape.var(&w0).unwrap();
            let y = autocast(DType::F16, || Var::constant(&x).matmul(&w)).unwrap();
            let loss = (&y * &y).unwrap().mean_all().unwrap();
            let mut grads = scaler.scale_loss(&loss).unwrap().backward().unwrap();
            scaler.step(adam, &[w], &mut grads).unwrap()
        };
        // A scale that overflows the scaled loss: skipped, the weights untouched, S halved.
        let mut scaler = LossScaler::with(f32::MAX, 2).unwrap();
        assert!(
            !step(&mut scaler, &mut adam),
            "an inf gradient is not stepped on ({})",
            ctx.info().name
        );
        assert_eq!(w0.to_vec().unwrap(), before);
        assert_eq!((scaler.scale(), scaler.skipped(), adam.steps()), (f32::MAX * 0.5, 1, 0));
        // Unscaled, the gradients are those of the unscaled loss (S a power of two scales the
        // f16 gradient exactly).
        let mut scaler = LossScaler::with(1024.0, 100).unwrap();
        let tape = Tape::new(ctx);
        let w = tape.var(&w0).unwrap();
        let y = autocast(DType::F16, || Var::constant(&x).matmul(&w)).unwrap();
        let loss = (&y * &y).unwrap().mean_all().unwrap();
        let plain = loss.backward_retained(None).unwrap().get(&w).unwrap().to_vec().unwrap();
        let mut grads = scaler.scale_loss(&loss).unwrap().backward().unwrap();
        let scaled = grads.get(&w).unwrap().to_vec().unwrap();
        assert!(scaler.unscale(std::slice::from_ref(&w), &mut grads).unwrap());
        assert_eq!(
            grads.get(&w).unwrap().to_vec().unwrap(),
            plain,
            "unscaled = the plain gradient"
        );
        assert_ne!(scaled, plain, "the scaled gradient is S times larger");
        // Finite steps: taken, and S doubles after two of them.
        let mut scaler = LossScaler::with(4.0, 2).unwrap();
        assert!(step(&mut scaler, &mut adam));
        assert_eq!(scaler.scale(), 4.0);
        assert!(step(&mut scaler, &mut adam));
        assert_eq!((scaler.scale(), scaler.skipped(), adam.steps()), (8.0, 0, 2));
        assert_ne!(w0.to_vec().unwrap(), before);
    });
}

#[test]
fn loss_scaler_settings_are_checked() {
    for (scale, interval, arg) in [
        (0.0, 1, "scale"),
        (f32::NAN, 1, "scale"),
        (f32::INFINITY, 1, "scale"),
        (1.0, 0, "growth_interval"),
    ] {
        match LossScaler::with(scale, interval) {
            Err(Error::Value { op, arg: a, .. }) => assert_eq!((op, a), ("LossScaler::with", arg)),
            other => panic!("LossScaler::with({scale}, {interval}): {other:?}"),
        }
    }
    assert_eq!(LossScaler::new().scale(), 65536.0);
}

/// 60 Adam steps of a 2-layer MLP regression (x (32, 8) -> tanh (32, 16) -> (32, 4)) with
/// the products in `dtype` (None: f32) and, for F16, a loss scaler; returns the last loss.
fn train_mlp(ctx: &Context, dtype: Option<DType>) -> f32 {
    let params: Vec<Tensor> = [(vec![8, 16], 11), (vec![16], 12), (vec![16, 4], 13), (vec![4], 14)]
        .iter()
        .map(|(s, seed)| tensor(ctx, s, *seed).mul_scalar(0.5).unwrap())
        .collect();
    let (x, y) = (tensor(ctx, &[32, 8], 15), tensor(ctx, &[32, 4], 16));
    let mut adam = Adam::new(&params.iter().collect::<Vec<_>>(), 1e-2).unwrap();
    let mut scaler = LossScaler::new();
    let mut last = f32::NAN;
    for _ in 0..60 {
        let tape = Tape::new(ctx);
        let v: Vec<Var> = params.iter().map(|p| tape.var(p).unwrap()).collect();
        let forward = || -> wgsl_compute::Result<Var> {
            let h = Var::constant(&x).linear(&v[0], Some(&v[1]))?.tanh()?;
            let d = (h.linear(&v[2], Some(&v[3]))? - Var::constant(&y))?;
            (&d * &d)?.mean_all()
        };
        let loss = autocast(dtype.unwrap_or(DType::F32), forward).unwrap();
        last = loss.item().unwrap();
        if dtype == Some(DType::F16) {
            let mut grads = scaler.scale_loss(&loss).unwrap().backward().unwrap();
            scaler.step(&mut adam, &v, &mut grads).unwrap();
        } else {
            adam.step_vars(&v, &loss.backward().unwrap()).unwrap();
        }
    }
    last
}

#[test]
fn mixed_precision_trains_a_small_mlp_as_far_as_f32() {
    each_context(|ctx| {
        let full = train_mlp(ctx, None);
        for dtype in [DType::F16, DType::BF16] {
            let half = train_mlp(ctx, Some(dtype));
            assert!(
                (half - full).abs() <= 0.05 * full.max(1e-3),
                "{dtype} on {}: last loss {half} against f32's {full}",
                ctx.info().name
            );
        }
    });
}

/// A tanh MLP's mean squared error with its products in `dtype`: x (32, 8) -> (32, 4) against y.
fn mlp_mse(dtype: DType, v: &[Var], x: &Tensor, y: &Tensor) -> wgsl_compute::Result<Var> {
    autocast(dtype, || {
        let h = Var::constant(x).linear(&v[0], Some(&v[1]))?.tanh()?; // (32, 16)
        let d = (h.linear(&v[2], Some(&v[3]))? - Var::constant(y))?; // (32, 4)
        (&d * &d)?.mean_all() // ()
    })
}

#[test]
fn a_compiled_step_captures_autocast_products_like_eager_steps() {
    each_adapter(|ctx| {
        let init = |ctx: &Context| mlp_setup(ctx).0;
        let batches = mlp_setup(ctx).1;
        // Eager.
        let params = init(ctx);
        let mut adam = Adam::new(&params.iter().collect::<Vec<_>>(), 1e-2).unwrap();
        let mut eager = vec![];
        for (x, y) in &batches {
            let tape = Tape::new(ctx);
            let v: Vec<Var> = params.iter().map(|p| tape.var(p).unwrap()).collect();
            let loss = mlp_mse(DType::BF16, &v, x, y).unwrap();
            eager.push(loss.item().unwrap());
            adam.step_vars(&v, &loss.backward().unwrap()).unwrap();
        }
        // Captured once, replayed over the same batches.
        let planned_params = init(ctx);
        let refs: Vec<&Tensor> = planned_params.iter().collect();
        let mut adam = Adam::new(&refs, 1e-2).unwrap();
        let (x, y) = (
            Tensor::zeros(ctx, &[32, 8]).unwrap(),
            Tensor::zeros(ctx, &[32, 4]).unwrap(),
        );
        let step = wgsl_compute::train::CompiledStep::capture(ctx, &refs, &[&x, &y], &mut adam, |v| {
            mlp_mse(DType::BF16, v, &x, &y)
        })
        .unwrap();
        let mut planned = vec![];
        for (xb, yb) in &batches {
            x.write(&xb.to_vec().unwrap()).unwrap();
            y.write(&yb.to_vec().unwrap()).unwrap();
            planned.push(step.step().unwrap().to_vec().unwrap()[0]);
        }
        for (i, (p, e)) in planned.iter().zip(&eager).enumerate() {
            assert!(
                (p - e).abs() <= 1e-4 * e.abs().max(1.0),
                "step {i} on {}: planned {p}, eager {e}",
                ctx.info().name
            );
        }
        for (k, (a, b)) in planned_params.iter().zip(&params).enumerate() {
            let (a, b) = (a.to_vec().unwrap(), b.to_vec().unwrap());
            let err = a.iter().zip(&b).fold(0f32, |m, (p, q)| m.max((p - q).abs()));
            assert!(err <= 1e-4, "param {k} on {}: planned vs eager {err}", ctx.info().name);
        }
    });
}

/// The fused head's loss and its gradients for x (R, C) and w (V, C): (loss, dx, dw).
fn head(ctx: &Context, dtype: Option<DType>, rows: usize, c: usize, v: usize) -> (f32, Vec<f32>, Vec<f32>) {
    let tape = Tape::new(ctx);
    let x = tape.var(&tensor(ctx, &[rows, c], 51)).unwrap();
    let w = tape.var(&tensor(ctx, &[v, c], 52).mul_scalar(0.5).unwrap()).unwrap();
    let targets: Vec<u32> = (0..rows).map(|r| ((r * 7919) % v) as u32).collect();
    // Blocks of 64 rows: several of them, the last one short.
    let run = || Var::head_cross_entropy(&x, &w, targets.as_slice(), Some(64));
    let loss = autocast(dtype.unwrap_or(DType::F32), run).unwrap();
    let grads = loss.backward().unwrap();
    let g = |v: &Var| grads.get(v).unwrap().to_vec().unwrap();
    (loss.item().unwrap(), g(&x), g(&w))
}

#[test]
fn the_fused_head_inside_autocast_matches_f32_and_keeps_its_small_gradients() {
    each_context(|ctx| {
        // 200 rows over a vocabulary of 333: d(mean)/d logits is about 1.5e-5, below F16's
        // smallest normal value; the head makes it 2^15 times larger for its F16 products.
        let (rows, c, v) = (200, 24, 333);
        let (loss, dx, dw) = head(ctx, None, rows, c, v);
        for (dtype, tol) in [(DType::F16, 1e-2), (DType::BF16, 5e-2)] {
            let (hl, hdx, hdw) = head(ctx, Some(dtype), rows, c, v);
            assert!(
                (hl - loss).abs() <= tol * loss.abs(),
                "{dtype} loss on {}: {hl} against {loss}",
                ctx.info().name
            );
            for (name, a, b) in [("dx", &dx, &hdx), ("dw", &dw, &hdw)] {
                let scale = a.iter().fold(0f32, |m, v| m.max(v.abs()));
                let err = a.iter().zip(b.iter()).fold(0f32, |m, (p, q)| m.max((p - q).abs()));
                assert!(
                    err <= tol * scale,
                    "{dtype} {name} on {}: {err} > {tol} x {scale}",
                    ctx.info().name
                );
            }
        }
    });
}

/// `mlp_mse`'s parameters, scaled to 0.5, and four batches (x (32, 8), y (32, 4)).
fn mlp_setup(ctx: &Context) -> (Vec<Tensor>, Vec<(Tensor, Tensor)>) {
    let params = [(vec![8, 16], 21), (vec![16], 22), (vec![16, 4], 23), (vec![4], 24)]
        .iter()
        .map(|(s, seed)| tensor(ctx, s, *seed).mul_scalar(0.5).unwrap())
        .collect();
    let batches = (0..4)
        .map(|i| (tensor(ctx, &[32, 8], 30 + i), tensor(ctx, &[32, 4], 40 + i)))
        .collect();
    (params, batches)
}

#[test]
fn a_captured_loss_scaled_step_matches_eager_steps_and_skips_on_the_device() {
    each_adapter(|ctx| {
        let init = |ctx: &Context| mlp_setup(ctx).0;
        let batches = mlp_setup(ctx).1;
        // Eager, S = 1024 doubling after two finite steps.
        let params = init(ctx);
        let mut adam = Adam::new(&params.iter().collect::<Vec<_>>(), 1e-2).unwrap();
        let mut scaler = LossScaler::with(1024.0, 2).unwrap();
        let mut eager = vec![];
        for (x, y) in &batches {
            let tape = Tape::new(ctx);
            let v: Vec<Var> = params.iter().map(|p| tape.var(p).unwrap()).collect();
            let loss = mlp_mse(DType::F16, &v, x, y).unwrap();
            eager.push(loss.item().unwrap());
            let mut grads = scaler.scale_loss(&loss).unwrap().backward().unwrap();
            assert!(scaler.step(&mut adam, &v, &mut grads).unwrap());
        }
        assert_eq!(scaler.scale(), 4096.0, "two doublings in four finite steps");
        // Captured once, replayed over the same batches.
        let capture = |scaler: &mut LossScaler| {
            let params = init(ctx);
            let refs: Vec<&Tensor> = params.iter().collect();
            let mut adam = Adam::new(&refs, 1e-2).unwrap();
            let (x, y) = (
                Tensor::zeros(ctx, &[32, 8]).unwrap(),
                Tensor::zeros(ctx, &[32, 4]).unwrap(),
            );
            let step = CompiledStep::capture_scaled(ctx, &refs, &[&x, &y], &mut adam, scaler, |v| {
                mlp_mse(DType::F16, v, &x, &y)
            })
            .unwrap();
            (params, step, x, y)
        };
        let mut planned_scaler = LossScaler::with(1024.0, 2).unwrap();
        let (planned_params, step, x, y) = capture(&mut planned_scaler);
        let mut planned = vec![];
        for (xb, yb) in &batches {
            x.write(&xb.to_vec().unwrap()).unwrap();
            y.write(&yb.to_vec().unwrap()).unwrap();
            planned.push(step.step().unwrap().to_vec().unwrap()[0]);
        }
        let name = ctx.info().name.clone();
        for (i, (p, e)) in planned.iter().zip(&eager).enumerate() {
            assert!(
                (p - e).abs() <= 1e-5 * e.abs().max(1.0),
                "step {i} on {name}: planned {p}, eager {e}"
            );
        }
        for (p, e) in planned_params.iter().zip(&params) {
            let (p, e) = (p.to_vec().unwrap(), e.to_vec().unwrap());
            let err = p.iter().zip(&e).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
            assert!(err <= 1e-5, "parameters on {name}: {err}");
        }
        planned_scaler.sync().unwrap();
        assert_eq!(
            (planned_scaler.scale(), planned_scaler.skipped()),
            (4096.0, 0),
            "on {name}"
        );
        // A scale that overflows: the replay changes no parameter and halves S on the device.
        let mut scaler = LossScaler::with(f32::MAX, 2).unwrap();
        let (params, step, x, y) = capture(&mut scaler);
        let before: Vec<Vec<f32>> = params.iter().map(|p| p.to_vec().unwrap()).collect();
        x.write(&batches[0].0.to_vec().unwrap()).unwrap();
        y.write(&batches[0].1.to_vec().unwrap()).unwrap();
        step.step().unwrap();
        let after: Vec<Vec<f32>> = params.iter().map(|p| p.to_vec().unwrap()).collect();
        assert_eq!(before, after, "a skipped replay moves nothing on {name}");
        scaler.sync().unwrap();
        assert_eq!((scaler.scale(), scaler.skipped()), (f32::MAX * 0.5, 1), "on {name}");
    });
}

#[test]
fn a_loss_scaled_capture_needs_an_optimiser_that_skips_on_the_device() {
    each_adapter(|ctx| {
        let w = tensor(ctx, &[8, 4], 3);
        let x = tensor(ctx, &[32, 8], 4);
        let mut sgd = wgsl_compute::train::Sgd::new(&[&w], 0.1, 0.0).unwrap();
        let mut scaler = LossScaler::new();
        let got = CompiledStep::capture_scaled(ctx, &[&w], &[&x], &mut sgd, &mut scaler, |v| {
            autocast(DType::F16, || Var::constant(&x).matmul(&v[0]))?.mean_all()
        });
        match got {
            Err(Error::Unsupported { message, .. }) => assert!(message.contains("Adam"), "{message}"),
            other => panic!("expected Unsupported, got {:?}", other.err()),
        }
    });
}
