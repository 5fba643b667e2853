//! Optimisers, clipping and the parameter store: each optimiser's device step against the
//! CPU context over a few steps (`check::gates::OPTIMIZER`), SGD momentum and AdamW against
//! hand computations in f64, AdamW with zero decay equal to Adam, clipping by global norm, the
//! safetensors round trip bit for bit, the three bad-file errors, and a small MLP trained on
//! the tape whose loss falls, and the character model trained on the tape following its
//! hand-written backward.

use wgsl_compute::autograd::{Tape, Var};
use wgsl_compute::check::{gates, Gate, Rng};
use wgsl_compute::io::safetensors;
use wgsl_compute::mixer::{MixerKind, MixerPath};
use wgsl_compute::models::{random_windows, CharModel, CharModelConfig};
use wgsl_compute::train::{clip_grad_norm, Adam, CharVocab, Optimizer, ParamStore, Sgd};
use wgsl_compute::{Context, DType, Error, Tensor};

use crate::common::{assert_close, each_adapter};

/// Sizes: 1, the workgroup (64) - 1, 64, 65, a non-multiple of 4, larger than a few groups.
const SIZES: &[usize] = &[1, 63, 64, 65, 1001];

/// Random starting weights and `steps` random gradients for each size.
fn problem(seed: u64, steps: usize) -> Vec<(Vec<f32>, Vec<Vec<f32>>)> {
    let mut rng = Rng::new(seed);
    SIZES
        .iter()
        .map(|&n| {
            let w = rng.vec_range(n, -1.0, 1.0);
            let gs = (0..steps).map(|_| rng.vec_range(n, -1.0, 1.0)).collect();
            (w, gs)
        })
        .collect()
}

/// Runs `make` + `steps` on every size on `ctx` through `Optimizer::step_tensors`; returns
/// the final weights of each size, concatenated.
fn run_steps<O: Optimizer>(
    ctx: &Context,
    prob: &[(Vec<f32>, Vec<Vec<f32>>)],
    make: impl Fn(&[&Tensor]) -> O,
) -> Vec<f32> {
    let ws: Vec<Tensor> = prob
        .iter()
        .map(|(w, _)| Tensor::from_slice(ctx, &[w.len()], w).unwrap())
        .collect();
    let refs: Vec<&Tensor> = ws.iter().collect();
    let mut opt = make(&refs);
    for s in 0..prob[0].1.len() {
        let gs: Vec<Tensor> = prob
            .iter()
            .map(|(w, g)| Tensor::from_slice(ctx, &[w.len()], &g[s]).unwrap())
            .collect();
        let grefs: Vec<&Tensor> = gs.iter().collect();
        opt.step_tensors(&refs, &grefs).unwrap();
    }
    ws.iter().flat_map(|w| w.to_vec().unwrap()).collect()
}

/// The device step of `make` against the CPU context's, on every adapter.
fn device_matches_cpu<O: Optimizer>(name: &str, seed: u64, make: impl Fn(&[&Tensor]) -> O + Copy) {
    let prob = problem(seed, 4);
    let want = run_steps(&Context::cpu(), &prob, make);
    let start: Vec<f32> = prob.iter().flat_map(|(w, _)| w.clone()).collect();
    assert!(want.iter().zip(&start).any(|(a, b)| a != b), "{name}: nothing moved");
    each_adapter(|ctx| assert_close(ctx, name, &run_steps(ctx, &prob, make), &want, gates::OPTIMIZER));
}

#[test]
fn optim_sgd_on_the_gpu_matches_the_cpu_context() {
    for (nesterov, wd) in [(false, 0.0), (true, 0.0), (false, 0.05), (true, 0.05)] {
        let name = format!("sgd nesterov={nesterov} weight_decay={wd}");
        device_matches_cpu(&name, 11, |p| {
            let mut s = Sgd::new(p, 0.1, 0.9).unwrap();
            s.nesterov = nesterov;
            s.weight_decay = wd;
            s
        });
    }
    device_matches_cpu("sgd plain", 12, |p| Sgd::new(p, 0.1, 0.0).unwrap());
}

