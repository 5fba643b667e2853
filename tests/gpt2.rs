//! GPT-2: tokenizer against tiktoken's ids, the safetensors loader and its errors, the
//! shipped tiny checkpoint, and the forward pass (GPU and CPU context) against the
//! independent f64 reference, cached against full recomputation.

use std::path::Path;

use wgsl_compute::check::{gates, Gate, Rng};
use wgsl_compute::generate::{Generate, Sampler, Sampling};
use wgsl_compute::io::safetensors::{parse, serialize};
use wgsl_compute::models::gpt2::reference;
use wgsl_compute::models::gpt2::{
    random_checkpoint, tiny_random_checkpoint, Config, Gpt2, StepOptions, Tokenizer, Weights, END_OF_TEXT, TINY_SEED,
};
use wgsl_compute::{Context, DType, Error};

use crate::common::{assert_close, each_adapter, each_adapter_alone};

/// GPU and CPU-context forward against the f64 reference.
const GATE: Gate = gates::LOGITS;

/// Ids from tiktoken-rs 0.12.1 (`r50k_base().encode_ordinary`), an independent implementation.
const TIKTOKEN_CASES: &[(&str, &[u32])] = &[
    (
        "Alan Turing theorized that computers would one day become",
        &[36235, 39141, 18765, 1143, 326, 9061, 561, 530, 1110, 1716],
    ),
    (
        "Hello, world! It's a test: don't, won't, they'll, we've, I'm, she'd, you're.",
        &[
            15496, 11, 995, 0, 632, 338, 257, 1332, 25, 836, 470, 11, 1839, 470, 11, 484, 1183, 11, 356, 1053, 11, 314,
            1101, 11, 673, 1549, 11, 345, 821, 13,
        ],
    ),
    (
        "a  b   c\n\n\nd \t e   ",
        &[64, 220, 275, 220, 220, 269, 628, 198, 67, 220, 197, 304, 220, 220, 220],
    ),
    ("  leading and trailing  ", &[220, 3756, 290, 25462, 220, 220]),
    (
        "Ünïcödé café naïve — “quotes” 東京 😀🎉 ∑x²",
        &[
            127, 250, 77, 26884, 66, 9101, 67, 2634, 40304, 41492, 851, 564, 250, 421, 6421, 447, 251, 10545, 251, 109,
            12859, 105, 30325, 222, 8582, 236, 231, 18872, 239, 87, 31185,
        ],
    ),
    (
        "12345 3.14159 1,000,000 x1y2",
        &[
            10163, 2231, 513, 13, 1415, 19707, 352, 11, 830, 11, 830, 2124, 16, 88, 17,
        ],
    ),
    (
        "line one\nline two\r\n\tindented",
        &[1370, 530, 198, 1370, 734, 201, 198, 197, 521, 4714],
    ),
    ("'s 's'S 'LL ' ll", &[338, 705, 82, 6, 50, 705, 3069, 705, 32660]),
];

#[test]
fn gpt2_tokenizer_matches_tiktoken_and_round_trips() {
    let tok = Tokenizer::gpt2().unwrap();
    assert_eq!(tok.vocab_size(), 50257);
    for (text, want) in TIKTOKEN_CASES {
        let ids = tok.encode(text);
        assert_eq!(&ids, want, "encode {text:?}");
        assert_eq!(tok.decode(&ids).unwrap(), *text, "round trip {text:?}");
    }
    assert_eq!(tok.pieces("a  b\n\nc  "), ["a", " ", " b", "\n", "\n", "c", "  "]);
    assert_eq!(tok.encode("<|endoftext|>"), [END_OF_TEXT]);
    assert_eq!(tok.encode("a<|endoftext|>b"), [64, END_OF_TEXT, 65]);
    assert_eq!(tok.decode(&[END_OF_TEXT]).unwrap(), "<|endoftext|>");
    assert!(matches!(tok.decode(&[50257]), Err(Error::Value { .. })));
    // A token can end inside a character: the bytes of "😀" span tokens.
    assert_eq!(tok.decode_bytes(&tok.encode("😀")).unwrap(), "😀".as_bytes());
}

