//! GPT-2 on the tape (`models::gpt2::Trainable`): its training forward against the inference
//! forward, its gradients against f64 finite differences and the GPU tape against the CPU
//! tape, Adam lowering the loss with a bit-exact read-back of the parameters, and the errors.

use wgsl_compute::autograd::Tape;
use wgsl_compute::check::{compare, Gate, Rng};
use wgsl_compute::models::gpt2::{random_checkpoint, train::windows, Config, Gpt2, Trainable, Weights};
use wgsl_compute::train::{Adam, CompiledStep, Optimizer, Sgd};
use wgsl_compute::{Context, DType, Error, Tensor};

use crate::common::{assert_close, each_adapter};

/// A small GPT-2 (2 layers, 2 heads, 16 wide, 37 tokens) with seeded f32 weights.
fn small() -> Weights {
    let config = Config {
        n_layer: 2,
        n_head: 2,
        n_embd: 16,
        n_positions: 12,
        vocab_size: 37,
        layer_norm_epsilon: 1e-5,
    };
    let bytes = random_checkpoint(&config, 7, DType::F32).unwrap();
    Weights::from_safetensors(config, &bytes, "small").unwrap()
}

/// `batch` rows of `t` next-token pairs from a seeded token stream.
fn batch(seed: u64, rows: usize, t: usize, vocab: usize) -> (Vec<u32>, Vec<u32>) {
    let mut rng = Rng::new(seed);
    let tokens: Vec<u32> = (0..rows * (t + 1)).map(|_| rng.below(vocab) as u32).collect();
    let starts: Vec<usize> = (0..rows).map(|r| r * (t + 1)).collect();
    windows(&tokens, &starts, t).unwrap()
}

/// The training forward against the inference forward of each row (f32 on both sides, the
/// attention composed of products on one side and fused on the other).
const LOGITS: Gate = Gate::new(2e-4, 2e-4);
/// The GPU tape's gradients against the CPU tape's (f32 sums in other orders through a
/// two-layer model).
const GRADS: Gate = Gate::new(5e-4, 5e-4);

#[test]
fn gpt2_train_logits_equal_the_inference_forward_row_by_row() {
    let w = small();
    let (rows, t) = (3, 7);
    let (x, _) = batch(1, rows, t, 37);
    let check = |ctx: &Context| {
        let model = Trainable::new(ctx, &w).unwrap();
        let vars = model.vars(&Tape::new(ctx)).unwrap();
        let got = model.logits_var(&vars, &x, rows).unwrap().tensor().to_vec().unwrap(); // (rows t, V)
        let inference = Gpt2::new(ctx, &w).unwrap();
        let want: Vec<f32> = x
            .chunks(t)
            .flat_map(|row| inference.forward(row).unwrap().to_vec().unwrap())
            .collect();
        assert_close(ctx, "gpt2 training logits vs Gpt2::forward", &got, &want, LOGITS);
    };
    check(&Context::cpu());
    each_adapter(check);
}

#[test]
fn gpt2_train_gradients_match_finite_differences_and_the_cpu_tape() {
    let w = small();
    let (rows, t) = (2, 5);
    let (x, y) = batch(2, rows, t, 37);
    let cpu = Context::cpu();
    let grads_on = |ctx: &Context| -> Vec<Vec<f32>> {
        let model = Trainable::new(ctx, &w).unwrap();
        let vars = model.vars(&Tape::new(ctx)).unwrap();
        let grads = model.loss_var(&vars, &x, &y, rows).unwrap().backward().unwrap();
        vars.iter().map(|v| grads.get(v).unwrap().to_vec().unwrap()).collect()
    };
    let want = grads_on(&cpu);
    // Central differences of the loss at a few elements of every parameter (f64 over the
    // f32 CPU forward, as the tape's own checks).
    let model = Trainable::new(&cpu, &w).unwrap();
    let loss_at = |k: usize, j: usize, delta: f32| -> f64 {
        let p = model.params().tensors()[k].clone();
        let mut v = p.to_vec().unwrap();
        let old = v[j];
        v[j] += delta;
        p.write(&v).unwrap();
        let vars = model.vars(&Tape::new(&cpu)).unwrap();
        let l = model.loss_var(&vars, &x, &y, rows).unwrap().tensor().to_vec().unwrap()[0] as f64;
        v[j] = old;
        p.write(&v).unwrap();
        l
    };
    let names = model.params().names().iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut rng = Rng::new(3);
    for (k, g) in want.iter().enumerate() {
        let picks: Vec<usize> = (0..3).map(|_| rng.below(g.len())).collect();
        let h = 1e-2f32;
        let fd: Vec<f32> = picks
            .iter()
            .map(|&j| ((loss_at(k, j, h) - loss_at(k, j, -h)) / (2.0 * h as f64)) as f32)
            .collect();
        let tape: Vec<f32> = picks.iter().map(|&j| g[j]).collect();
        let c = compare(&tape, &fd, Gate::new(2e-3, 2e-3));
        assert!(c.ok, "d loss / d {}: tape vs finite differences: {c}", names[k]);
    }
    each_adapter(|ctx| {
        for (k, (got, want)) in grads_on(ctx).iter().zip(&want).enumerate() {
            assert_close(ctx, &format!("d loss / d {}", names[k]), got, want, GRADS);
        }
    });
}

