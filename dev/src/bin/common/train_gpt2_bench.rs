//! The bench's `gpt2_train` suite: one training step of a GPT-2 on the autograd tape
//! (`models::gpt2::Trainable`: forward, `backward`, Adam), eager, with the pool's peak bytes
//! in use over the step, then the same step captured as a plan (`train::CompiledStep`). Full size: the 124M shape (12 layers, C 768, V 50257) at batch 8,
//! T 256, fp32, random weights; `--quick`: the tiny config at batch 2, T 32. Its peers,
//! PyTorch eager and torch.compile on the same shapes, are `benches/gpt2_train_torch.py`.

use std::time::Instant;

use wgsl_compute::autograd::{autocast, Tape};
use wgsl_compute::check::Rng;
use wgsl_compute::models::gpt2::{self, Trainable};
use wgsl_compute::train::{Adam, CompiledStep, LossScaler, Optimizer};
use wgsl_compute::{Context, DType, Result, Tensor};

/// What one run measured.
pub struct TrainFigures {
    /// "12 layers, C 768, batch 8, T 256".
    pub shape: String,
    /// Parameters in all.
    pub params: usize,
    /// Median wall ms of a whole step (forward, backward, Adam, the loss read back).
    pub step_ms: f64,
    /// Median ms of the forward alone (to the loss on the host), and of forward + backward.
    pub forward_ms: f64,
    pub forward_backward_ms: f64,
    /// Peak bytes in use during a step, and before it (parameters and Adam's moments).
    pub peak_bytes: u64,
    pub resident_bytes: u64,
    /// Dispatches of one step.
    pub dispatches: usize,
    /// The losses of the timed steps, in order (they should fall: one batch repeated).
    pub losses: Vec<f32>,
    /// Device time of one step (ms) in all and in matmul kernels, from the profiler over
    /// a few steps (None where the bench's own `--profile` holds the profiler).
    pub device_ms: Option<(f64, f64)>,
    /// The other kernels of that profile, largest first: (name, dispatches a step, ms a step).
    pub other_kernels: Vec<(String, f64, f64)>,
    /// Median wall ms of a mixed-precision step: the forward inside `autocast(BF16)` (the
    /// products in bf16, f32 sums), parameters and Adam f32, no loss scaling.
    pub mixed_step_ms: f64,
    /// Median wall ms of the mixed step with F16 products and dynamic loss scaling
    /// (`train::LossScaler`, as `torch.autocast(float16)` with a `GradScaler` runs it), and
    /// that step's profiled kernels, products included, largest first (empty under `--profile`).
    pub mixed_f16_step_ms: f64,
    pub mixed_f16_kernels: Vec<(String, f64, f64)>,
    /// Median wall ms of that F16 step captured as a plan (`CompiledStep::capture_scaled`:
    /// the loss scale on the device).
    pub mixed_f16_planned_step_ms: f64,
    /// Median wall ms of the same fp32 step captured once as a plan (`train::CompiledStep`,
    /// the batch's ids written to device tensors before each replay), its loss read back;
    /// and the bytes in use once it is captured (the plan holds its intermediates).
    pub planned_step_ms: f64,
    pub planned_resident_bytes: u64,
}

