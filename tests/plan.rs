//! Compiled plans: a captured op sequence replays to the eager result (and again after its
//! inputs change), capture errors name what cannot be replayed, and GPT-2 generation through
//! plans (prefill plan per prompt length, one decode plan reused at every position, sampling
//! on the device) gives the eager path's ids and logits.

use std::path::Path;

use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::generate::{Generate, Sampling, Streaming};
use wgsl_compute::models::gpt2::{random_checkpoint, Config, Generator, Gpt2, Weights};
use wgsl_compute::plan::Plan;
use wgsl_compute::{ops, Context, DType, Error, Tensor};

use crate::common::{assert_close, each_adapter, each_adapter_alone};

const EXACT: Gate = Gate::new(1e-6, 1e-6);

#[test]
fn plan_replay_equals_eager_and_follows_its_inputs() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(1);
        let shape = [3, 67];
        let x = Tensor::from_slice(ctx, &shape, &rng.vec_range(201, -2.0, 2.0)).unwrap();
        let w = Tensor::from_slice(ctx, &[67, 5], &rng.vec_range(335, -1.0, 1.0)).unwrap();
        let f = |x: &Tensor| -> wgsl_compute::Result<Tensor> {
            let h = ops::tanh(&ops::add(&ops::exp(x)?, x)?)?; // intermediates freed and reused
            ops::matmul(&ops::mul(&h, x)?, &w)
        };
        let want = f(&x).unwrap().to_vec().unwrap();
        let (plan, y) = Plan::capture(ctx, &[&x, &w], || f(&x)).unwrap();
        // exp, add, tanh, mul, matmul traced; the elementwise chain fuses into one kernel.
        assert_eq!((plan.traced(), plan.dispatches()), (5, 2), "{}", plan.dump());
        assert!(plan.dump().contains("matmul"), "{}", plan.dump());
        plan.replay(ctx).unwrap();
        assert_close(ctx, "plan replay", &y.to_vec().unwrap(), &want, EXACT);
        // New input values, written outside the plan, flow through the next replay.
        let x2 = Tensor::from_slice(ctx, &shape, &rng.vec_range(201, -2.0, 2.0)).unwrap();
        ops::copy_into(&x, &x2).unwrap();
        plan.replay(ctx).unwrap();
        assert_close(
            ctx,
            "replay after new input",
            &y.to_vec().unwrap(),
            &f(&x2).unwrap().to_vec().unwrap(),
            EXACT,
        );
    });
}

#[test]
fn plan_fuses_elementwise_chains_only_where_nothing_else_sees_them() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(2);
        let x = Tensor::from_slice(ctx, &[3, 41], &rng.vec_range(123, -2.0, 2.0)).unwrap();
        let b = Tensor::from_slice(ctx, &[41], &rng.vec_range(41, -1.0, 1.0)).unwrap();
        // A chain with a broadcast input: exp(b) (41,) feeds (3, 41) ops; one kernel.
        let chain = || ops::sub(&ops::mul(&ops::add(&x, &ops::exp(&b)?)?, &x)?, &b);
        let want = chain().unwrap().to_vec().unwrap();
        let (plan, y) = Plan::capture(ctx, &[&x, &b], chain).unwrap();
        assert_eq!((plan.traced(), plan.dispatches()), (4, 1), "{}", plan.dump());
        plan.replay(ctx).unwrap();
        assert_close(ctx, "fused chain", &y.to_vec().unwrap(), &want, EXACT);

        // An intermediate the capture returns is kept: its producer still runs.
        let (plan, (e, z)) = Plan::capture(ctx, &[&x], || {
            let e = ops::exp(&x)?;
            let z = ops::add(&e, &x)?;
            Ok((e, z))
        })
        .unwrap();
        assert_eq!(plan.dispatches(), 2, "{}", plan.dump());
        plan.replay(ctx).unwrap();
        let want_e = ops::exp(&x).unwrap().to_vec().unwrap();
        assert_close(ctx, "kept intermediate", &e.to_vec().unwrap(), &want_e, EXACT);
        let want_z = ops::add(&ops::exp(&x).unwrap(), &x).unwrap().to_vec().unwrap();
        assert_close(ctx, "its consumer", &z.to_vec().unwrap(), &want_z, EXACT);

        // An intermediate another kind of op also reads is kept.
        let (plan, (s, z)) = Plan::capture(ctx, &[&x], || {
            let e = ops::exp(&x)?;
            Ok((ops::sum_last(&e)?, ops::add(&e, &x)?))
        })
        .unwrap();
        assert_eq!(plan.dispatches(), 3, "{}", plan.dump());
        plan.replay(ctx).unwrap();
        let want_s = ops::sum_last(&ops::exp(&x).unwrap()).unwrap().to_vec().unwrap();
        assert_close(
            ctx,
            "row sums of the kept intermediate",
            &s.to_vec().unwrap(),
            &want_s,
            Gate::new(1e-5, 1e-5),
        );
        assert_close(
            ctx,
            "and its elementwise consumer",
            &z.to_vec().unwrap(),
            &want_z,
            EXACT,
        );
    });
}

