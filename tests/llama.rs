//! The Llama-style decoder (`models::llama`) against transformers' goldens
//! (`assets/models/llama-tiny-random/goldens.json`, made by `benches/llama_goldens.py`): the
//! prompt's logits within 1e-4 and the greedy ids equal, on the CPU context and every
//! adapter; the cache's one-token steps equal to a whole forward; and the errors.

use std::path::{Path, PathBuf};

use wgsl_compute::generate::Generate;
use wgsl_compute::generate::Sampling;
use wgsl_compute::models::llama::{Config, Llama};
use wgsl_compute::Context;

use crate::common::each_adapter;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/llama-tiny-random")
}

struct Goldens {
    prompt: Vec<u32>,
    logits: Vec<f32>,
    greedy: Vec<u32>,
}

fn goldens() -> Goldens {
    let text = std::fs::read_to_string(dir().join("goldens.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ids = |k: &str| {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect()
    };
    Goldens {
        prompt: ids("prompt"),
        logits: v["logits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect(),
        greedy: ids("greedy"),
    }
}

#[test]
fn llama_matches_transformers_logits_and_greedy_ids() {
    let g = goldens();
    let check = |ctx: &Context| {
        let model = Llama::load(ctx, &dir()).unwrap();
        let mut cache = model.new_cache().unwrap();
        let logits = model.forward(&g.prompt, &mut cache).unwrap().to_vec().unwrap(); // (T, V)
        assert_eq!(logits.len(), g.logits.len());
        let worst = logits
            .iter()
            .zip(&g.logits)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst <= 1e-4,
            "{}: logits differ from transformers by {worst}",
            ctx.info().name
        );
        let mut streamed = vec![];
        let ids = model
            .generate(&g.prompt, g.greedy.len(), Sampling::Greedy, |id| streamed.push(id))
            .unwrap();
        assert_eq!(ids, g.greedy, "{}: greedy ids", ctx.info().name);
        assert_eq!(streamed, ids, "every id handed to the callback, in order");
        let eager = model.generate_eager(&g.prompt, g.greedy.len(), Sampling::Greedy, |_| {});
        assert_eq!(eager.unwrap(), g.greedy, "{}: greedy ids op by op", ctx.info().name);
        // Seeded top-k sampling repeats itself; its ids are ids of the vocabulary.
        let sampled = |seed| {
            model
                .generate(&g.prompt, 6, Sampling::recommended(seed), |_| {})
                .unwrap()
        };
        let (a, b) = (sampled(3), sampled(3));
        assert_eq!(a, b, "{}: the same seed, the same ids", ctx.info().name);
        assert!(a.iter().all(|&id| (id as usize) < model.config().vocab_size));
        // The shared loop's checks name the model.
        let e = model
            .generate(&[], 2, Sampling::Greedy, |_| {})
            .unwrap_err()
            .to_string();
        assert!(e.contains("Llama::generate"), "{e}");
        // One token at a time through the cache gives the whole forward's last rows.
        let mut cache = model.new_cache().unwrap();
        let mut rows = vec![];
        for &id in &g.prompt {
            rows.extend(model.forward(&[id], &mut cache).unwrap().to_vec().unwrap());
        }
        let worst = rows
            .iter()
            .zip(&logits)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst <= 1e-4,
            "{}: cached steps differ from the whole forward by {worst}",
            ctx.info().name
        );
    };
    check(&Context::cpu());
    each_adapter(check);
}

#[test]
fn llama_refuses_bad_input_naming_it() {
    let ctx = Context::cpu();
    let model = Llama::load(&ctx, &dir()).unwrap();
    let cfg = model.config().clone();
    let mut cache = model.new_cache().unwrap();
    let err = model
        .forward(&[cfg.vocab_size as u32], &mut cache)
        .unwrap_err()
        .to_string();
    assert!(err.contains("Llama::forward") && err.contains("vocab_size"), "{err}");
    let err = model.forward(&[], &mut cache).unwrap_err().to_string();
    assert!(err.contains("ids"), "{err}");
    let long = vec![1u32; cfg.max_position_embeddings + 1];
    let err = model.forward(&long, &mut cache).unwrap_err().to_string();
    assert!(err.contains("max_position_embeddings"), "{err}");
    // Configs: a KV head count that does not divide the heads, another RoPE, another act.
    let text = std::fs::read_to_string(dir().join("config.json")).unwrap();
    let err = Config::from_json(
        &text.replace("\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"),
        "c",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("num_key_value_heads"), "{err}");
    let err = Config::from_json(&text.replace("\"default\"", "\"yarn\""), "c")
        .unwrap_err()
        .to_string();
    assert!(err.contains("yarn"), "{err}");
    let err = Config::from_json(&text.replace("\"silu\"", "\"gelu\""), "c")
        .unwrap_err()
        .to_string();
    assert!(err.contains("gelu"), "{err}");
    // A checkpoint of another width names the tensor.
    let bytes = std::fs::read(dir().join("model.safetensors")).unwrap();
    let wider = Config {
        hidden_size: 128,
        ..cfg
    };
    let err = Llama::from_safetensors(&ctx, wider, &bytes, "model")
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("input_layernorm.weight"), "{err}");
}