#[test]
fn gpt2_train_adam_lowers_the_loss_and_the_weights_read_back_exactly() {
    let w = small();
    let (rows, t) = (2, 8);
    let (x, y) = batch(4, rows, t, 37);
    let run = |ctx: &Context| {
        let model = Trainable::new(ctx, &w).unwrap();
        let mut adam = Adam::new(&model.params().tensors(), 1e-2).unwrap();
        let mut losses = vec![];
        for _ in 0..15 {
            let vars = model.vars(&Tape::new(ctx)).unwrap();
            let loss = model.loss_var(&vars, &x, &y, rows).unwrap();
            losses.push(loss.tensor().to_vec().unwrap()[0]);
            adam.step_vars(&vars, &loss.backward().unwrap()).unwrap();
        }
        assert!(
            losses[14] < 0.5 * losses[0],
            "{}: loss {} -> {} in 15 Adam steps",
            ctx.info().name,
            losses[0],
            losses[14]
        );
        // The trained parameters as a checkpoint, and that checkpoint uploaded again.
        let back = model.weights().unwrap();
        let again = Trainable::new(ctx, &back).unwrap();
        for (a, b) in model.params().tensors().iter().zip(again.params().tensors()) {
            assert_eq!(a.to_vec().unwrap(), b.to_vec().unwrap());
        }
        assert_eq!(back.dtype, DType::F32);
    };
    run(&Context::cpu());
    each_adapter(run);
}

/// The planned step against the eager one (CompiledStep's own gate: the plan's fusion pass may
/// round an elementwise chain differently from separate launches).
const PLAN_VS_EAGER: Gate = Gate::new(1e-5, 1e-5);

#[test]
fn gpt2_train_ids_on_the_device_give_the_host_ids_gradients_and_a_compiled_step() {
    let w = small();
    let (rows, t) = (2, 8);
    // Repeated tokens, so that the embedding's backward sums several rows per id.
    let batches: Vec<(Vec<u32>, Vec<u32>)> = (0..4).map(|i| batch(10 + i, rows, t, 5)).collect();
    let grads_agree = |ctx: &Context| {
        let model = Trainable::new(ctx, &w).unwrap();
        let (x, y) = &batches[0];
        let (ids, tg) = (
            Tensor::zeros(ctx, &[rows * t]).unwrap(),
            Tensor::zeros(ctx, &[rows * t]).unwrap(),
        );
        ids.write_ids(x, 37).unwrap();
        tg.write_ids(y, 37).unwrap();
        let host_vars = model.vars(&Tape::new(ctx)).unwrap();
        let host = model.loss_var(&host_vars, x, y, rows).unwrap();
        let dev_vars = model.vars(&Tape::new(ctx)).unwrap();
        let dev = model.loss_var(&dev_vars, &ids, &tg, rows).unwrap();
        assert_eq!(host.item().unwrap(), dev.item().unwrap(), "{}: loss", ctx.info().name);
        let (gh, gd) = (host.backward().unwrap(), dev.backward().unwrap());
        for (i, (a, b)) in host_vars.iter().zip(&dev_vars).enumerate() {
            let (a, b) = (
                gh.get(a).unwrap().to_vec().unwrap(),
                gd.get(b).unwrap().to_vec().unwrap(),
            );
            assert_eq!(
                a,
                b,
                "{}: gradient of parameter {i}, host ids vs device ids",
                ctx.info().name
            );
        }
    };
    grads_agree(&Context::cpu());
    // Device ids on the CPU context are read back and checked: values written by
    // `Tensor::write` (not `write_ids`) that are not whole ids are refused, naming them.
    let cpu = Context::cpu();
    let model = Trainable::new(&cpu, &w).unwrap();
    let bad = Tensor::from_slice(&cpu, &[rows * t], &vec![2.5; rows * t]).unwrap();
    let vars = model.vars(&Tape::new(&cpu)).unwrap();
    let err = model.loss_var(&vars, &bad, &bad, rows).unwrap_err();
    assert!(format!("{err}").contains("ids"), "{err}");
    let err = bad.write_ids(&[1, 2], 37).unwrap_err(); // 2 ids for 16
    assert!(format!("{err}").contains("ids"), "{err}");
    each_adapter(|ctx| {
        grads_agree(ctx);
        // N eager steps (host ids) against N replays of one captured step (ids written each
        // time). SGD, not Adam: the key bias's gradient is rounding noise (a bias on every key
        // shifts each query's scores alike, which the softmax ignores), and Adam's update
        // normalises it to a full step whose sign the rounding picks.
        let eager = Trainable::new(ctx, &w).unwrap();
        let mut opt = Sgd::new(&eager.params().tensors(), 5e-2, 0.9).unwrap();
        let mut eager_losses = vec![];
        for (x, y) in &batches {
            let vars = eager.vars(&Tape::new(ctx)).unwrap();
            let loss = eager.loss_var(&vars, x, y, rows).unwrap();
            eager_losses.push(loss.item().unwrap());
            opt.step_vars(&vars, &loss.backward().unwrap()).unwrap();
        }
        let planned = Trainable::new(ctx, &w).unwrap();
        let refs = planned.params().tensors();
        let mut opt = Sgd::new(&refs, 5e-2, 0.9).unwrap();
        let (ids, tg) = (
            Tensor::zeros(ctx, &[rows * t]).unwrap(),
            Tensor::zeros(ctx, &[rows * t]).unwrap(),
        );
        let step = CompiledStep::capture(ctx, &refs, &[&ids, &tg], &mut opt, |v| {
            planned.loss_var(v, &ids, &tg, rows)
        })
        .unwrap();
        let mut planned_losses = vec![];
        for (x, y) in &batches {
            ids.write_ids(x, 37).unwrap();
            tg.write_ids(y, 37).unwrap();
            planned_losses.push(step.step().unwrap().to_vec().unwrap()[0]);
        }
        assert_close(
            ctx,
            "GPT-2: planned vs eager losses",
            &planned_losses,
            &eager_losses,
            PLAN_VS_EAGER,
        );
        for (i, (a, b)) in refs.iter().zip(eager.params().tensors()).enumerate() {
            assert_close(
                ctx,
                &format!("GPT-2: parameter {i} after the planned steps"),
                &a.to_vec().unwrap(),
                &b.to_vec().unwrap(),
                PLAN_VS_EAGER,
            );
        }
        // Ids the table cannot hold are refused where they are written.
        let err = ids.write_ids(&[37; 16], 37).unwrap_err();
        assert!(format!("{err}").contains("ids"), "{err}");
    });
}