#[test]
fn optim_adam_and_adamw_on_the_gpu_match_the_cpu_context() {
    device_matches_cpu("adam", 21, |p| Adam::new(p, 0.01).unwrap());
    device_matches_cpu("adam l2", 22, |p| {
        let mut a = Adam::new(p, 0.01).unwrap();
        a.weight_decay = 0.1;
        a
    });
    device_matches_cpu("adamw", 23, |p| Adam::adamw(p, 0.01, 0.1).unwrap());
}

#[test]
fn optim_adamw_with_zero_decay_is_adam_bit_for_bit() {
    let prob = problem(31, 3);
    let check = |ctx: &Context| {
        let adam = run_steps(ctx, &prob, |p| Adam::new(p, 0.01).unwrap());
        let adamw = run_steps(ctx, &prob, |p| Adam::adamw(p, 0.01, 0.0).unwrap());
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&adam), bits(&adamw), "{:?}", ctx.info().name);
    };
    check(&Context::cpu());
    each_adapter(check);
}

/// SGD with momentum and Nesterov, and AdamW, written out in f64.
fn sgd_f64(w: &[f32], gs: &[Vec<f32>], lr: f64, mu: f64, wd: f64, nesterov: bool) -> Vec<f32> {
    let mut w: Vec<f64> = w.iter().map(|&x| x as f64).collect();
    let mut b = vec![0.0f64; w.len()];
    for g in gs {
        for i in 0..w.len() {
            let g = g[i] as f64 + wd * w[i];
            b[i] = mu * b[i] + g;
            let d = if nesterov { g + mu * b[i] } else { b[i] };
            w[i] -= lr * d;
        }
    }
    w.iter().map(|&x| x as f32).collect()
}

fn adamw_f64(w: &[f32], gs: &[Vec<f32>], lr: f64, wd: f64) -> Vec<f32> {
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
    let mut w: Vec<f64> = w.iter().map(|&x| x as f64).collect();
    let (mut m, mut v) = (vec![0.0f64; w.len()], vec![0.0f64; w.len()]);
    for (t, g) in gs.iter().enumerate() {
        let t = (t + 1) as i32;
        for i in 0..w.len() {
            let g = g[i] as f64;
            m[i] = b1 * m[i] + (1.0 - b1) * g;
            v[i] = b2 * v[i] + (1.0 - b2) * g * g;
            let (mh, vh) = (m[i] / (1.0 - b1.powi(t)), v[i] / (1.0 - b2.powi(t)));
            w[i] = w[i] * (1.0 - lr * wd) - lr * mh / (vh.sqrt() + eps);
        }
    }
    w.iter().map(|&x| x as f32).collect()
}

/// Adam with L2 weight decay (`Adam::new` with `weight_decay`, not decoupled): the decay is
/// added to the gradient, `g + wd * w`, before the moments, as `torch.optim.Adam` does.
fn adam_l2_f64(w: &[f32], gs: &[Vec<f32>], lr: f64, wd: f64) -> Vec<f32> {
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
    let mut w: Vec<f64> = w.iter().map(|&x| x as f64).collect();
    let (mut m, mut v) = (vec![0.0f64; w.len()], vec![0.0f64; w.len()]);
    for (t, g) in gs.iter().enumerate() {
        let t = (t + 1) as i32;
        for i in 0..w.len() {
            let g = g[i] as f64 + wd * w[i];
            m[i] = b1 * m[i] + (1.0 - b1) * g;
            v[i] = b2 * v[i] + (1.0 - b2) * g * g;
            let (mh, vh) = (m[i] / (1.0 - b1.powi(t)), v[i] / (1.0 - b2.powi(t)));
            w[i] -= lr * mh / (vh.sqrt() + eps);
        }
    }
    w.iter().map(|&x| x as f32).collect()
}