#[test]
fn gpt2_tokenizer_round_trips_random_text() {
    let tok = Tokenizer::gpt2().unwrap();
    let mut rng = Rng::new(7);
    let alphabet: Vec<char> = "abcXYZ019 .,'!?\n\t  éüß—“”東京😀\u{00a0}\u{3000}'sll've"
        .chars()
        .collect();
    for len in [1, 2, 7, 64, 257] {
        for _ in 0..20 {
            let s: String = (0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect();
            let ids = tok.encode(&s);
            assert_eq!(tok.decode(&ids).unwrap(), s, "ids {ids:?}");
            assert!(ids.iter().all(|&i| i < END_OF_TEXT));
        }
    }
}

fn small_config() -> Config {
    // Awkward on purpose: head width 8, three heads, widths not multiples of 16.
    Config {
        n_layer: 3,
        n_head: 3,
        n_embd: 24,
        n_positions: 40,
        vocab_size: 300,
        layer_norm_epsilon: 1e-5,
    }
}

fn io_error(r: Result<Weights, Error>) -> (String, String) {
    match r {
        Err(Error::Io { what, message }) => (what, message),
        Err(e) => panic!("expected Error::Io, got {e}"),
        Ok(_) => panic!("expected Error::Io, got a model"),
    }
}

#[test]
fn gpt2_loader_widens_dtypes_and_accepts_hf_variants() {
    let cfg = small_config();
    let f32w = Weights::from_safetensors(cfg.clone(), &random_checkpoint(&cfg, 3, DType::F32).unwrap(), "f32").unwrap();
    for dtype in [DType::F16, DType::BF16] {
        let w = Weights::from_safetensors(cfg.clone(), &random_checkpoint(&cfg, 3, dtype).unwrap(), "half").unwrap();
        // Same seed, so each value is the f32 one rounded to the narrower type.
        let round = |x: f32| match dtype {
            DType::F16 => half::f16::from_f32(x).to_f32(),
            _ => half::bf16::from_f32(x).to_f32(),
        };
        assert_eq!(w.wte, f32w.wte.mapv(round), "{dtype:?}");
        assert_eq!(w.blocks[2].fc_weight, f32w.blocks[2].fc_weight.mapv(round), "{dtype:?}");
    }
    // `transformer.` prefixes and an explicit tied lm_head, as some exports write them.
    let bytes = random_checkpoint(&cfg, 3, DType::F32).unwrap();
    let file = parse(&bytes, "x").unwrap();
    let mut tensors: Vec<_> = file
        .iter()
        .map(|(k, t)| (format!("transformer.{k}"), DType::F32, t.shape.clone(), t.data.to_vec()))
        .collect();
    let wte = &file["wte.weight"];
    tensors.push((
        "lm_head.weight".into(),
        DType::F32,
        wte.shape.clone(),
        wte.data.to_vec(),
    ));
    let w = Weights::from_safetensors(cfg.clone(), &serialize(&tensors, &[]), "prefixed").unwrap();
    assert_eq!(w.wte, f32w.wte);
    assert_eq!(w.blocks[1].attn_weight, f32w.blocks[1].attn_weight);
}

#[test]
fn gpt2_loader_errors_name_the_file_or_tensor() {
    let cfg = small_config();
    let good = random_checkpoint(&cfg, 5, DType::F16).unwrap();
    let load = |bytes: &[u8]| Weights::from_safetensors(cfg.clone(), bytes, "model.safetensors");

    // Truncated: the data section ends early.
    let (what, msg) = io_error(load(&good[..good.len() - 10]));
    assert!(what.contains("tensor `") && msg.contains("truncated"), "{what}: {msg}");
    // Truncated inside the header, and too short for the length.
    let (what, _) = io_error(load(&good[..40]));
    assert_eq!(what, "model.safetensors");
    io_error(load(&good[..5]));
    // Not safetensors at all.
    let (_, msg) = io_error(load(b"{\"n_layer\": 2} this is a JSON config, not weights"));
    assert!(msg.contains("not safetensors"), "{msg}");
    io_error(load(&[]));
    // Wrong shape: a checkpoint for another width.
    let wider = Config {
        n_embd: 30,
        ..cfg.clone()
    };
    let (what, msg) = io_error(load(&random_checkpoint(&wider, 5, DType::F32).unwrap()));
    assert!(
        what.contains("h.0.ln_1.weight") && msg.contains("[30]") && msg.contains("[24]"),
        "{what}: {msg}"
    );
    // Missing tensor.
    let file = parse(&good, "x").unwrap();
    let without: Vec<_> = file
        .iter()
        .filter(|(k, _)| k.as_str() != "h.2.mlp.c_proj.bias")
        .map(|(k, t)| (k.clone(), DType::F16, t.shape.clone(), t.data.to_vec()))
        .collect();
    let (what, msg) = io_error(load(&serialize(&without, &[])));
    assert!(
        what.contains("h.2.mlp.c_proj.bias") && msg.contains("missing"),
        "{what}: {msg}"
    );
    // Unsupported dtype, and a shape that disagrees with its own byte count.
    let text = String::from_utf8_lossy(&good[8..8 + 200]).to_string();
    assert!(text.contains("\"F16\""));
    let relabel = |from: &str, to: &str| {
        let n = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
        let header = String::from_utf8(good[8..8 + n].to_vec())
            .unwrap()
            .replacen(from, to, 1);
        let mut b = (header.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(header.as_bytes());
        b.extend_from_slice(&good[8 + n..]);
        b
    };
    let (what, msg) = io_error(load(&relabel("\"F16\"", "\"I8\"")));
    assert!(what.contains("tensor `") && msg.contains("I8"), "{what}: {msg}");
    let (_, msg) = io_error(load(&relabel("\"shape\":[72]", "\"shape\":[73]")));
    assert!(msg.contains("needs"), "{msg}");
    // Corrupted bytes anywhere in the header: an error or a model, never a panic.
    let mut rng = Rng::new(9);
    let n = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
    for _ in 0..300 {
        let mut bad = good.clone();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(n + 8);
            bad[i] = rng.below(256) as u8;
        }
        let _ = load(&bad);
    }
}

#[test]
fn gpt2_config_reads_hf_json() {
    let c = Config::from_json(
        r#"{"n_layer": 2, "n_ctx": 64, "n_embd": 32, "n_head": 4}"#,
        "config.json",
    )
    .unwrap();
    assert_eq!(
        (c.n_layer, c.n_positions, c.n_embd, c.n_head, c.vocab_size),
        (2, 64, 32, 4, 50257)
    );
    assert_eq!(Config::from_json("{}", "c").unwrap(), Config::default());
    let round = Config::from_json(&small_config().to_json(Some("note")), "c").unwrap();
    assert_eq!(round, small_config());
    for bad in [
        r#"{"n_embd": 10, "n_head": 3}"#,
        r#"{"n_layer": -1}"#,
        "[1]",
        "not json",
        r#"{"n_head": 0}"#,
    ] {
        assert!(matches!(Config::from_json(bad, "c"), Err(Error::Io { .. })), "{bad}");
    }
}

#[test]
fn gpt2_tiny_checkpoint_is_shipped_byte_for_byte() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/tiny-random");
    let (config, bytes) = tiny_random_checkpoint(TINY_SEED);
    let shipped = std::fs::read(dir.join("model.safetensors")).unwrap();
    assert!(
        shipped == bytes,
        "assets/models/tiny-random differs: rerun the make_tiny_gpt2 example"
    );
    let text = std::fs::read_to_string(dir.join("config.json")).unwrap();
    assert!(text.contains("UNTRAINED"));
    assert_eq!(Config::from_json(&text, "config.json").unwrap(), config);
    let w = Weights::load(&dir).unwrap();
    assert_eq!(w.config, config);
}