fn unsupported_message(r: wgsl_compute::Result<impl std::fmt::Debug>) -> String {
    match r {
        Err(Error::Unsupported { message, .. }) => message,
        other => panic!("expected Error::Unsupported, got {other:?}"),
    }
}

#[test]
fn plan_capture_refuses_what_a_replay_cannot_repeat() {
    each_adapter(|ctx| {
        let a = Tensor::from_slice(ctx, &[4], &[1., 2., 3., 4.]).unwrap();
        // A host upload inside the capture.
        let m = unsupported_message(Plan::capture(ctx, &[&a], || {
            ops::add(&a, &Tensor::from_slice(ctx, &[4], &[1.; 4])?)
        }));
        assert!(m.contains("uploads host data"), "{m}");
        // A readback inside the capture.
        let m = unsupported_message(Plan::capture(ctx, &[&a], || ops::exp(&a)?.to_vec()));
        assert!(m.contains("reads a result back"), "{m}");
        // A tensor from outside that the plan would not hold.
        let m = unsupported_message(Plan::capture(ctx, &[], || ops::exp(&a)));
        assert!(m.contains("not in `hold`"), "{m}");
        // A capture cannot nest, but threads sharing the context capture at the same time.
        let m = unsupported_message(Plan::capture(ctx, &[&a], || Plan::capture(ctx, &[&a], || ops::exp(&a))));
        assert!(m.contains("inside another"), "{m}");
        std::thread::scope(|s| {
            let runs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| Plan::capture(ctx, &[&a], || ops::exp(&a)).map(|(p, _)| p.dispatches())))
                .collect();
            for r in runs {
                assert_eq!(r.join().unwrap().unwrap(), 1);
            }
        });
        // The context still runs eager ops after failed captures.
        assert_eq!(ops::add(&a, &a).unwrap().to_vec().unwrap(), vec![2., 4., 6., 8.]);
        // A plan replays only on its own context.
        let (plan, _) = Plan::capture(ctx, &[&a], || ops::exp(&a)).unwrap();
        let other = pollster::block_on(Context::each_adapter()).unwrap();
        if let Some(o) = other.iter().find(|o| o.info().name == ctx.info().name) {
            assert!(matches!(plan.replay(o), Err(Error::WrongContext { .. })));
        }
        assert!(matches!(
            Plan::capture(&Context::cpu(), &[], || Ok(())),
            Err(Error::Unsupported { .. })
        ));
    });
}

fn small_model(ctx: &Context) -> Gpt2 {
    let cfg = Config {
        vocab_size: 300,
        n_positions: 40,
        n_embd: 48,
        n_layer: 2,
        n_head: 3,
        ..Config::default()
    };
    let weights =
        Weights::from_safetensors(cfg.clone(), &random_checkpoint(&cfg, 9, DType::F32).unwrap(), "small").unwrap();
    Gpt2::new(ctx, &weights).unwrap()
}

#[test]
fn gpt2_plan_generation_equals_eager_at_every_position() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/shakespeare");
    let shakespeare = Weights::load(&dir).unwrap();
    let top_k = Sampling::TopK {
        temperature: 0.8,
        k: 40,
        seed: 5,
    };
    each_adapter(|ctx| {
        for (name, model) in [
            ("small", small_model(ctx)),
            ("shakespeare", Gpt2::new(ctx, &shakespeare).unwrap()),
        ] {
            let mut g = Generator::new(&model).unwrap();
            assert!(
                g.decode_plan().dispatches() <= 5 * model.config().n_layer + 4,
                "{}",
                g.decode_plan().dump()
            );
            // Two prompt lengths (two prefill plans), one decode plan replayed at every position.
            for (prompt, n, sampling) in [
                (&[5u32, 17, 2][..], 20, Sampling::Greedy),
                (&[7, 1, 2, 3, 4, 9][..], 25, top_k),
            ] {
                let want = model.generate_eager(prompt, n, sampling, |_| {}).unwrap();
                let mut streamed = vec![];
                let got = g.generate(prompt, n, sampling, |id| streamed.push(id)).unwrap();
                assert_eq!(got, want, "{name} {sampling:?} on {}", ctx.info().name);
                assert_eq!(streamed, got);
                // The default path is the compiled one and agrees too.
                assert_eq!(model.generate(prompt, n, sampling, |_| {}).unwrap(), want);
            }
        }
    });
}