#[test]
fn optim_adam_with_l2_decay_matches_a_hand_computation() {
    // Issue 41, item 9 (a): five steps of plain Adam with weight_decay = 0.1 against the f64
    // update, at 1e-5. AdamW's decoupled shrink in its place moves the weights ~1e-3 away.
    let prob = problem(43, 5);
    let want: Vec<f32> = prob.iter().flat_map(|(w, g)| adam_l2_f64(w, g, 0.01, 0.1)).collect();
    let adamw: Vec<f32> = prob.iter().flat_map(|(w, g)| adamw_f64(w, g, 0.01, 0.1)).collect();
    let apart = want.iter().zip(&adamw).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(apart > 1e-4, "the test tells L2 from decoupled decay ({apart})");
    let check = |ctx: &Context| {
        let got = run_steps(ctx, &prob, |p| {
            let mut a = Adam::new(p, 0.01).unwrap();
            a.weight_decay = 0.1;
            a
        });
        assert_close(ctx, "adam + L2 vs f64", &got, &want, Gate::new(1e-5, 1e-5));
    };
    check(&Context::cpu());
    each_adapter(check);
}

#[test]
fn optim_sgd_momentum_and_adamw_match_hand_computations() {
    let prob = problem(41, 5);
    let check = |ctx: &Context| {
        for nesterov in [false, true] {
            let got = run_steps(ctx, &prob, |p| {
                let mut s = Sgd::new(p, 0.05, 0.9).unwrap();
                s.nesterov = nesterov;
                s.weight_decay = 0.01;
                s
            });
            let want: Vec<f32> = prob
                .iter()
                .flat_map(|(w, g)| sgd_f64(w, g, 0.05, 0.9, 0.01, nesterov))
                .collect();
            assert_close(
                ctx,
                &format!("sgd vs f64 nesterov={nesterov}"),
                &got,
                &want,
                gates::OPTIMIZER,
            );
        }
        let got = run_steps(ctx, &prob, |p| Adam::adamw(p, 0.01, 0.1).unwrap());
        let want: Vec<f32> = prob.iter().flat_map(|(w, g)| adamw_f64(w, g, 0.01, 0.1)).collect();
        assert_close(ctx, "adamw vs f64", &got, &want, gates::OPTIMIZER);
    };
    check(&Context::cpu());
    each_adapter(check);
}