/// Checks one model step (embeddings, residuals, logits of the new rows) against the reference.
fn check_steps(ctx: &Context, name: &str, model: &Gpt2, weights: &Weights, prompt: &[u32], extra: usize) -> Vec<u32> {
    let mut cache = model.new_cache().unwrap();
    let mut context = prompt.to_vec();
    let mut input = prompt.to_vec();
    let opts = StepOptions {
        all_logits: true,
        capture: true,
    };
    for step_no in 0..=extra {
        let past = cache.len();
        let step = model.step(&input, &mut cache, opts).unwrap();
        let trace = reference::forward(weights, &context).unwrap();
        let rows = ndarray::s![past..past + input.len(), ..];
        let flat = |a: ndarray::ArrayView2<f32>| a.iter().copied().collect::<Vec<f32>>();
        let case = |what: &str| format!("{name} step {step_no} {what}");
        let emb = step.embeddings.as_ref().unwrap().to_vec().unwrap();
        assert_close(
            ctx,
            &case("embeddings"),
            &emb,
            &flat(trace.embeddings.slice(rows)),
            GATE,
        );
        assert_eq!(step.residuals.len(), weights.config.n_layer);
        for (i, (got, want)) in step.residuals.iter().zip(&trace.residuals).enumerate() {
            let got = got.to_vec().unwrap();
            assert_close(
                ctx,
                &case(&format!("residual {i}")),
                &got,
                &flat(want.slice(rows)),
                GATE,
            );
        }
        let logits = step.logits.to_vec().unwrap();
        assert_close(ctx, &case("logits"), &logits, &flat(trace.logits.slice(rows)), GATE);
        // Greedy: the reference's arg-max of the last row.
        let id = wgsl_compute::generate::argmax(trace.logits.row(context.len() - 1).as_slice().unwrap());
        context.push(id);
        input = vec![id];
    }
    context[prompt.len()..].to_vec()
}