/// Runs the suite on `ctx`.
pub fn bench(ctx: &Context, quick: bool) -> Result<TrainFigures> {
    let (config, batch, t) = if quick {
        (gpt2::tiny::tiny_config(), 2, 32)
    } else {
        (gpt2::Config::default(), 8, 256)
    };
    let bytes = gpt2::random_checkpoint(&config, 1, DType::F32)?;
    let weights = gpt2::Weights::from_safetensors(config.clone(), &bytes, "random GPT-2-shaped")?;
    let model = Trainable::new(ctx, &weights)?;
    drop(weights);
    let mut adam = Adam::new(&model.params().tensors(), 1e-4)?;
    let mut rng = Rng::new(11);
    let tokens: Vec<u32> = (0..batch * (t + 1))
        .map(|_| rng.below(config.vocab_size) as u32)
        .collect();
    let starts: Vec<usize> = (0..batch).map(|r| r * (t + 1)).collect();
    let (x, y) = gpt2::train::windows(&tokens, &starts, t)?;

    let forward = || -> Result<f32> {
        let vars = model.vars(&Tape::new(ctx))?;
        Ok(model.loss_var(&vars, &x, &y, batch)?.tensor().to_vec()?[0])
    };
    let forward_backward = || -> Result<()> {
        let vars = model.vars(&Tape::new(ctx))?;
        let grads = model.loss_var(&vars, &x, &y, batch)?.backward()?;
        drop(grads);
        ctx.synchronize()
    };
    // F16 products need a loss scale (their gradients underflow); F32 and BF16 do not.
    let mut scaler = LossScaler::new();
    let mut train_step = |amp: Option<DType>| -> Result<f32> {
        let vars = model.vars(&Tape::new(ctx))?;
        let loss = match amp {
            Some(d) => autocast(d, || model.loss_var(&vars, &x, &y, batch))?,
            None => model.loss_var(&vars, &x, &y, batch)?,
        };
        if amp == Some(DType::F16) {
            let mut grads = scaler.scale_loss(&loss)?.backward()?;
            scaler.step(&mut adam, &vars, &mut grads)?;
            return Ok(loss.tensor().to_vec()?[0]);
        }
        let grads = loss.backward()?;
        adam.step_vars(&vars, &grads)?;
        drop(grads);
        Ok(loss.tensor().to_vec()?[0])
    };
    let median = |mut f: Box<dyn FnMut() -> Result<()> + '_>, warmup: usize, repeat: usize| -> Result<f64> {
        for _ in 0..warmup {
            f()?;
        }
        let mut times = vec![];
        for _ in 0..repeat {
            let start = Instant::now();
            f()?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(|a, b| a.total_cmp(b));
        Ok(times[times.len() / 2])
    };
    let (warmup, repeat) = if quick { (2, 5) } else { (3, 10) };

    // Adam's moments exist after the first step: the resident bytes are read after it.
    train_step(None)?;
    ctx.synchronize()?;
    let resident_bytes = ctx.pool_stats().in_use;
    ctx.reset_pool_peak();
    let before = ctx.dispatch_count();
    train_step(None)?;
    let dispatches = ctx.dispatch_count() - before;
    let peak_bytes = ctx.pool_stats().peak_in_use;
    let forward_ms = median(Box::new(|| forward().map(drop)), warmup, repeat)?;
    let forward_backward_ms = median(Box::new(forward_backward), warmup, repeat)?;
    let mut losses = vec![];
    let step_ms = median(
        Box::new(|| {
            losses.push(train_step(None)?);
            Ok(())
        }),
        warmup,
        repeat,
    )?;
    // Where a step's time goes on the device: every dispatch of a few steps timed; (device
    // ms a step, matmul ms a step, every kernel as (name, dispatches a step, ms a step)).
    let mut profile_of = |amp: Option<DType>| -> Result<Option<(f64, f64, Vec<(String, f64, f64)>)>> {
        if ctx.profiling() {
            return Ok(None);
        }
        let n = 3;
        ctx.set_profiling(true);
        ctx.reset_profile()?;
        for _ in 0..n {
            train_step(amp)?;
        }
        let profile = ctx.profile()?;
        ctx.set_profiling(false);
        let per_step = |s: f64| s * 1e3 / n as f64;
        let matmul: f64 = profile
            .kernels
            .iter()
            .filter(|k| k.name.starts_with("ops/matmul/"))
            .map(|k| k.seconds)
            .sum();
        let kernels = profile
            .kernels
            .iter()
            .map(|k| (k.name.clone(), k.calls as f64 / n as f64, per_step(k.seconds)))
            .collect();
        Ok(Some((per_step(profile.total_seconds()), per_step(matmul), kernels)))
    };
    let (device_ms, other_kernels) = match profile_of(None)? {
        Some((busy, matmul, kernels)) => (
            Some((busy, matmul)),
            kernels
                .into_iter()
                .filter(|k| !k.0.starts_with("ops/matmul/"))
                .collect(),
        ),
        None => (None, vec![]),
    };
    let mixed_f16_kernels = profile_of(Some(DType::F16))?.map(|p| p.2).unwrap_or_default();
    // The mixed-precision step (bf16 products, as torch.autocast(bfloat16) runs them).
    let mut mixed_losses = vec![];
    let mixed_step_ms = median(
        Box::new(|| {
            mixed_losses.push(train_step(Some(DType::BF16))?);
            Ok(())
        }),
        warmup,
        repeat,
    )?;
    eprintln!("gpt2_train mixed (bf16 products) losses of the timed steps: {mixed_losses:?}");
    let mut f16_losses = vec![];
    let mixed_f16_step_ms = median(
        Box::new(|| {
            f16_losses.push(train_step(Some(DType::F16))?);
            Ok(())
        }),
        warmup,
        repeat,
    )?;
    eprintln!("gpt2_train mixed (f16 products, loss scaling) losses of the timed steps: {f16_losses:?}");
    // The fp32 step as a plan: the ids on the device, written each step as a loop would.
    let n = batch * t;
    let (ids, targets) = (Tensor::zeros(ctx, &[n])?, Tensor::zeros(ctx, &[n])?);
    let params = model.params().tensors();
    let step = CompiledStep::capture(ctx, &params, &[&ids, &targets], &mut adam, |v| {
        model.loss_var(v, &ids, &targets, batch)
    })?;
    ctx.synchronize()?;
    let planned_resident_bytes = ctx.pool_stats().in_use;
    // A plan's replays timed as a loop runs them: the batch's ids written, the replay, its
    // loss read back; (median ms, the losses).
    let time_replays = |step: &CompiledStep| -> Result<(f64, Vec<f32>)> {
        let mut losses = vec![];
        let ms = median(
            Box::new(|| {
                ids.write_ids(&x, config.vocab_size)?;
                targets.write_ids(&y, config.vocab_size)?;
                losses.push(step.step()?.to_vec()?[0]);
                Ok(())
            }),
            warmup,
            repeat,
        )?;
        Ok((ms, losses))
    };
    let (planned_step_ms, planned_losses) = time_replays(&step)?;
    eprintln!("gpt2_train planned losses of the timed steps: {planned_losses:?}");
    drop(step);
    // The F16 mixed step as a plan: its loss scale, overflow test and skip on the device.
    let mut planned_scaler = LossScaler::new();
    let step = CompiledStep::capture_scaled(ctx, &params, &[&ids, &targets], &mut adam, &mut planned_scaler, |v| {
        autocast(DType::F16, || model.loss_var(v, &ids, &targets, batch))
    })?;
    let (mixed_f16_planned_step_ms, f16_planned_losses) = time_replays(&step)?;
    planned_scaler.sync()?;
    eprintln!(
        "gpt2_train planned F16 losses of the timed steps: {f16_planned_losses:?}; loss scale {} after them, {} skipped",
        planned_scaler.scale(),
        planned_scaler.skipped()
    );
    Ok(TrainFigures {
        mixed_f16_planned_step_ms,
        planned_step_ms,
        planned_resident_bytes,
        mixed_step_ms,
        mixed_f16_step_ms,
        mixed_f16_kernels,
        device_ms,
        other_kernels,
        shape: format!("{} layers, C {}, batch {batch}, T {t}", config.n_layer, config.n_embd),
        params: model.parameter_count(),
        step_ms,
        forward_ms,
        forward_backward_ms,
        peak_bytes,
        resident_bytes,
        dispatches,
        losses,
    })
}

