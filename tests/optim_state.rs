//! Resuming training exactly (issue 45): an optimiser's state saved beside the parameters and
//! loaded into a fresh optimiser gives the next 20 losses of the uninterrupted run bit for
//! bit, for Adam, AdamW and SGD, on the CPU context and every adapter; a state file of
//! another optimiser, of other parameters or missing a tensor is an error that changes
//! nothing. And the optimisers' skipping of parameters without a gradient (frozen or
//! unused), eagerly through `step_vars` and in `clip_grad_norm`.

use wgsl_compute::autograd::{Tape, Var};
use wgsl_compute::check::Rng;
use wgsl_compute::io::safetensors;
use wgsl_compute::train::{clip_grad_norm, gather_rows, Adam, Batches, LrSchedule, Optimizer, ParamStore, Sgd};
use wgsl_compute::{Context, DType, Error, Tensor};

use crate::common::each_adapter;

/// Examples in the dataset, features, hidden units, outputs, batch size.
const N: usize = 96;
const D: usize = 8;
const H: usize = 16;
const O: usize = 4;
const B: usize = 16;

/// Which optimiser a run uses.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Adam,
    AdamW,
    Sgd,
}

fn make(kind: Kind, params: &[&Tensor]) -> Box<dyn Optimizer> {
    match kind {
        Kind::Adam => Box::new(Adam::new(params, 1e-2).unwrap()),
        Kind::AdamW => Box::new(Adam::adamw(params, 1e-2, 0.05).unwrap()),
        Kind::Sgd => {
            let mut s = Sgd::new(params, 5e-2, 0.9).unwrap();
            s.nesterov = true;
            s.weight_decay = 1e-3;
            Box::new(s)
        }
    }
}

/// A 2-layer MLP's parameters from `seed`.
fn store(ctx: &Context, seed: u64) -> ParamStore {
    let mut rng = Rng::new(seed);
    let mut s = ParamStore::new();
    for (name, shape) in [("w1", vec![D, H]), ("b1", vec![H]), ("w2", vec![H, O]), ("b2", vec![O])] {
        let n = shape.iter().product();
        let t = Tensor::from_slice(ctx, &shape, &rng.vec_range(n, -0.5, 0.5)).unwrap();
        s.insert(name, t).unwrap();
    }
    s
}

/// The dataset: x (N, D), y (N, O).
fn data() -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng::new(45);
    (rng.vec_range(N * D, -1.0, 1.0), rng.vec_range(N * O, -1.0, 1.0))
}

/// Steps `from..to` of the run (shuffled batches of epoch `step / per_epoch`, a warm-up
/// cosine schedule on the rate), eagerly on the tape; returns each step's loss bits.
fn train(ctx: &Context, params: &ParamStore, opt: &mut dyn Optimizer, from: u64, to: u64) -> Vec<u32> {
    let (xs, ys) = data();
    let batches = Batches::new(N, B, 7).unwrap().drop_last(true);
    let per_epoch = batches.per_epoch() as u64;
    let schedule = LrSchedule::warmup_cosine(1e-2, 5, 40, 1e-3).unwrap();
    let mut out = vec![];
    for step in from..to {
        let idx = &batches.epoch(step / per_epoch)[(step % per_epoch) as usize];
        let x = Tensor::from_slice(ctx, &[B, D], &gather_rows(&xs, D, idx).unwrap()).unwrap();
        let y = Tensor::from_slice(ctx, &[B, O], &gather_rows(&ys, O, idx).unwrap()).unwrap();
        let tape = Tape::new(ctx);
        let v = params.vars(&tape).unwrap();
        let h = Var::constant(&x).linear(&v[0], Some(&v[1])).unwrap().tanh().unwrap(); // (B, H)
        let d = (h.linear(&v[2], Some(&v[3])).unwrap() - Var::constant(&y)).unwrap(); // (B, O)
        let loss = (&d * &d).unwrap().mean_all().unwrap(); // ()
        out.push(loss.item().unwrap().to_bits());
        let grads = loss.backward().unwrap();
        opt.set_lr(schedule.lr(step));
        opt.step_vars(&v, &grads).unwrap();
    }
    out
}

fn bits(s: &ParamStore) -> Vec<Vec<u32>> {
    s.tensors()
        .iter()
        .map(|t| t.to_vec().unwrap().iter().map(|v| v.to_bits()).collect())
        .collect()
}