#[test]
fn gpt2_forward_matches_reference_on_every_adapter() {
    let tok = Tokenizer::gpt2().unwrap();
    let tiny = Weights::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/tiny-random")).unwrap();
    let prompt = tok.encode("Alan Turing theorized that computers would one day become");
    let cfg = small_config();
    let small =
        Weights::from_safetensors(cfg.clone(), &random_checkpoint(&cfg, 21, DType::F32).unwrap(), "small").unwrap();
    let mut rng = Rng::new(22);
    let small_prompt: Vec<u32> = (0..17).map(|_| rng.below(cfg.vocab_size) as u32).collect();
    let run = |ctx: &Context| {
        let tiny_model = Gpt2::new(ctx, &tiny).unwrap();
        check_steps(ctx, "tiny", &tiny_model, &tiny, &prompt, 2);
        let model = Gpt2::new(ctx, &small).unwrap();
        check_steps(ctx, "small", &model, &small, &small_prompt, 3);
        // One token at a time from the start: every step has T = 1.
        check_steps(ctx, "small, 1-token prompt", &model, &small, &small_prompt[..1], 2);
        // wte in row blocks (128, 128, 44), as for a vocabulary over the binding limit.
        let blocked = Gpt2::with_vocab_block(ctx, &small, 128).unwrap();
        check_steps(ctx, "small, wte in 3 blocks", &blocked, &small, &small_prompt, 1);
    };
    run(&Context::cpu());
    each_adapter(run);
}

#[test]
fn gpt2_cached_path_matches_full_recomputation() {
    let cfg = small_config();
    let weights =
        Weights::from_safetensors(cfg.clone(), &random_checkpoint(&cfg, 31, DType::F32).unwrap(), "small").unwrap();
    let mut rng = Rng::new(32);
    let prompt: Vec<u32> = (0..5).map(|_| rng.below(cfg.vocab_size) as u32).collect();
    let run = |ctx: &Context| {
        let model = Gpt2::new(ctx, &weights).unwrap();
        let mut cache = model.new_cache().unwrap();
        let mut ids = prompt.clone();
        let mut input = prompt.clone();
        for step_no in 0..4 {
            let cached = model.step(&input, &mut cache, StepOptions::default()).unwrap();
            assert_eq!(cached.logits.shape(), [1, cfg.vocab_size]);
            let full = model.forward(&ids).unwrap(); // (T, V)
            let t = ids.len();
            let last = full.narrow(0, t - 1, t).unwrap().to_vec().unwrap();
            let got = cached.logits.to_vec().unwrap();
            assert_close(
                ctx,
                &format!("cached vs full, step {step_no}"),
                &got,
                &last,
                Gate::new(1e-5, 1e-5),
            );
            let id = wgsl_compute::generate::argmax(&got);
            ids.push(id);
            input = vec![id];
        }
        assert_eq!(cache.len(), ids.len() - 1);
    };
    run(&Context::cpu());
    each_adapter(run);
}

#[test]
fn gpt2_greedy_tokens_equal_and_no_pipeline_is_rebuilt() {
    let tok = Tokenizer::gpt2().unwrap();
    let tiny = Weights::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/tiny-random")).unwrap();
    let prompt = tok.encode("To be, or not to be");
    let n = 6;
    let cpu = Gpt2::new(&Context::cpu(), &tiny).unwrap();
    let want = cpu.generate(&prompt, n, Sampling::Greedy, |_| {}).unwrap();
    // The reference's greedy continuation, recomputed from scratch at every step.
    let mut ids = prompt.clone();
    for _ in 0..n {
        let trace = reference::forward(&tiny, &ids).unwrap();
        ids.push(wgsl_compute::generate::argmax(
            trace.logits.row(ids.len() - 1).as_slice().unwrap(),
        ));
    }
    assert_eq!(want, ids[prompt.len()..]);
    each_adapter_alone(|ctx| {
        let model = Gpt2::new(ctx, &tiny).unwrap();
        let mut streamed = Vec::new();
        let mut built = Vec::new();
        let got = model
            .generate(&prompt, n, Sampling::Greedy, |id| {
                streamed.push(id);
                built.push(ctx.pipelines_built());
            })
            .unwrap();
        assert_eq!(got, want, "greedy tokens on {}", ctx.info().name);
        assert_eq!(streamed, got);
        // Sequence lengths travel in uniforms: after the second token nothing new compiles.
        assert!(
            built[1..].windows(2).all(|w| w[0] == w[1]),
            "pipelines built per token: {built:?}"
        );
    });
}