#[test]
fn optim_a_parameter_passed_twice_is_refused() {
    // Issue 41, item 7: `Adam::step` took one tensor passed twice and moved it twice.
    let check = |ctx: &Context| {
        let p = Tensor::from_slice(ctx, &[4], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        let q = Tensor::from_slice(ctx, &[4], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        let g = Tensor::full(ctx, &[4], 0.5).unwrap();
        let before = (p.to_vec().unwrap(), q.to_vec().unwrap());
        let mut adam = Adam::new(&[&p, &p], 0.1).unwrap();
        let err = adam.step(&[&p, &p], &[&g, &g]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Value {
                    op: "adam",
                    arg: "params",
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains("param 1") && err.to_string().contains("param 0"),
            "{err}"
        );
        let mut sgd = Sgd::new(&[&q, &p, &q], 0.1, 0.0).unwrap();
        let err = sgd.step(&[&q, &p, &q], &[&g, &g, &g]).unwrap_err();
        assert!(
            err.to_string().contains("param 2") && err.to_string().contains("param 0"),
            "{err}"
        );
        // A clone shares the storage (and a reshape does): the same parameter again.
        let mut adam = Adam::new(&[&p, &p.clone()], 0.1).unwrap();
        assert!(adam.step(&[&p, &p.clone()], &[&g, &g]).is_err());
        let p2 = p.reshape(&[2, 2]).unwrap();
        let g2 = Tensor::full(ctx, &[2, 2], 0.5).unwrap();
        let mut adam = Adam::new(&[&p, &p2], 0.1).unwrap();
        assert!(adam.step(&[&p, &p2], &[&g, &g2]).is_err());
        assert_eq!((p.to_vec().unwrap(), q.to_vec().unwrap()), before, "nothing moved");
        let mut adam = Adam::new(&[&p, &q], 0.1).unwrap();
        adam.step(&[&p, &q], &[&g, &g]).unwrap();
    };
    check(&Context::cpu());
    each_adapter(check);
}

/// Two parameters whose gradients are known: loss = sum(w1 * c1) + sum(w2 * c2), so
/// dL/dw1 = c1 and dL/dw2 = c2.
#[test]
fn optim_clip_grad_norm_scales_to_the_bound() {
    let mut rng = Rng::new(51);
    let (c1, c2) = (rng.vec_range(65, -1.0, 1.0), rng.vec_range(7, -1.0, 1.0));
    let norm: f64 = c1
        .iter()
        .chain(&c2)
        .map(|&x| (x as f64) * (x as f64))
        .sum::<f64>()
        .sqrt();
    let mut check = |ctx: &Context| {
        for max_norm in [norm as f32 * 0.25, norm as f32 * 4.0] {
            let tape = Tape::new(ctx);
            let w1 = tape
                .var(&Tensor::from_slice(ctx, &[5, 13], &rng.vec_range(65, -1.0, 1.0)).unwrap())
                .unwrap();
            let w2 = tape
                .var(&Tensor::from_slice(ctx, &[7], &rng.vec_range(7, -1.0, 1.0)).unwrap())
                .unwrap();
            let k1 = Var::constant(&Tensor::from_slice(ctx, &[5, 13], &c1).unwrap());
            let k2 = Var::constant(&Tensor::from_slice(ctx, &[7], &c2).unwrap());
            let loss = w1
                .mul(&k1)
                .unwrap()
                .sum_all()
                .unwrap()
                .add(&w2.mul(&k2).unwrap().sum_all().unwrap())
                .unwrap();
            let mut grads = loss.backward().unwrap();
            let vars = [w1.clone(), w2.clone()];
            let got = clip_grad_norm(&vars, &mut grads, max_norm).unwrap();
            assert_close(ctx, "clip norm", &[got], &[norm as f32], gates::TENSOR);
            let scale = (max_norm as f64 / (norm + 1e-6)).min(1.0);
            let want: Vec<f32> = c1.iter().chain(&c2).map(|&x| (x as f64 * scale) as f32).collect();
            let mut g = grads.get(&w1).unwrap().to_vec().unwrap();
            g.extend(grads.get(&w2).unwrap().to_vec().unwrap());
            if scale == 1.0 {
                assert_eq!(
                    g,
                    c1.iter().chain(&c2).copied().collect::<Vec<_>>(),
                    "under the bound: unchanged"
                );
            }
            assert_close(ctx, &format!("clipped grads at {max_norm}"), &g, &want, gates::TENSOR);
            assert_eq!(grads.get(&w1).unwrap().shape(), &[5, 13]);
        }
        let tape = Tape::new(ctx);
        let w = tape.var(&Tensor::full(ctx, &[2], 1.0).unwrap()).unwrap();
        let unused = tape.var(&Tensor::full(ctx, &[3], 1.0).unwrap()).unwrap();
        let mut grads = w.sum_all().unwrap().backward().unwrap();
        // A parameter without a gradient is left out (as the step skips it, issue 45); none
        // with one is an error.
        let norm = clip_grad_norm(&[w.clone(), unused.clone()], &mut grads, 1.0).unwrap();
        assert!((norm - 2f32.sqrt()).abs() < 1e-6, "{norm}");
        let msg = clip_grad_norm(&[unused], &mut grads, 1.0).unwrap_err().to_string();
        assert!(msg.contains("at least one") && msg.contains("gradient"), "{msg}");
        let msg = clip_grad_norm(&[w], &mut grads, f32::NAN).unwrap_err().to_string();
        assert!(msg.contains("max_norm"), "{msg}");
    };
    check(&Context::cpu());
    each_adapter(check);
}

/// `clip_grad_norm` over one parameter whose gradient is `c` (loss = sum(w * c)); returns the
/// norm and the clipped gradient.
fn clip_known(ctx: &Context, c: &[f32], max_norm: f32) -> (f32, Vec<f32>) {
    let tape = Tape::new(ctx);
    let w = tape.var(&Tensor::full(ctx, &[c.len()], 1.0).unwrap()).unwrap();
    let k = Var::constant(&Tensor::from_slice(ctx, &[c.len()], c).unwrap());
    let mut grads = w.mul(&k).unwrap().sum_all().unwrap().backward().unwrap();
    let norm = clip_grad_norm(std::slice::from_ref(&w), &mut grads, max_norm).unwrap();
    (norm, grads.get(&w).unwrap().to_vec().unwrap())
}

#[test]
fn optim_clip_grad_norm_neither_overflows_nor_underflows() {
    // Issue 41, item 4: [1e20, -1e20, 3e19] gave norm inf and every gradient 0; gradients of
    // 3e-30 gave norm 0. The f64 norm, within 1e-5 relative, and the clipped gradients.
    let rel = |got: f32, want: f64| ((got as f64 - want) / want).abs();
    let check = |ctx: &Context| {
        let name = format!("{} ({:?})", ctx.info().name, ctx.info().backend);
        for c in [
            vec![1e20f32, -1e20, 3e19],
            vec![3e-30f32; 4],
            vec![1e37, -1e37, 1.0],
            vec![1e-19, 2e-19],
        ] {
            let want: f64 = c.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
            for max_norm in [1.0f32, 1e30] {
                let (norm, g) = clip_known(ctx, &c, max_norm);
                assert!(rel(norm, want) < 1e-5, "norm of {c:?} on {name}: {norm} vs {want}");
                let scale = (max_norm as f64 / (want + 1e-6)).min(1.0);
                for (x, &ci) in g.iter().zip(&c) {
                    let w = ci as f64 * scale;
                    assert!(rel(*x, w) < 1e-5, "clipped {ci} at {max_norm} on {name}: {x} vs {w}");
                }
            }
        }
        // A variable listed twice would count its gradient twice: an error naming the op.
        let tape = Tape::new(ctx);
        let w = tape.var(&Tensor::full(ctx, &[2], 1.0).unwrap()).unwrap();
        let mut grads = w.sum_all().unwrap().backward().unwrap();
        let err = clip_grad_norm(&[w.clone(), w.clone()], &mut grads, 1.0).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Value {
                    op: "clip_grad_norm",
                    arg: "vars",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("param 1"), "{err}");
        assert_eq!(grads.get(&w).unwrap().to_vec().unwrap(), vec![1.0, 1.0], "unchanged");
    };
    check(&Context::cpu());
    each_adapter(check);
}

/// A store of three parameters with values of every kind (negative zero, a subnormal, large).
fn store(ctx: &Context, seed: u64) -> ParamStore {
    let mut rng = Rng::new(seed);
    let mut s = ParamStore::new();
    let mut w = rng.vec_normal(12, 1.0);
    w[0] = -0.0;
    w[1] = 1e-40;
    w[2] = 3.0e38;
    // Inserted out of name order: the file must keep the insertion order.
    s.insert("layer.w", Tensor::from_slice(ctx, &[3, 4], &w).unwrap())
        .unwrap();
    s.insert("bias", Tensor::from_slice(ctx, &[5], &rng.vec_normal(5, 1.0)).unwrap())
        .unwrap();
    s.insert("a.scalar", Tensor::from_slice(ctx, &[1], &[0.5]).unwrap())
        .unwrap();
    s
}

fn bits(s: &ParamStore) -> Vec<(String, Vec<usize>, Vec<u32>)> {
    s.names()
        .iter()
        .map(|&n| {
            let t = s.get(n).unwrap();
            (
                n.to_string(),
                t.shape().to_vec(),
                t.to_vec().unwrap().iter().map(|x| x.to_bits()).collect(),
            )
        })
        .collect()
}

#[test]
fn optim_param_store_round_trips_bit_for_bit() {
    let check = |ctx: &Context| {
        let s = store(ctx, 61);
        let bytes = s.to_bytes().unwrap();
        let back = ParamStore::from_bytes(ctx, &bytes, "memory").unwrap();
        assert_eq!(back.names(), vec!["layer.w", "bias", "a.scalar"]);
        assert_eq!(bits(&back), bits(&s));
        // Into an existing store of the same layout, in place.
        let other = store(ctx, 62);
        assert_ne!(bits(&other), bits(&s));
        other.load_into(&bytes, "memory").unwrap();
        assert_eq!(bits(&other), bits(&s));
        // Through a file.
        let path = std::env::temp_dir().join(format!(
            "optim-round-trip-{}-{:?}.safetensors",
            std::process::id(),
            ctx.info().backend
        ));
        s.save(&path).unwrap();
        let loaded = ParamStore::load(ctx, &path).unwrap();
        std::fs::remove_file(&path).ok();
        assert_eq!(bits(&loaded), bits(&s));
    };
    check(&Context::cpu());
    each_adapter(check);
}

#[test]
fn optim_param_store_bad_files_name_what_is_wrong() {
    let ctx = Context::cpu();
    let s = store(&ctx, 71);
    let entry = |name: &str, dtype: DType, shape: &[usize]| {
        let n: usize = shape.iter().product();
        (name.to_string(), dtype, shape.to_vec(), vec![0u8; n * dtype.size()])
    };
    let good = [
        entry("layer.w", DType::F32, &[3, 4]),
        entry("bias", DType::F32, &[5]),
        entry("a.scalar", DType::F32, &[1]),
    ];
    let before = bits(&s);
    let fail = |tensors: &[(String, DType, Vec<usize>, Vec<u8>)]| {
        let msg = s
            .load_into(&safetensors::serialize(tensors, &[]), "ckpt.safetensors")
            .unwrap_err()
            .to_string();
        assert_eq!(bits(&s), before, "a failed load wrote something: {msg}");
        msg
    };
    let missing = fail(&good[..2]);
    assert!(
        missing.contains("ckpt.safetensors") && missing.contains("`a.scalar`") && missing.contains("found none"),
        "{missing}"
    );
    let mut shaped = good.clone();
    shaped[1] = entry("bias", DType::F32, &[6]);
    let msg = fail(&shaped);
    assert!(
        msg.contains("`bias`") && msg.contains("expected [5]") && msg.contains("has shape [6]"),
        "{msg}"
    );
    let err = s
        .load_into(&safetensors::serialize(&shaped, &[]), "ckpt.safetensors")
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Shape {
                op: "ParamStore::load_into",
                ..
            }
        ),
        "a shape mismatch is a shape error: {err:?}"
    );
    let mut typed = good.clone();
    typed[0] = entry("layer.w", DType::F16, &[3, 4]);
    let msg = fail(&typed);
    assert!(
        msg.contains("`layer.w`") && msg.contains("expected dtype F32") && msg.contains("found dtype F16"),
        "{msg}"
    );
    // A good file loads (zeros), and extra tensors in it are ignored.
    let mut extra = good.to_vec();
    extra.push(entry("unused", DType::F32, &[2]));
    s.load_into(&safetensors::serialize(&extra, &[]), "ckpt.safetensors")
        .unwrap();
    assert!(s.get("bias").unwrap().to_vec().unwrap().iter().all(|&x| x == 0.0));
    let msg = ParamStore::from_bytes(&ctx, &safetensors::serialize(&typed, &[]), "ckpt")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("expected dtype F32"), "{msg}");
    let mut dup = ParamStore::new();
    dup.insert("w", Tensor::zeros(&ctx, &[1]).unwrap()).unwrap();
    assert!(dup.insert("w", Tensor::zeros(&ctx, &[1]).unwrap()).is_err());
}