#[test]
fn optim_state_resume_gives_the_same_losses_bit_for_bit() {
    let check = |ctx: &Context| {
        for kind in [Kind::Adam, Kind::AdamW, Kind::Sgd] {
            // Uninterrupted: 40 steps.
            let whole = store(ctx, 1);
            let mut opt = make(kind, &whole.tensors());
            let all = train(ctx, &whole, opt.as_mut(), 0, 40);
            // Interrupted after 20: parameters and state saved (one through files), then
            // loaded into fresh parameters of another init and a fresh optimiser.
            let first = store(ctx, 1);
            let mut opt = make(kind, &first.tensors());
            let head = train(ctx, &first, opt.as_mut(), 0, 20);
            assert_eq!(head, all[..20], "{kind:?}: the first 20 steps");
            let params = first.to_bytes().unwrap();
            let state = match kind {
                Kind::Sgd => {
                    let path = std::env::temp_dir().join(format!(
                        "optim-state-{}-{:?}.safetensors",
                        std::process::id(),
                        ctx.info().backend
                    ));
                    opt.save_state(&path).unwrap();
                    let b = std::fs::read(&path).unwrap();
                    std::fs::remove_file(&path).ok();
                    b
                }
                _ => opt.state_bytes().unwrap(),
            };
            if !matches!(kind, Kind::Sgd) {
                // Adam's powers, in the tensor and the metadata alike (so a state saved on the
                // CPU context resumes on a GPU and the reverse): beta^20 as running products.
                let meta = safetensors::metadata(&state, "state").unwrap();
                let file = safetensors::parse(&state, "state").unwrap();
                let tensor = file["device_powers"].to_f32("state").unwrap();
                let (mut b1, mut b2) = (1f32, 1f32);
                for _ in 0..20 {
                    (b1, b2) = (b1 * 0.9, b2 * 0.999);
                }
                let want = format!("{:08x},{:08x}", b1.to_bits(), b2.to_bits());
                assert_eq!(meta["powers"], want, "{kind:?}");
                assert_eq!(tensor, vec![b1, b2], "{kind:?}");
            }
            drop((first, opt));
            let resumed = store(ctx, 2);
            resumed.load_into(&params, "params").unwrap();
            let mut opt = make(kind, &resumed.tensors());
            opt.load_state_bytes(&state, "state").unwrap();
            let tail = train(ctx, &resumed, opt.as_mut(), 20, 40);
            assert_eq!(
                tail,
                all[20..],
                "{kind:?} on {:?}: the next 20 losses",
                ctx.info().backend
            );
            assert_eq!(bits(&resumed), bits(&whole), "{kind:?}: the final parameters");
        }
    };
    check(&Context::cpu());
    each_adapter(check);
}

#[test]
fn optim_state_files_of_something_else_are_refused_and_change_nothing() {
    let check = |ctx: &Context| {
        let s = store(ctx, 3);
        let mut adam = Adam::new(&s.tensors(), 1e-2).unwrap();
        train(ctx, &s, &mut adam, 0, 2);
        let before: Vec<Vec<f32>> = adam.state().iter().map(|t| t.to_vec().unwrap()).collect();
        let unchanged = |adam: &Adam, what: &str| {
            let now: Vec<Vec<f32>> = adam.state().iter().map(|t| t.to_vec().unwrap()).collect();
            assert_eq!(now, before, "{what}: a refused file changed the state");
            assert_eq!(adam.steps(), 2, "{what}");
        };
        // Another optimiser's state: SGD's, and AdamW's (decoupled decay) for Adam.
        let sgd = Sgd::new(&s.tensors(), 0.1, 0.9).unwrap();
        let e = adam
            .load_state_bytes(&sgd.state_bytes().unwrap(), "sgd.safetensors")
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Value {
                    op: "Optimizer::load_state",
                    ..
                }
            ),
            "{e}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("`adam`") && msg.contains("`sgd`") && msg.contains("sgd.safetensors"),
            "{msg}"
        );
        unchanged(&adam, "sgd");
        let adamw = Adam::adamw(&s.tensors(), 1e-2, 0.1).unwrap();
        let msg = adam
            .load_state_bytes(&adamw.state_bytes().unwrap(), "w")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("`adamw`"), "{msg}");
        // A parameters file is not a state file.
        let msg = adam
            .load_state_bytes(&s.to_bytes().unwrap(), "params")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("parameters file"), "{msg}");
        unchanged(&adam, "params");
        // The state of other parameters: another count, another shape.
        let fewer = Adam::new(&s.tensors()[..3], 1e-2).unwrap();
        let msg = adam
            .load_state_bytes(&fewer.state_bytes().unwrap(), "f")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("4 parameters") && msg.contains("\"3\""), "{msg}");
        let other: Vec<Tensor> = [vec![D, H], vec![H], vec![H, O], vec![O + 1]]
            .iter()
            .map(|sh| Tensor::zeros(ctx, sh).unwrap())
            .collect();
        let shaped = Adam::new(&other.iter().collect::<Vec<_>>(), 1e-2).unwrap();
        let e = adam.load_state_bytes(&shaped.state_bytes().unwrap(), "s").unwrap_err();
        assert!(
            matches!(
                e,
                Error::Shape {
                    op: "Optimizer::load_state",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("`m.3`"), "{e}");
        unchanged(&adam, "shape");
        // A file missing a tensor, and bytes that are no safetensors file.
        let meta = [("optimizer", "sgd"), ("params", "1"), ("steps", "3")];
        let empty = safetensors::serialize(&[("other".into(), DType::F32, vec![1], vec![0; 4])], &meta);
        let one = Tensor::zeros(ctx, &[1]).unwrap();
        let mut sgd1 = Sgd::new(&[&one], 0.1, 0.9).unwrap();
        let msg = sgd1.load_state_bytes(&empty, "m").unwrap_err().to_string();
        assert!(msg.contains("`velocity.0`") && msg.contains("found none"), "{msg}");
        assert_eq!(sgd1.steps(), 0);
        assert!(adam.load_state_bytes(b"not a file", "junk").is_err());
        unchanged(&adam, "junk");
        assert!(adam.load_state(std::path::Path::new("/nonexistent/state")).is_err());
    };
    check(&Context::cpu());
    each_adapter(check);
}