/// One product of the step: its name, how many the step runs, and the operands' shapes and
/// views: (a's stored shape, transposed?), (b's, transposed?), batch.
struct Product {
    name: &'static str,
    per_step: usize,
    a: (&'static [usize], bool),
    b: (&'static [usize], bool),
}

/// The step's products at GPT-2 124M's shape (batch 8, T 256: rows 2048, C 768, 12 heads of
/// 64), each timed alone with the views the tape gives it, operands in `dtype` (F32, or F16
/// as `autocast(F16)` hands them over): ms and TFLOP/s each, and the sum over a step's counts.
pub fn products(ctx: &Context, dtype: wgsl_compute::DType) -> Result<Vec<(String, usize, f64, f64)>> {
    use wgsl_compute::{ops, Tensor};
    // Stored shapes; `true`: the product reads the transpose of the last two axes.
    let list = [
        Product {
            name: "x @ W, C -> 3C (qkv)",
            per_step: 12,
            a: (&[2048, 768], false),
            b: (&[768, 2304], false),
        },
        Product {
            name: "x @ W, C -> C (attn proj)",
            per_step: 12,
            a: (&[2048, 768], false),
            b: (&[768, 768], false),
        },
        Product {
            name: "x @ W, C -> 4C (fc, and its recompute)",
            per_step: 24,
            a: (&[2048, 768], false),
            b: (&[768, 3072], false),
        },
        Product {
            name: "x @ W, 4C -> C (mlp proj)",
            per_step: 12,
            a: (&[2048, 3072], false),
            b: (&[3072, 768], false),
        },
        Product {
            name: "g @ W^T, 3C -> C (qkv dx)",
            per_step: 12,
            a: (&[2048, 2304], false),
            b: (&[768, 2304], true),
        },
        Product {
            name: "g @ W^T, C -> C (attn proj dx)",
            per_step: 12,
            a: (&[2048, 768], false),
            b: (&[768, 768], true),
        },
        Product {
            name: "g @ W^T, 4C -> C (fc dx)",
            per_step: 12,
            a: (&[2048, 3072], false),
            b: (&[768, 3072], true),
        },
        Product {
            name: "g @ W^T, C -> 4C (mlp dx)",
            per_step: 12,
            a: (&[2048, 768], false),
            b: (&[3072, 768], true),
        },
        Product {
            name: "x^T @ g, C x 3C (qkv dW)",
            per_step: 12,
            a: (&[2048, 768], true),
            b: (&[2048, 2304], false),
        },
        Product {
            name: "x^T @ g, C x C (attn proj dW)",
            per_step: 12,
            a: (&[2048, 768], true),
            b: (&[2048, 768], false),
        },
        Product {
            name: "x^T @ g, C x 4C (fc dW)",
            per_step: 12,
            a: (&[2048, 768], true),
            b: (&[2048, 3072], false),
        },
        Product {
            name: "x^T @ g, 4C x C (mlp dW)",
            per_step: 12,
            a: (&[2048, 3072], true),
            b: (&[2048, 768], false),
        },
        Product {
            name: "q @ k^T per head (96 x 256 x 64 x 256)",
            per_step: 12,
            a: (&[96, 256, 64], false),
            b: (&[96, 256, 64], true),
        },
        Product {
            name: "P @ v per head (96 x 256 x 256 x 64)",
            per_step: 12,
            a: (&[96, 256, 256], false),
            b: (&[96, 256, 64], false),
        },
        Product {
            name: "P^T @ g per head (standing for the 4 attention-backward products)",
            per_step: 48,
            a: (&[96, 256, 256], true),
            b: (&[96, 256, 64], false),
        },
    ];
    let mut rng = Rng::new(5);
    let mut rows = vec![];
    for p in &list {
        let make = |shape: &[usize], rng: &mut Rng| -> Result<Tensor> {
            let n = shape.iter().product();
            Tensor::from_slice(ctx, shape, &rng.vec_range(n, -1.0, 1.0))?.to_dtype(dtype)
        };
        let view = |t: Tensor, transposed: bool| -> Result<Tensor> {
            let r = t.rank();
            if transposed {
                t.transpose(r - 2, r - 1)
            } else {
                Ok(t)
            }
        };
        let a = view(make(p.a.0, &mut rng)?, p.a.1)?;
        let b = view(make(p.b.0, &mut rng)?, p.b.1)?;
        let (m, k, n) = (
            a.shape()[a.rank() - 2],
            a.shape()[a.rank() - 1],
            b.shape()[b.rank() - 1],
        );
        let batch: usize = a.shape()[..a.rank() - 2].iter().product();
        let (s, _) = crate::median(ctx, 3, 15, |_| ops::matmul(&a, &b).map(drop))?;
        let tflops = 2.0 * (batch * m * n * k) as f64 / s / 1e12;
        rows.push((p.name.to_string(), p.per_step, s * 1e3, tflops));
    }
    Ok(rows)
}