#[test]
fn optim_param_store_refuses_the_metadata_name_and_repeated_keys() {
    // Issue 41, item 5: a parameter named `__metadata__` wrote a checkpoint that could not be
    // read back; a file naming a tensor twice loaded the last entry silently.
    let ctx = Context::cpu();
    let mut s = ParamStore::new();
    let err = s
        .insert("__metadata__", Tensor::zeros(&ctx, &[2]).unwrap())
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Value {
                op: "ParamStore::insert",
                arg: "name",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("__metadata__"), "{err}");
    assert!(s.is_empty());
    s.insert("w", Tensor::zeros(&ctx, &[1]).unwrap()).unwrap();
    let round = ParamStore::from_bytes(&ctx, &s.to_bytes().unwrap(), "ckpt").unwrap();
    assert_eq!(round.names(), ["w"]);
    // Two entries named `w` over the same 4 bytes, of different shapes: the header is valid
    // JSON and the data is tiled, but which `w` is meant is not known.
    let file = |header: &str| {
        let mut b = (header.len() as u64).to_le_bytes().to_vec();
        b.extend(header.as_bytes());
        b.extend(1f32.to_le_bytes());
        b
    };
    let once = file(r#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#);
    assert_eq!(ParamStore::from_bytes(&ctx, &once, "ckpt").unwrap().names(), ["w"]);
    for header in [
        r#"{"w":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#,
        r#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}, "\u0077" :{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#,
        r#"{"__metadata__":{"a":"b"},"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"__metadata__":{}}"#,
    ] {
        let twice = file(header);
        let msg = ParamStore::from_bytes(&ctx, &twice, "ckpt.safetensors")
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("ckpt.safetensors") && msg.contains("more than once"),
            "{msg}"
        );
        let msg = s.load_into(&twice, "ckpt.safetensors").unwrap_err().to_string();
        assert!(msg.contains("more than once"), "{msg}");
    }
    // Keys inside an entry and strings that look like keys are not top-level keys.
    let nested =
        file(r#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"__metadata__":{"w":"\"w\":","x":"{"}}"#);
    assert_eq!(ParamStore::from_bytes(&ctx, &nested, "ckpt").unwrap().names(), ["w"]);
}

/// A two-layer MLP (linear, GELU, linear, cross-entropy) on a fixed batch, trained through the
/// tape with AdamW and clipping: the loss falls well below its start. Returns the losses.
fn train_mlp(ctx: &Context, steps: usize) -> Vec<f32> {
    let (n, d, h, classes) = (32, 6, 16, 3);
    let mut rng = Rng::new(81);
    let x = Tensor::from_slice(ctx, &[n, d], &rng.vec_normal(n * d, 1.0)).unwrap(); // (N, D)
                                                                                    // Labels from a fixed random linear rule, so the data is learnable.
    let rule = rng.vec_normal(d * classes, 1.0);
    let xs = x.to_vec().unwrap();
    let targets: Vec<u32> = (0..n)
        .map(|i| {
            let score = |c: usize| (0..d).map(|k| xs[i * d + k] * rule[k * classes + c]).sum::<f32>();
            (0..classes).max_by(|&a, &b| score(a).total_cmp(&score(b))).unwrap() as u32
        })
        .collect();
    let mut params = ParamStore::new();
    params
        .insert(
            "w1",
            Tensor::from_slice(ctx, &[d, h], &rng.vec_normal(d * h, 0.4)).unwrap(),
        )
        .unwrap();
    params.insert("b1", Tensor::zeros(ctx, &[h]).unwrap()).unwrap();
    params
        .insert(
            "w2",
            Tensor::from_slice(ctx, &[h, classes], &rng.vec_normal(h * classes, 0.4)).unwrap(),
        )
        .unwrap();
    params.insert("b2", Tensor::zeros(ctx, &[classes]).unwrap()).unwrap();
    let mut opt = Adam::adamw(&params.tensors(), 0.03, 0.01).unwrap();
    let x = Var::constant(&x);
    (0..steps)
        .map(|_| {
            let tape = Tape::new(ctx);
            let v = params.vars(&tape).unwrap(); // w1, b1, w2, b2
            let hidden = x.linear(&v[0], Some(&v[1])).unwrap().gelu().unwrap(); // (N, H)
            let loss = hidden
                .linear(&v[2], Some(&v[3]))
                .unwrap()
                .cross_entropy(&targets)
                .unwrap(); // ()
            let mut grads = loss.backward().unwrap();
            clip_grad_norm(&v, &mut grads, 5.0).unwrap();
            opt.step_vars(&v, &grads).unwrap();
            loss.tensor().to_vec().unwrap()[0]
        })
        .collect()
}

#[test]
fn optim_mlp_on_the_tape_learns() {
    let check = |ctx: &Context| {
        let losses = train_mlp(ctx, 40);
        let (first, last) = (losses[0], *losses.last().unwrap());
        assert!(
            last < 0.5 * first,
            "{}: loss {first} -> {last} ({losses:?})",
            ctx.info().name
        );
        losses
    };
    let want = check(&Context::cpu());
    each_adapter(|ctx| {
        let got = check(ctx);
        // The first steps agree with the CPU context before chaotic growth of roundings.
        assert_close(ctx, "mlp losses, first 5 steps", &got[..5], &want[..5], gates::LOGITS);
    });
}

/// The character model's first steps trained through the tape and `Optimizer::step_vars`
/// against the same steps through its hand-written backward and `Adam::step`, from the same
/// initial weights and batches: the losses agree within `check::gates::MIXER_BACKWARD`.
fn char_model_curves(ctx: &Context, kind: MixerKind, path: MixerPath, steps: usize) -> (Vec<f32>, Vec<f32>) {
    let text = "the cat sat on the mat. the dog sat on the log. the cat and the dog sat.\n";
    let vocab = CharVocab::from_text(text).unwrap();
    let ids = vocab.encode(text).unwrap();
    let config = CharModelConfig {
        kind,
        path,
        vocab: vocab.len(),
        layers: 2,
        d_model: 16,
        d_state: 16,
    };
    let (batch, seq) = (4, 16);
    let batches: Vec<(Vec<u32>, Vec<u32>)> = {
        let mut rng = Rng::new(91);
        (0..steps)
            .map(|_| random_windows(&ids, batch, seq, &mut rng).unwrap())
            .collect()
    };
    let hand = {
        let model = CharModel::init(ctx, config, 5).unwrap();
        let mut adam = Adam::new(&model.params(), 1e-2).unwrap();
        batches
            .iter()
            .map(|(x, y)| {
                let lg = model.loss_and_grads(x, y, batch).unwrap();
                adam.step(&model.params(), &lg.grads.iter().collect::<Vec<_>>())
                    .unwrap();
                lg.loss
            })
            .collect()
    };
    let tape = {
        let model = CharModel::init(ctx, config, 5).unwrap();
        let mut adam = Adam::new(&model.params(), 1e-2).unwrap();
        batches
            .iter()
            .map(|(x, y)| {
                let tape = Tape::new(ctx);
                let vars = model.vars(&tape).unwrap();
                let loss = model.loss_var(&vars, x, y, batch).unwrap();
                let grads = loss.backward().unwrap();
                adam.step_vars(&vars, &grads).unwrap();
                loss.tensor().to_vec().unwrap()[0]
            })
            .collect()
    };
    (hand, tape)
}

#[test]
fn optim_char_model_on_the_tape_follows_the_hand_written_backward() {
    let kinds = [
        (MixerKind::MinGru, MixerPath::Auto),
        (MixerKind::GivensMinGru { k: 4 }, MixerPath::AngleFused),
    ];
    let check = |ctx: &Context| {
        for (kind, path) in kinds {
            let (hand, tape) = char_model_curves(ctx, kind, path, 5);
            assert!(hand[4] < hand[0], "{kind}: the loss did not fall: {hand:?}");
            assert_close(
                ctx,
                &format!("{kind} {path:?} losses, tape vs hand"),
                &tape,
                &hand,
                gates::MIXER_BACKWARD,
            );
        }
    };
    check(&Context::cpu());
    each_adapter(check);
}