#[test]
fn optim_step_vars_skips_frozen_and_unused_parameters() {
    let check = |ctx: &Context| {
        let mut rng = Rng::new(9);
        for name in ["adam", "sgd"] {
            let new = |rng: &mut Rng, n| Tensor::from_slice(ctx, &[n], &rng.vec_range(n, -1.0, 1.0)).unwrap();
            let (w, unused, frozen) = (new(&mut rng, 65), new(&mut rng, 3), new(&mut rng, 65));
            let alone = Tensor::from_slice(ctx, &[65], &w.to_vec().unwrap()).unwrap();
            let before = (unused.to_vec().unwrap(), frozen.to_vec().unwrap());
            let opt = |p: &[&Tensor]| -> Box<dyn Optimizer> {
                match name {
                    "adam" => Box::new(Adam::new(p, 1e-2).unwrap()),
                    _ => Box::new(Sgd::new(p, 1e-1, 0.9).unwrap()),
                }
            };
            let (mut all, mut one) = (opt(&[&w, &unused, &frozen]), opt(&[&alone]));
            for _ in 0..3 {
                let tape = Tape::new(ctx);
                let (vw, vu, vf) = (
                    tape.var(&w).unwrap(),
                    tape.var(&unused).unwrap(),
                    Var::constant(&frozen),
                );
                let loss = (&vw * &vf.tanh().unwrap()).unwrap().sin().unwrap().sum_all().unwrap();
                let mut grads = loss.backward().unwrap();
                clip_grad_norm(&[vw.clone(), vu.clone(), vf.clone()], &mut grads, 1.0).unwrap();
                all.step_vars(&[vw, vu, vf], &grads).unwrap();
                // The same step over the used parameter alone.
                let tape = Tape::new(ctx);
                let va = tape.var(&alone).unwrap();
                let loss = (&va * &Var::constant(&frozen).tanh().unwrap())
                    .unwrap()
                    .sin()
                    .unwrap()
                    .sum_all()
                    .unwrap();
                let mut grads = loss.backward().unwrap();
                clip_grad_norm(std::slice::from_ref(&va), &mut grads, 1.0).unwrap();
                one.step_vars(&[va], &grads).unwrap();
            }
            assert_eq!(w.to_vec().unwrap(), alone.to_vec().unwrap(), "{name}: as if alone");
            assert_eq!(
                unused.to_vec().unwrap(),
                before.0,
                "{name}: an unused parameter keeps its bits"
            );
            assert_eq!(frozen.to_vec().unwrap(), before.1, "{name}: a frozen one too");
            // No parameter with a gradient (another tape's grads): an error, nothing moves.
            let tape = Tape::new(ctx);
            let vu = tape.var(&unused).unwrap();
            let grads = Tape::new(ctx).var(&w).unwrap().sum_all().unwrap().backward().unwrap();
            let e = all
                .step_vars(&[tape.var(&w).unwrap(), vu, Var::constant(&frozen)], &grads)
                .unwrap_err();
            assert!(e.to_string().contains("at least one"), "{e}");
            assert_eq!(w.to_vec().unwrap(), alone.to_vec().unwrap(), "{name}: nothing moved");
        }
    };
    check(&Context::cpu());
    each_adapter(check);
}