#[test]
fn gpt2_train_bad_input_is_an_error_naming_the_argument() {
    let ctx = Context::cpu();
    let model = Trainable::new(&ctx, &small()).unwrap();
    let vars = model.vars(&Tape::new(&ctx)).unwrap();
    let expect = |r: wgsl_compute::Result<wgsl_compute::autograd::Var>, arg: &str| match r {
        Err(Error::Value { arg: a, .. }) => assert_eq!(a, arg),
        other => panic!("expected a value error on {arg}, got {other:?}"),
    };
    let (x, y) = batch(5, 2, 4, 37);
    expect(model.loss_var(&vars[1..], &x, &y, 2), "vars");
    expect(model.loss_var(&vars, &x, &y, 3), "batch");
    expect(model.loss_var(&vars, &x, &y, 0), "batch");
    let (long, long_y) = batch(6, 1, 13, 37); // 13 > n_positions = 12
    expect(model.loss_var(&vars, &long, &long_y, 1), "inputs");
    assert!(windows(&[1, 2, 3], &[1], 2).is_err());
}

#[test]
fn gpt2_train_head_cross_entropy_equals_the_unfused_head_in_blocks() {
    use wgsl_compute::autograd::Var;
    // 150 rows in blocks of 64, 64 and 22 rows, one block, and the unfused form.
    let check = |ctx: &Context| {
        let mut rng = Rng::new(8);
        let (r, c, v) = (150, 12, 37);
        let x = wgsl_compute::Tensor::from_slice(ctx, &[r, c], &rng.vec_range(r * c, -1.0, 1.0)).unwrap();
        let w = wgsl_compute::Tensor::from_slice(ctx, &[v, c], &rng.vec_range(v * c, -1.0, 1.0)).unwrap();
        let targets: Vec<u32> = (0..r).map(|_| rng.below(v) as u32).collect();
        let run = |block: Option<usize>| {
            let tape = Tape::new(ctx);
            let (xv, wv) = (tape.var(&x).unwrap(), tape.var(&w).unwrap());
            let loss = if let Some(b) = block {
                Var::head_cross_entropy(&xv, &wv, &targets, Some(b)).unwrap()
            } else {
                xv.matmul(&wv.transpose(0, 1).unwrap())
                    .unwrap()
                    .cross_entropy(&targets)
                    .unwrap()
            };
            let l = loss.tensor().to_vec().unwrap();
            let g = loss.backward().unwrap();
            (
                l,
                g.get(&xv).unwrap().to_vec().unwrap(),
                g.get(&wv).unwrap().to_vec().unwrap(),
            )
        };
        let b = run(None);
        let gate = Gate::new(1e-5, 1e-5);
        for block in [64, 150] {
            let a = run(Some(block));
            assert_close(ctx, &format!("head loss, blocks of {block}"), &a.0, &b.0, gate);
            assert_close(ctx, &format!("head dx, blocks of {block}"), &a.1, &b.1, gate);
            assert_close(ctx, &format!("head dw, blocks of {block}"), &a.2, &b.2, gate);
        }
    };
    check(&Context::cpu());
    each_adapter(check);
}