#[test]
fn gpt2_sampling_is_reproducible_by_seed() {
    let mut rng = Rng::new(41);
    let logits = rng.vec_normal(1000, 2.0);
    let draw = |mode: Sampling| {
        let mut s = Sampler::new(mode).unwrap();
        (0..50).map(|_| s.pick(&logits).unwrap()).collect::<Vec<_>>()
    };
    let a = Sampling::TopK {
        temperature: 0.8,
        k: 20,
        seed: 1,
    };
    assert_eq!(draw(a), draw(a));
    let other_seed = Sampling::TopK {
        temperature: 0.8,
        k: 20,
        seed: 2,
    };
    assert_ne!(draw(a), draw(other_seed));
    // Every draw is among the 20 largest.
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&x, &y| logits[y].total_cmp(&logits[x]));
    assert!(draw(a).iter().all(|&i| order[..20].contains(&(i as usize))));
    // k = 1 is greedy; greedy picks the arg-max.
    let greedy = order[0] as u32;
    let top1 = Sampling::TopK {
        temperature: 0.8,
        k: 1,
        seed: 1,
    };
    assert!(draw(top1).iter().all(|&i| i == greedy));
    assert!(draw(Sampling::Greedy).iter().all(|&i| i == greedy));
    assert!(Sampler::new(Sampling::TopK {
        temperature: 0.0,
        k: 5,
        seed: 0
    })
    .is_err());
    // Whole generations repeat with the seed, on the CPU context and on every adapter.
    let cfg = small_config();
    let weights =
        Weights::from_safetensors(cfg.clone(), &random_checkpoint(&cfg, 42, DType::F32).unwrap(), "small").unwrap();
    let mode = Sampling::TopK {
        temperature: 1.0,
        k: 50,
        seed: 7,
    };
    let cpu = Gpt2::new(&Context::cpu(), &weights).unwrap();
    let first = cpu.generate(&[1, 2, 3], 8, mode, |_| {}).unwrap();
    assert_eq!(first, cpu.generate(&[1, 2, 3], 8, mode, |_| {}).unwrap());
    each_adapter(|ctx| {
        let model = Gpt2::new(ctx, &weights).unwrap();
        assert_eq!(model.generate(&[1, 2, 3], 8, mode, |_| {}).unwrap(), first);
    });
    // Past n_positions is an error, not a panic.
    assert!(matches!(
        cpu.generate(&[1; 30], 11, mode, |_| {}),
        Err(Error::Value { .. })
    ));
}

#[test]
fn gpt2_shakespeare_greedy_matches_transformers() {
    // Tokens recorded from transformers' GPT2LMHeadModel (fp32, CUDA) on the shipped file.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/shakespeare");
    let text = std::fs::read_to_string(dir.join("reference_tokens.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let case = &json["prompts"][1];
    let ids = |v: &serde_json::Value| -> Vec<u32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect()
    };
    let prompt = case["prompt"].as_str().unwrap();
    let want = ids(&case["generated_ids"]);
    assert_eq!(Tokenizer::gpt2().unwrap().encode(prompt), ids(&case["prompt_ids"]));
    let weights = Weights::load(&dir).unwrap();
    let n = 12; // of the 40 recorded, to keep the software adapters quick
    each_adapter(|ctx| {
        let model = Gpt2::new(ctx, &weights).unwrap();
        let got = model
            .generate(&ids(&case["prompt_ids"]), n, Sampling::Greedy, |_| {})
            .unwrap();
        assert_eq!(got, want[..n], "{prompt:?} on {}", ctx.info().name);
    });
}

#[test]
fn gpt2_a_vocab_block_of_zero_rows_is_an_error() {
    // Issue 41, item 7: `rows = 0` silently became blocks of one row.
    let cfg = small_config();
    let small =
        Weights::from_safetensors(cfg.clone(), &random_checkpoint(&cfg, 23, DType::F32).unwrap(), "small").unwrap();
    let check = |ctx: &Context| {
        let err = Gpt2::with_vocab_block(ctx, &small, 0).err().expect("rows = 0 refused");
        assert!(
            matches!(
                err,
                Error::Value {
                    op: "Gpt2::with_vocab_block",
                    arg: "rows",
                    ..
                }
            ),
            "{err}"
        );
        assert!(Gpt2::with_vocab_block(ctx, &small, 1).is_ok());
    };
    check(&Context::cpu());
    each_adapter(check);
}