/// The Llama-style decoder through compiled plans (`generate::Generator`): the prefill plan
/// and one decode plan replayed at every position give the eager path's ids, greedy (= the
/// transformers goldens) and seeded top-k, streamed in order; the decode plan's last logits
/// are the whole forward's last row. The plan reads the token and position from the device
/// (`row_at_state`, `attention_decode_rope` with two query heads a key/value head).
#[test]
fn llama_plans_generate_the_eager_ids_and_logits() {
    use wgsl_compute::generate::Generator;
    let g = goldens();
    each_adapter(|ctx| {
        let model = Llama::load(ctx, &dir()).unwrap();
        let mut plans = Generator::new(&model).unwrap();
        let mut streamed = vec![];
        let ids = plans
            .generate(&g.prompt, g.greedy.len(), Sampling::Greedy, |id| streamed.push(id))
            .unwrap();
        assert_eq!(ids, g.greedy, "{}: greedy ids through the plans", ctx.info().name);
        assert_eq!(streamed, ids);
        // Five launches a layer (q, k, v; rope, the cache write and attention; the output
        // projection; gate and up; the gated down projection), none fallen back to the ops.
        let dump = plans.decode_plan().dump();
        for name in ["ln_matvec", "attention_decode_rope", "generate/head"] {
            assert!(
                dump.contains(name),
                "{}: no {name} in the decode plan:\n{dump}",
                ctx.info().name
            );
        }
        assert!(
            !dump.contains("ops/matmul") && !dump.contains("ops/rms_norm"),
            "{}: a decode projection fell back to the ops:\n{dump}",
            ctx.info().name
        );
        // The decode plan's last logits are those of the prompt + ids[..n - 1].
        let mut seen = g.prompt.clone();
        seen.extend(&ids[..ids.len() - 1]);
        let all = model
            .forward(&seen, &mut model.new_cache().unwrap())
            .unwrap()
            .to_vec()
            .unwrap();
        let v = model.config().vocab_size;
        let want = &all[all.len() - v..];
        let got = plans.last_logits().unwrap();
        let worst = got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(
            worst <= 1e-4,
            "{}: decode plan logits differ by {worst}",
            ctx.info().name
        );
        // Seeded top-k: the device sampler draws what the host sampler draws; a second prompt
        // length captures a second prefill plan.
        for prompt in [&g.prompt[..], &[5u32, 9][..]] {
            let sampling = Sampling::recommended(11);
            let want = model.generate_eager(prompt, 12, sampling, |_| {}).unwrap();
            let got = plans.generate(prompt, 12, sampling, |_| {}).unwrap();
            assert_eq!(got, want, "{}: top-k through the plans", ctx.info().name);
        }
    });
}

/// The Llama-style decoder on the tape: its logits are the inference forward's, every weight
/// gets a finite gradient of its own shape, Adam steps lower the loss on a fixed row, and the
/// trained model (its tensors updated in place) generates; the errors name the argument.
#[test]
fn llama_trains_on_the_tape() {
    use wgsl_compute::autograd::Tape;
    use wgsl_compute::train::{Adam, Optimizer};
    let g = goldens();
    let check = |ctx: &Context| {
        let model = Llama::load(ctx, &dir()).unwrap();
        let ids = g.prompt.clone();
        let targets: Vec<u32> = ids
            .iter()
            .map(|&i| (i * 7 + 3) % model.config().vocab_size as u32)
            .collect();
        let tape = Tape::new(ctx);
        let vars = model.vars(&tape).unwrap();
        let want = model
            .forward(&ids, &mut model.new_cache().unwrap())
            .unwrap()
            .to_vec()
            .unwrap();
        let got = model.logits_var(&vars, &ids).unwrap().tensor().to_vec().unwrap();
        let worst = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(worst <= 1e-4, "{}: tape logits differ by {worst}", ctx.info().name);
        let loss = model.loss_var(&vars, &ids, &targets).unwrap();
        let grads = loss.backward().unwrap();
        for (v, w) in vars.iter().zip(model.weights()) {
            let d = grads.get(v).expect("every weight has a gradient");
            assert_eq!(d.shape(), w.shape());
            assert!(d.to_vec().unwrap().iter().all(|x| x.is_finite()));
        }
        let first = loss.tensor().to_vec().unwrap()[0];
        let mut adam = Adam::new(&model.weights(), 3e-3).unwrap();
        let mut last = first;
        for _ in 0..5 {
            let tape = Tape::new(ctx);
            let vars = model.vars(&tape).unwrap();
            let loss = model.loss_var(&vars, &ids, &targets).unwrap();
            last = loss.tensor().to_vec().unwrap()[0];
            adam.step_vars(&vars, &loss.backward().unwrap()).unwrap();
        }
        assert!(last < first, "{}: loss {first} -> {last}", ctx.info().name);
        assert_eq!(model.generate(&ids, 3, Sampling::Greedy, |_| {}).unwrap().len(), 3);
        let tape = Tape::new(ctx);
        let vars = model.vars(&tape).unwrap();
        let e = model.loss_var(&vars[1..], &ids, &targets).unwrap_err().to_string();
        assert!(e.contains("Llama::logits_var") && e.contains("vars"), "{e}");
        let e = model.loss_var(&vars, &ids, &targets[1..]).unwrap_err().to_string();
        assert!(e.contains("targets"), "{e}");
    };
    check(&Context::cpu());
    each_adapter(check);
}