#[test]
fn gpt2_plan_logits_match_the_eager_step() {
    each_adapter(|ctx| {
        let model = small_model(ctx);
        let mut g = Generator::new(&model).unwrap();
        let prompt = [3u32, 11, 250, 7];
        let ids = g.generate(&prompt, 6, Sampling::Greedy, |_| {}).unwrap();
        // The decode plan's last logits are those of the context prompt + ids[..5].
        let mut context = prompt.to_vec();
        context.extend(&ids[..5]);
        let all = model.forward(&context).unwrap();
        let t = context.len();
        let want = all.narrow(0, t - 1, t).unwrap().to_vec().unwrap();
        assert_close(
            ctx,
            "decode plan logits",
            &g.last_logits().unwrap(),
            &want,
            Gate::new(1e-4, 1e-4),
        );
    });
}

#[test]
fn gpt2_plan_errors_name_the_argument() {
    each_adapter(|ctx| {
        let model = small_model(ctx);
        let mut g = Generator::new(&model).unwrap();
        let long = vec![1u32; 35];
        assert!(matches!(
            g.generate(&long, 6, Sampling::Greedy, |_| {}),
            Err(Error::Value { .. })
        ));
        assert!(matches!(
            g.generate(&[], 1, Sampling::Greedy, |_| {}),
            Err(Error::Value { .. })
        ));
        assert!(matches!(
            g.generate(&[300], 1, Sampling::Greedy, |_| {}),
            Err(Error::Value { .. })
        ));
        assert!(matches!(
            g.generate(&[1], usize::MAX, Sampling::Greedy, |_| {}),
            Err(Error::Value { .. })
        ));
        let all = Sampling::TopK {
            temperature: 1.0,
            k: 0,
            seed: 0,
        };
        assert!(matches!(
            g.generate(&[1], 3, all, |_| {}),
            Err(Error::Unsupported { .. })
        ));
        // The default path takes the eager sampler for what the device sampler does not do.
        assert_eq!(
            model.generate(&[1, 2], 5, all, |_| {}).unwrap(),
            model.generate_eager(&[1, 2], 5, all, |_| {}).unwrap()
        );
        assert!(g.generate(&[1], 0, Sampling::Greedy, |_| {}).unwrap().is_empty());
    });
    assert!(matches!(
        Generator::new(&small_model(&Context::cpu())),
        Err(Error::Unsupported { .. })
    ));
}

#[test]
fn gpt2_plan_streams_each_token_on_its_own() {
    // Streaming::PerToken hands over every token on its own: with no other
    // adapter test running, no gap between consecutive tokens exceeds 3x the median gap (a
    // ratio, not a time). Streaming::Chunks(8) gives the same ids in bursts.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/shakespeare");
    let weights = Weights::load(&dir).unwrap();
    each_adapter_alone(|ctx| {
        let model = Gpt2::new(ctx, &weights).unwrap();
        let mut g = Generator::new(&model).unwrap();
        g.set_streaming(Streaming::PerToken);
        let prompt = [33676u32, 4720, 25];
        g.generate(&prompt, 4, Sampling::Greedy, |_| {}).unwrap(); // compiles the plans
        let mut at = vec![];
        let ids = g
            .generate(&prompt, 24, Sampling::Greedy, |_| at.push(std::time::Instant::now()))
            .unwrap();
        let mut gaps: Vec<f64> = at.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
        let worst = gaps.iter().copied().fold(0.0, f64::max);
        gaps.sort_by(f64::total_cmp);
        let median = gaps[gaps.len() / 2];
        assert!(
            worst <= 3.0 * median,
            "on {}: the longest gap {worst:.5} s is {:.1}x the median {median:.5} s",
            ctx.info().name,
            worst / median
        );
        let per_token = at[at.len() - 1] - at[0];
        g.set_streaming(Streaming::Chunks(8));
        let t = std::time::Instant::now();
        assert_eq!(g.generate(&prompt, 24, Sampling::Greedy, |_| {}).unwrap(), ids);
        eprintln!(
            "{}: 24 tokens per token {:.1} ms after the first, in chunks of 8 {:.1} ms in all",
            ctx.info().name,
            per_token.as_secs_f64() * 1e3,
            t.elapsed().as_secs_f64() * 1e3
        );
    });
}