/// `models::gpt2::layers`: GPT-2 made of `nn` layers over a checkpoint is `Trainable`, bit
/// for bit (the same parameters in the same order, the same ops); fresh with GPT-2's init it
/// trains; a checkpoint missing a tensor or of other widths is refused naming the tensor.
#[test]
fn gpt2_layers_are_trainable_and_name_their_parameters_as_hugging_face_does() {
    use wgsl_compute::models::gpt2::layers::Layers;
    use wgsl_compute::nn::{Module, Pass, VarBuilder};
    let w = small();
    let (rows, t) = (2, 5);
    let (x, y) = batch(3, rows, t, 37);
    let check = |ctx: &Context| {
        let model = Trainable::new(ctx, &w).unwrap();
        let names: Vec<String> = model.params().names().iter().map(|n| n.to_string()).collect();
        assert_eq!(model.layers().param_names(), names);
        assert_eq!(
            names[..4],
            ["wte.weight", "wpe.weight", "h.0.ln_1.weight", "h.0.ln_1.bias"]
        );
        assert_eq!(names[4], "h.0.attn.c_attn.weight");
        assert_eq!(names[names.len() - 1], "ln_f.bias");
        // The layers from the checkpoint's bytes, on their own.
        let vb = VarBuilder::from_bytes(ctx, &model.params().to_bytes().unwrap(), "small").unwrap();
        let layers = Layers::new(&vb, &w.config).unwrap();
        let tape = Tape::new(ctx);
        let pass = Pass::train(&tape, &layers).unwrap();
        let got = layers.loss(&pass, &x, &y, rows).unwrap().item().unwrap();
        let vars = model.vars(&Tape::new(ctx)).unwrap();
        let want = model.loss_var(&vars, &x, &y, rows).unwrap().item().unwrap();
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "Layers::loss against Trainable::loss_var"
        );

        // Fresh, GPT-2's init: ten Adam steps on one batch lower the loss.
        let vb = VarBuilder::new(ctx, 5);
        let fresh = Layers::new(&vb, &w.config).unwrap();
        assert_eq!(fresh.param_names(), names);
        let mut adam = Adam::new(&vb.store().tensors(), 1e-2).unwrap();
        let mut losses = vec![];
        for _ in 0..10 {
            let tape = Tape::new(ctx);
            let pass = Pass::train(&tape, &fresh).unwrap();
            let loss = fresh.loss(&pass, &x, &y, rows).unwrap();
            losses.push(loss.item().unwrap());
            adam.step_vars(pass.vars(), &loss.backward().unwrap()).unwrap();
        }
        assert!(
            losses[9] < losses[0] - 0.5,
            "{}: fresh GPT-2 layers did not train: {losses:?}",
            ctx.info().name
        );
    };
    check(&Context::cpu());
    each_adapter(check);

    // A checkpoint missing one tensor, and one of other widths: errors naming the tensor.
    let cpu = Context::cpu();
    let model = Trainable::new(&cpu, &w).unwrap();
    let mut partial = wgsl_compute::train::ParamStore::new();
    for (n, t) in model.params().names().iter().zip(model.params().tensors()) {
        if *n != "h.1.attn.c_proj.weight" {
            partial.insert(n.to_string(), t.clone()).unwrap();
        }
    }
    let err = Layers::new(&VarBuilder::from_store(partial).unwrap(), &w.config).unwrap_err();
    assert!(err.to_string().contains("h.1.attn.c_proj.weight"), "{err}");
    let wider = Config {
        n_embd: 32,
        ..w.config.clone()
    };
    let err = Layers::new(&VarBuilder::from_store(model.params().clone()).unwrap(), &wider).unwrap_err();
    assert!(
        err.to_string().contains("wte.weight") && err.to_string().contains("[37, 32]"),
        "{err}"
    );
    let bad = Config {
        n_head: 3,
        ..w.config.clone()
    };
    let err = Layers::new(&VarBuilder::new(&cpu, 0), &bad).unwrap_err();
    assert!(err.to_string().contains("n_head"), "{err}");
}
