//! Regression tests of issue 21's failure classes: each input once panicked, aborted, hung or
//! returned a wrong answer; each now returns an `Error` naming the op, the argument and the
//! limit, or the right result. CPU context first (where most of them lived), then every
//! adapter where the class touches the device.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::element_scan::{Bindings, Body, ElementScan, ElementScanOptions, Ty};
use wgsl_compute::fused::Graph;
use wgsl_compute::generate::Generate;
use wgsl_compute::generate::Sampling;
use wgsl_compute::models::gpt2::{self, Config, Gpt2, Tokenizer, Weights};
use wgsl_compute::Unary;
use wgsl_compute::{ops, scan, Context, Tensor};

use crate::common::each_adapter;

/// `f` returns an error whose text holds every one of `words` (and does not panic).
#[track_caller]
fn expect_error<T>(r: wgsl_compute::Result<T>, words: &[&str]) -> String {
    let Err(e) = r else {
        panic!("expected an error mentioning {words:?}, got Ok")
    };
    let e = e.to_string();
    for w in words {
        assert!(e.contains(w), "error `{e}` does not mention `{w}`");
    }
    e
}

/// The CPU context plus every adapter.
fn each_context(mut f: impl FnMut(&Context)) {
    f(&Context::cpu());
    each_adapter(f);
}

fn rand_vec(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = wgsl_compute::check::Rng::new(seed);
    (0..n).map(|_| rng.uniform() as f32 * 2.0 - 1.0).collect()
}

// ---- zero-size tensors ----

#[test]
fn robustness_zero_size_tensors_on_every_context() {
    each_context(|ctx| {
        let empty = |shape: &[usize]| Tensor::zeros(ctx, shape).unwrap();
        // A scan with B = 0.
        let a = empty(&[0, 4, 3]);
        let h = scan::linear_scan(&a, &a, None).unwrap();
        assert_eq!(h.shape(), &[0, 4, 3]);
        assert!(h.to_vec().unwrap().is_empty());
        // A matmul with K = 0 is a zero (M, N) result.
        let x = empty(&[2, 0]);
        let w = empty(&[0, 3]);
        let y = ops::matmul(&x, &w).unwrap();
        assert_eq!(y.shape(), &[2, 3]);
        assert_eq!(y.to_vec().unwrap(), vec![0.0; 6]);
        // sum_last on [0, n].
        let s = ops::sum_last(&empty(&[0, 5])).unwrap();
        assert_eq!(s.shape(), &[0]);
        // Elementwise on empty operands.
        let e = ops::add(&empty(&[0, 5]), &empty(&[5])).unwrap();
        assert_eq!(e.shape(), &[0, 5]);
        // An element scan with batch 0.
        let b = Bindings::new()
            .tensor("x", ArrayD::zeros(IxDyn(&[0, 4, 3])))
            .tensor("initial", ArrayD::zeros(IxDyn(&[0, 3])));
        let es = ElementScan::from_sexpr("(element-scan (lambda (h x) (+ h x)) initial (list x) :axis 1)", &b).unwrap();
        let out = es.run(ctx).unwrap();
        assert_eq!(out.shape(), &[0, 4, 3]);
        assert!(out.to_vec().unwrap().is_empty());
    });
}

#[test]
fn robustness_empty_views_past_the_end_read_nothing() {
    each_context(|ctx| {
        let t = Tensor::from_slice(ctx, &[2, 3], &[1., 2., 3., 4., 5., 6.]).unwrap();
        // Narrowing at the end of both axes once put the offset past the buffer's end.
        let v = t.narrow(1, 3, 3).unwrap().narrow(0, 2, 2).unwrap();
        assert_eq!(v.shape(), &[0, 0]);
        assert!(v.to_vec().unwrap().is_empty());
        assert!(v.contiguous().unwrap().to_vec().unwrap().is_empty());
        let w = t
            .transpose(0, 1)
            .unwrap()
            .narrow(0, 3, 3)
            .unwrap()
            .narrow(1, 2, 2)
            .unwrap();
        assert!(ops::exp(&w).unwrap().to_vec().unwrap().is_empty());
        ops::copy_into(&w, &w).unwrap();
    });
}

// ---- shape products and offsets that wrap; allocation before checks ----

#[test]
fn robustness_shape_products_that_overflow_are_errors() {
    each_context(|ctx| {
        expect_error(
            Tensor::from_slice(ctx, &[1 << 32, 1 << 32], &[]),
            &["Tensor::from_slice", "elements"],
        );
        expect_error(
            Tensor::from_slice(ctx, &[usize::MAX, 2, 0], &[]),
            &["Tensor::from_slice"],
        );
        let z = Tensor::zeros(ctx, &[0]).unwrap();
        expect_error(z.reshape(&[1 << 32, 1 << 32]), &["reshape", "elements"]);
        expect_error(z.reshape(&[1 << 32, 1 << 32, 0]), &["reshape", "elements"]);
        // Broadcasts and matmuls whose outputs are far larger than their inputs.
        let col = Tensor::zeros(ctx, &[1 << 20, 1]).unwrap();
        let row = Tensor::zeros(ctx, &[1, 1 << 20]).unwrap();
        expect_error(ops::add(&col, &row), &["elements"]);
        let a = Tensor::zeros(ctx, &[1 << 20, 0]).unwrap();
        let b = Tensor::zeros(ctx, &[0, 1 << 20]).unwrap();
        expect_error(ops::matmul(&a, &b), &["matmul", "output"]);
    });
}

#[test]
fn robustness_huge_allocations_are_errors_not_aborts() {
    each_context(|ctx| {
        // These built a host Vec of 4 TiB / 40 GB before any check (SIGABRT).
        expect_error(Tensor::zeros(ctx, &[1 << 40]), &["elements"]);
        expect_error(
            Tensor::full(ctx, &[100_000, 100_000], 1.0),
            &["Tensor::full", "elements"],
        );
        let b = Bindings::new().tensor("initial", ArrayD::zeros(IxDyn(&[2])));
        let r = ElementScan::from_sexpr(
            "(element-scan (lambda (h x) (+ h x)) initial (list (zeros [100000 100000])) :axis 0)",
            &b,
        )
        .and_then(|s| s.run(ctx));
        assert!(r.is_err(), "(zeros [100000 100000]) ran");
    });
}

#[test]
fn robustness_offsets_near_usize_max_are_errors() {
    each_context(|ctx| {
        let q = Tensor::from_slice(ctx, &[1, 2, 4], &rand_vec(8, 1)).unwrap();
        let k = Tensor::from_slice(ctx, &[1, 3, 4], &rand_vec(12, 2)).unwrap();
        for path in [ops::AttentionPath::Composed, ops::AttentionPath::Fused] {
            for past in [usize::MAX, usize::MAX - 1, u32::MAX as usize, (u32::MAX as usize) + 1] {
                expect_error(ops::attention_with(&q, &k, &k, past, path), &["attention", "past"]);
            }
        }
        let wte = Tensor::from_slice(ctx, &[5, 4], &rand_vec(20, 3)).unwrap();
        let wpe = Tensor::from_slice(ctx, &[6, 4], &rand_vec(24, 4)).unwrap();
        for off in [usize::MAX, usize::MAX - 1, usize::MAX - 5] {
            expect_error(ops::embedding(&wte, &wpe, &[1, 2], off), &["embedding", "pos_offset"]);
        }
        // An output (T, C) past the element limit, from a wide table and many ids.
        let wide = Tensor::zeros(ctx, &[1, 1 << 20]).unwrap();
        let many = vec![0u32; 1 << 13];
        expect_error(ops::embedding(&wide, &wide, &many, 0), &["embedding", "output"]);
        // A causal offset past every column shows every column, exactly as no mask.
        let x = Tensor::from_slice(ctx, &[2, 3], &rand_vec(6, 5)).unwrap();
        let all = ops::softmax_last(&x, None).unwrap().to_vec().unwrap();
        for past in [3, usize::MAX, usize::MAX - 1, u32::MAX as usize] {
            let got = ops::softmax_last(&x, Some(past)).unwrap().to_vec().unwrap();
            for (g, w) in got.iter().zip(&all) {
                assert!((g - w).abs() < 1e-6, "past {past}: {got:?} vs {all:?}");
            }
        }
    });
}

// ---- GPT-2: generate, weights, blocked vocabularies ----

fn tiny_weights() -> Weights {
    let (config, bytes) = gpt2::tiny_random_checkpoint(gpt2::TINY_SEED);
    Weights::from_safetensors(config, &bytes, "tiny").unwrap()
}

#[test]
fn robustness_generate_with_n_near_usize_max_is_an_error() {
    let w = tiny_weights();
    let model = Gpt2::new(&Context::cpu(), &w).unwrap();
    for n in [usize::MAX, usize::MAX - 1, usize::MAX / 2] {
        expect_error(
            model.generate(&[1, 2], n, Sampling::Greedy, |_| {}),
            &["Gpt2::generate", "n_positions"],
        );
    }
}

#[test]
fn robustness_weights_that_disagree_with_their_config_are_errors() {
    let mut w = tiny_weights();
    w.config.vocab_size += 7; // wte has fewer rows than the config's vocabulary
    expect_error(Gpt2::new(&Context::cpu(), &w), &["wte", "Weights::validate"]);
    let mut w = tiny_weights();
    w.blocks.pop();
    expect_error(Gpt2::new(&Context::cpu(), &w), &["blocks", "n_layer"]);
    let mut w = tiny_weights();
    w.blocks[0].ln_2_bias = ndarray::Array1::zeros(3);
    expect_error(Gpt2::new(&Context::cpu(), &w), &["ln_2_bias"]);
}

#[test]
fn robustness_blocked_vocabulary_names_the_real_id() {
    let w = tiny_weights();
    let v = w.config.vocab_size;
    // Blocks of 7 rows: the last block is partial, so id V once passed as a local id.
    let model = Gpt2::with_vocab_block(&Context::cpu(), &w, 7).unwrap();
    let e = expect_error(model.forward(&[v as u32]), &["embedding", "ids"]);
    assert!(
        e.contains(&v.to_string()) && e.contains(&format!("below the vocabulary size {v}")),
        "{e}"
    );
}

#[test]
fn robustness_two_cpu_contexts_have_distinct_names() {
    let (a, b) = (Context::cpu(), Context::cpu());
    assert_ne!(format!("{a:?}"), format!("{b:?}"));
    let t = Tensor::zeros(&a, &[2]).unwrap();
    let u = Tensor::zeros(&b, &[2]).unwrap();
    let e = expect_error(ops::add(&t, &u), &["different context"]);
    assert!(e.contains(&a.info().name) && e.contains(&b.info().name), "{e}");
}

// ---- misused public builders ----

#[test]
fn robustness_misused_body_builders_are_errors() {
    // No parameters at all.
    let b = Body::builder(&[]);
    let x = b.param(0);
    expect_error(b.finish(x), &["state"]);
    let mut b = Body::builder(&[]);
    let c = b.constant(1.0);
    expect_error(b.finish(c), &["state"]);
    // A parameter index past the parameters.
    let mut b = Body::builder(&[Ty::F32, Ty::F32]);
    let bad = b.param(5);
    expect_error(b.unary(Unary::Tanh, bad), &["not a node"]);
    let h = b.param(0);
    expect_error(b.binary(wgsl_compute::Binary::Add, h, bad), &["not a node"]);
    expect_error(b.ty(bad), &["not a node"]);
    expect_error(b.finish(bad), &["not a node"]);
    // A hand-edited body with a forward reference is rejected before it runs.
    let mut b = Body::builder(&[Ty::F32, Ty::F32]);
    let (h, x) = (b.param(0), b.param(1));
    let s = b.binary(wgsl_compute::Binary::Add, h, x).unwrap();
    let mut body = b.finish(s).unwrap();
    body.nodes[2].op =
        wgsl_compute::element_scan::Op::Binary(wgsl_compute::Binary::Add, wgsl_compute::element_scan::Id(7), x);
    let opts = ElementScanOptions::default();
    let r = ElementScan::from_body(
        body,
        opts,
        ArrayD::zeros(IxDyn(&[2])),
        vec![ArrayD::zeros(IxDyn(&[3, 2]))],
    );
    expect_error(r, &["earlier node"]);
}

#[test]
fn robustness_fused_nodes_from_another_graph_are_errors() {
    let mut other = Graph::new();
    for _ in 0..10 {
        other.constant(1.0);
    }
    let foreign = other.constant(2.0);
    let mut g = Graph::new();
    let x = g.input();
    g.add(x, foreign);
    each_context(|ctx| {
        let t = Tensor::zeros(ctx, &[4]).unwrap();
        expect_error(wgsl_compute::fused::run(&g, &[&t]), &["fused", "earlier nodes"]);
    });
    assert!(g.eval(&[1.0]).is_nan());
    assert!(g.eval(&[]).is_nan());
}

// ---- deep bodies and exponential inlining ----

#[test]
fn robustness_huge_bodies_are_errors_before_compiling() {
    // 100k chained terms once overflowed the driver compiler's stack.
    let n = 100_000;
    let mut b = Body::builder(&[Ty::F32, Ty::F32]);
    let (mut h, x) = (b.param(0), b.param(1));
    for _ in 0..n {
        h = b.binary(wgsl_compute::Binary::Add, h, x).unwrap();
        h = b.unary(Unary::Tanh, h).unwrap();
    }
    expect_error(
        b.finish(h),
        &["E-SIZE-001", &wgsl_compute::element_scan::MAX_BODY_NODES.to_string()],
    );
    // The same through the s-expression front end: one `+` of 20,000 terms.
    let terms = " x".repeat(20_000);
    let b = Bindings::new()
        .tensor("x", ArrayD::zeros(IxDyn(&[2, 3])))
        .tensor("initial", ArrayD::zeros(IxDyn(&[3])));
    let prog = format!("(element-scan (lambda (h x) (+ h{terms})) initial (list x) :axis 0)");
    let t = Instant::now();
    expect_error(ElementScan::from_sexpr(&prog, &b), &["E-SIZE-001"]);
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn robustness_exponential_inlining_is_bounded() {
    // f_k calls f_{k-1} twice: 2^40 inlined calls at 40 levels, each level under MAX_INLINE.
    let mut prog = "(element-scan (lambda (h x) (+ x (f39 h))) initial (list x) :axis 0)".to_string();
    for k in (1..40).rev() {
        prog = format!("(let ((f{k} (lambda (a) (f{} (* 0.5 (f{} a)))))) {prog})", k - 1, k - 1);
    }
    prog = format!("(let ((f0 (lambda (a) (+ a 1)))) {prog})");
    let b = Bindings::new()
        .tensor("x", ArrayD::zeros(IxDyn(&[2, 3])))
        .tensor("initial", ArrayD::zeros(IxDyn(&[3])));
    let t = Instant::now();
    let e = expect_error(ElementScan::from_sexpr(&prog, &b), &["E-SIZE-001"]);
    assert!(t.elapsed() < Duration::from_secs(10), "took {:?}: {e}", t.elapsed());
}

// ---- tokenizer ----

#[test]
fn robustness_tokenizer_is_not_quadratic_in_word_length() {
    let tok = Tokenizer::gpt2().unwrap();
    // Single "words" (one pre-token each) of 100 KB: digits, letters, CJK, emoji.
    let words = [
        "7".repeat(100_000),
        "ab".repeat(50_000),
        "\u{4e2d}\u{6587}".repeat(17_000),
        "\u{1f600}".repeat(25_000),
    ];
    for w in &words {
        let t = Instant::now();
        let ids = tok.encode(w);
        let took = t.elapsed();
        assert_eq!(tok.decode(&ids).unwrap(), *w);
        assert!(took < Duration::from_secs(5), "{} bytes took {took:?}", w.len());
    }
}

#[test]
fn robustness_tokenizer_heap_merge_matches_the_quadratic_merge() {
    // The reference: rescan every pair after each merge (the old loop), on short pieces.
    let tok = Tokenizer::gpt2().unwrap();
    let mut rng = wgsl_compute::check::Rng::new(21);
    let alphabet: Vec<char> = "aeiou tnsrlh'0123456789.,!? \u{e9}\u{4e2d}\u{1f600}\n"
        .chars()
        .collect();
    for _ in 0..300 {
        let len = 1 + (rng.uniform() * 40.0) as usize;
        let s: String = (0..len)
            .map(|_| alphabet[(rng.uniform() * alphabet.len() as f64) as usize % alphabet.len()])
            .collect();
        let ids = tok.encode(&s);
        assert_eq!(tok.decode(&ids).unwrap(), s);
        let want: Vec<u32> = tok
            .pieces(&s)
            .iter()
            .flat_map(|p| quadratic_bpe(tok, p.as_bytes()))
            .collect();
        assert_eq!(ids, want, "{s:?}");
    }
}

fn quadratic_bpe(tok: &Tokenizer, piece: &[u8]) -> Vec<u32> {
    // Ranks through the public API: a byte string is a token when it encodes to one id whose
    // decoding is itself.
    let rank = |b: &[u8]| -> Option<u32> {
        (0..tok.vocab_size() as u32 - 1).find(|&id| tok.decode_bytes(&[id]).ok().as_deref() == Some(b))
    };
    thread_local! {
        static CACHE: std::cell::RefCell<std::collections::HashMap<Vec<u8>, Option<u32>>> = Default::default();
    }
    let rank = |b: &[u8]| CACHE.with(|c| *c.borrow_mut().entry(b.to_vec()).or_insert_with(|| rank(b)));
    let mut parts: Vec<usize> = (0..=piece.len()).collect();
    while parts.len() > 2 {
        let best = (0..parts.len() - 2)
            .filter_map(|i| rank(&piece[parts[i]..parts[i + 2]]).map(|r| (r, i)))
            .min();
        match best {
            Some((_, i)) => {
                parts.remove(i + 1);
            }
            None => break,
        }
    }
    parts.windows(2).filter_map(|w| rank(&piece[w[0]..w[1]])).collect()
}

// ---- bounded reads, safetensors ----

#[test]
fn robustness_config_reads_are_bounded() {
    let t = Instant::now();
    expect_error(
        Config::read(std::path::Path::new("/dev/zero")),
        &["/dev/zero", "not a regular file"],
    );
    let dir = std::env::temp_dir().join(format!("engine-robustness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("config.json");
    std::fs::write(&big, vec![b' '; (gpt2::config::MAX_CONFIG_BYTES + 1) as usize]).unwrap();
    expect_error(Config::read(&big), &["config.json", "limit"]);
    expect_error(Weights::load(&dir), &["config.json", "limit"]);
    std::fs::remove_dir_all(&dir).ok();
    assert!(t.elapsed() < Duration::from_secs(5));
    // Sizes past the limits are errors, not overflowing products later.
    expect_error(
        Config::from_json(r#"{"n_embd": 18446744073709551615, "n_head": 1}"#, "c"),
        &["n_embd", "limit"],
    );
    expect_error(
        Config::from_json(r#"{"vocab_size": 16777217}"#, "c"),
        &["vocab_size", "limit"],
    );
}

/// A safetensors file with these (name, dtype, shape, [begin, end]) entries and `data` bytes.
fn safetensors_file(entries: &[(&str, &str, &[u64], [u64; 2])], data: usize) -> Vec<u8> {
    let fields: Vec<String> = entries
        .iter()
        .map(|(n, d, s, o)| {
            format!(
                r#""{n}":{{"dtype":"{d}","shape":{s:?},"data_offsets":[{},{}]}}"#,
                o[0], o[1]
            )
        })
        .collect();
    let header = format!("{{{}}}", fields.join(","));
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend(std::iter::repeat_n(0u8, data));
    out
}

#[test]
fn robustness_safetensors_offsets_tile_the_data_exactly() {
    use wgsl_compute::io::safetensors::parse;
    let ok = safetensors_file(&[("a", "F32", &[2], [0, 8]), ("b", "F16", &[2], [8, 12])], 12);
    assert_eq!(parse(&ok, "f").unwrap().len(), 2);
    // Overlapping.
    let f = safetensors_file(&[("a", "F32", &[2], [0, 8]), ("b", "F32", &[2], [4, 12])], 12);
    expect_error(parse(&f, "f"), &["overlaps"]);
    let f = safetensors_file(&[("a", "F32", &[2], [0, 8]), ("b", "F32", &[2], [0, 8])], 8);
    expect_error(parse(&f, "f"), &["overlaps"]);
    // A gap, and bytes after the last tensor.
    let f = safetensors_file(&[("a", "F32", &[2], [0, 8]), ("b", "F32", &[1], [12, 16])], 16);
    expect_error(parse(&f, "f"), &["gap"]);
    let f = safetensors_file(&[("a", "F32", &[2], [0, 8])], 12);
    expect_error(parse(&f, "f"), &["belongs to no tensor"]);
    // Shape against bytes when the product overflows or the dtype is unknown.
    let f = safetensors_file(&[("a", "F32", &[1 << 62, 1 << 62, 0], [0, 0])], 0);
    expect_error(parse(&f, "f"), &["overflows"]);
    let f = safetensors_file(&[("a", "F32", &[1 << 32, 1 << 32], [0, 8])], 8);
    expect_error(parse(&f, "f"), &["overflows"]);
    let f = safetensors_file(&[("a", "Q4", &[2], [0, 8])], 8);
    expect_error(parse(&f, "f"), &["unknown dtype"]);
    let f = safetensors_file(&[("a", "I64", &[2], [0, 8])], 8);
    expect_error(parse(&f, "f"), &["needs 16 bytes"]);
}

// ---- environment variables ----

#[test]
fn robustness_unparsable_environment_variables_are_errors() {
    use wgsl_compute::context::BackendChoice;
    use wgsl_compute::scan::Route;
    assert!(Route::parse("gpu").is_ok());
    expect_error(Route::parse("fast"), &["ENGINE_SCAN"]);
    expect_error(BackendChoice::parse("vulcan"), &["ENGINE_BACKEND"]);
    // The variables themselves, in a child process so this binary's environment is untouched.
    let exe = std::env::current_exe().unwrap();
    let has_gpu = !crate::common::contexts().is_empty();
    for (var, value) in [
        ("ENGINE_POOL_BYTES", "abc"),
        ("ENGINE_POOL_BYTES", "-1"),
        ("ENGINE_POOL_BYTES", "1e9"),
        ("ENGINE_BACKEND", "\u{ff}"),
        ("ENGINE_SCAN", "\u{ff}"),
    ] {
        if var == "ENGINE_POOL_BYTES" && !has_gpu {
            continue; // the pool exists only on a GPU context
        }
        let mut cmd = std::process::Command::new(&exe);
        cmd.args([
            "--exact",
            "robustness::robustness_env_probe",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ENGINE_ENV_PROBE", "1")
        .env_remove("ENGINE_REQUIRE_GPU");
        #[cfg(unix)]
        if value == "\u{ff}" {
            use std::os::unix::ffi::OsStrExt;
            cmd.env(var, std::ffi::OsStr::from_bytes(&[0xff, 0xfe]));
        } else {
            cmd.env(var, value);
        }
        #[cfg(not(unix))]
        cmd.env(var, value);
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        assert!(
            text.contains("probe: error") && text.contains(var),
            "{var}={value:?}: {text}"
        );
    }
}

/// Run by [`robustness_unparsable_environment_variables_are_errors`] in a child process.
#[test]
fn robustness_env_probe() {
    if std::env::var_os("ENGINE_ENV_PROBE").is_none() {
        return;
    }
    let r = Context::new().and_then(|ctx| {
        let a = Tensor::zeros(&ctx, &[1, 2, 1])?;
        scan::linear_scan(&a, &a, None).map(|_| ())
    });
    match r {
        Ok(()) => println!("probe: ok"),
        Err(e) => println!("probe: error: {e}"),
    }
}

// ---- kernel parameters ----

#[test]
fn robustness_no_panic_on_any_listed_input() {
    // Everything above, once more, under catch_unwind: a panic anywhere fails with its input.
    let ctx = Context::cpu();
    type Case<'a> = (&'a str, Box<dyn Fn() -> wgsl_compute::Result<()> + 'a>);
    let cases: Vec<Case> = vec![
        ("zeros 2^40", Box::new(|| Tensor::zeros(&ctx, &[1 << 40]).map(|_| ()))),
        (
            "reshape [0] -> huge",
            Box::new(|| Tensor::zeros(&ctx, &[0])?.reshape(&[1 << 32, 1 << 32]).map(|_| ())),
        ),
        (
            "sum_last [0, 3]",
            Box::new(|| ops::sum_last(&Tensor::zeros(&ctx, &[0, 3])?).map(|_| ())),
        ),
    ];
    for (name, f) in &cases {
        let r = catch_unwind(AssertUnwindSafe(f));
        assert!(r.is_ok(), "{name} panicked");
    }
}

// ---- issue 32: panics, aborts and unchecked inputs ----

#[test]
fn robustness_interp_call_checks_its_arguments() {
    use wgsl_compute::expr::{Binary, Body, Interp, Ty};
    let mut b = Body::builder(&[Ty::F32, Ty::F32]);
    let (x, y) = (b.param(0), b.param(1));
    let s = b.binary(Binary::Add, x, y).unwrap();
    let body = b.finish(s).unwrap();
    let mut interp = Interp::new(&body);
    // A two-parameter body called with one slice, none, or three.
    expect_error(
        interp.call(&[&[1.0]]),
        &["expr::Interp::call", "2 argument slices", "1 slices"],
    );
    expect_error(interp.call(&[]), &["expr::Interp::call", "0 slices"]);
    expect_error(interp.call(&[&[1.0], &[2.0], &[3.0]]), &["3 slices"]);
    assert_eq!(interp.call(&[&[1.0], &[2.0]]).unwrap(), &[3.0]);
    // An empty slice, or one of the wrong length, for a vector parameter.
    let v = Ty::vector(3);
    let mut b = Body::builder(&[v, v]);
    let (x, y) = (b.param(0), b.param(1));
    let s = b.binary(Binary::Mul, x, y).unwrap();
    let body = b.finish(s).unwrap();
    let mut interp = Interp::new(&body);
    expect_error(
        interp.call(&[&[], &[1.0, 2.0, 3.0]]),
        &["parameter 0", "1 or 3 values", "0 values"],
    );
    expect_error(
        interp.call(&[&[1.0, 2.0, 3.0], &[1.0, 2.0]]),
        &["parameter 1", "2 values"],
    );
    // One value broadcasts.
    assert_eq!(interp.call(&[&[2.0], &[1.0, 2.0, 3.0]]).unwrap(), &[2.0, 4.0, 6.0]);
}

#[test]
fn robustness_random_windows_with_huge_sizes_is_an_error() {
    use wgsl_compute::check::Rng;
    use wgsl_compute::models::random_windows;
    let mut rng = Rng::new(1);
    for (rows, seq) in [(1usize << 40, 1usize), (usize::MAX, 2), (1 << 30, 2)] {
        expect_error(
            random_windows(&[1, 2, 3], rows, seq, &mut rng),
            &["random_windows", "rows * seq"],
        );
    }
    let (i, t) = random_windows(&[1, 2, 3], 4, 2, &mut rng).unwrap();
    assert_eq!((i.len(), t.len()), (8, 8));
}

#[test]
fn robustness_reference_layer_norm_checks_gamma_and_beta() {
    let x = ArrayD::<f32>::zeros(IxDyn(&[2, 3]));
    let (g4, g3) = (ArrayD::<f32>::ones(IxDyn(&[4])), ArrayD::<f32>::ones(IxDyn(&[3])));
    let r = wgsl_compute::reference::nn::layer_norm(&x.view(), &g4.view(), &g3.view(), 1e-5);
    expect_error(r, &["reference::nn::layer_norm", "gamma", "[4]", "[3]"]);
    let r = wgsl_compute::reference::nn::layer_norm(&x.view(), &g3.view(), &g4.view(), 1e-5);
    expect_error(r, &["beta"]);
    let s = ArrayD::<f32>::zeros(IxDyn(&[]));
    expect_error(
        wgsl_compute::reference::nn::layer_norm(&s.view(), &g3.view(), &g3.view(), 1e-5),
        &["rank >= 1"],
    );
}

#[test]
fn robustness_reference_linear_scan_checks_shapes() {
    use wgsl_compute::reference::scan::linear_scan;
    let z = |s: &[usize]| ArrayD::<f32>::zeros(IxDyn(s));
    let r = linear_scan(&z(&[1, 3, 2]).view(), &z(&[1, 4, 2]).view(), None);
    expect_error(r, &["reference::scan::linear_scan", "[1, 3, 2]", "[1, 4, 2]"]);
    expect_error(
        linear_scan(&z(&[3, 2]).view(), &z(&[3, 2]).view(), None),
        &["(B, T, D)"],
    );
    let h0 = z(&[1, 3]);
    expect_error(
        linear_scan(&z(&[1, 3, 2]).view(), &z(&[1, 3, 2]).view(), Some(&h0.view())),
        &["h0", "[1, 2]"],
    );
    assert_eq!(
        linear_scan(&z(&[1, 3, 2]).view(), &z(&[1, 3, 2]).view(), None)
            .unwrap()
            .shape(),
        &[1, 3, 2]
    );
}

#[test]
fn robustness_mixer_reference_checks_the_width() {
    use wgsl_compute::mixer::{reference, MixerKind};
    let kind = MixerKind::GivensMinGru { k: 4 };
    // D = 3 and D = 6 are not multiples of k = 4; 7 is odd.
    for (width, word) in [(6usize, "GivensMinGRU"), (12, "GivensMinGRU"), (7, "even last axis")] {
        let pre = ArrayD::<f32>::zeros(IxDyn(&[1, 2, width]));
        expect_error(reference::scan_f32(kind, &pre), &[word]);
    }
    let pre = ArrayD::<f32>::zeros(IxDyn(&[1, 2, 16]));
    assert_eq!(reference::scan_f32(kind, &pre).unwrap().shape(), &[1, 2, 8]);
    let dh = ArrayD::<f32>::zeros(IxDyn(&[1, 2, 4]));
    expect_error(
        reference::scan_backward_f32(kind, &pre, &dh),
        &["scan_backward_f32", "dh"],
    );
    expect_error(
        reference::scan_f32(kind, &ArrayD::zeros(IxDyn(&[2, 16]))),
        &["(B, T, 2D)"],
    );
}

#[test]
fn robustness_adam_rejects_a_nan_or_negative_learning_rate() {
    use wgsl_compute::train::Adam;
    each_context(|ctx| {
        let p = Tensor::from_slice(ctx, &[3], &[1.0, 2.0, 3.0]).unwrap();
        for lr in [f32::NAN, -1.0, f32::INFINITY, -0.5e-3] {
            expect_error(Adam::new(&[&p], lr), &["adam", "lr"]);
        }
        // A setting changed afterwards is checked before the step moves anything.
        let mut adam = Adam::new(&[&p], 1e-3).unwrap();
        adam.lr = f32::NAN;
        let g = Tensor::from_slice(ctx, &[3], &[0.1, 0.1, 0.1]).unwrap();
        expect_error(adam.step(&[&p], &[&g]), &["lr"]);
        assert_eq!(p.to_vec().unwrap(), [1.0, 2.0, 3.0]);
        adam.lr = 1e-3;
        adam.beta2 = 1.0;
        expect_error(adam.step(&[&p], &[&g]), &["beta2"]);
    });
}

#[test]
fn robustness_char_model_sample_rejects_bad_temperatures() {
    use wgsl_compute::check::Rng;
    use wgsl_compute::mixer::{MixerKind, MixerPath};
    use wgsl_compute::models::{CharModel, CharModelConfig};
    let config = CharModelConfig {
        kind: MixerKind::SignedMinGru,
        path: MixerPath::Auto,
        vocab: 5,
        layers: 1,
        d_model: 4,
        d_state: 4,
    };
    let model = CharModel::init(&Context::cpu(), config, 1).unwrap();
    for t in [f32::NAN, 0.0, -1.0, f32::INFINITY] {
        expect_error(
            model.sample(&[1, 2], 3, 4, t, &mut Rng::new(1), |_| {}),
            &["CharModel::sample", "temperature"],
        );
    }
    assert_eq!(
        model
            .sample(&[1, 2], 3, 4, 0.8, &mut Rng::new(1), |_| {})
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn robustness_kv_cache_checks_the_config() {
    let mut config = tiny_weights().config;
    config.n_embd = 10;
    config.n_head = 3;
    expect_error(
        gpt2::KvCache::new(&Context::cpu(), &config),
        &["KvCache::new", "not a multiple of n_head"],
    );
    config.n_head = 0;
    expect_error(
        gpt2::KvCache::new(&Context::cpu(), &config),
        &["KvCache::new", "n_head"],
    );
}

#[test]
fn robustness_two_gpu_contexts_on_one_adapter_have_distinct_names() {
    each_adapter(|ctx| {
        // A second context on the same adapter as `ctx`.
        let others = pollster::block_on(Context::each_adapter()).unwrap();
        let other = others
            .iter()
            .find(|c| c.info().name == ctx.info().name && c.info().backend == ctx.info().backend)
            .expect("the adapter enumerates again");
        assert_ne!(ctx.id(), other.id());
        let t = Tensor::zeros(ctx, &[2]).unwrap();
        let u = Tensor::zeros(other, &[2]).unwrap();
        match ops::add(&t, &u) {
            Err(wgsl_compute::Error::WrongContext { expected, actual, .. }) => {
                assert_ne!(expected, actual, "the two contexts read alike");
                assert!(expected.contains(&format!("#{}", ctx.id())), "{expected}");
                assert!(actual.contains(&format!("#{}", other.id())), "{actual}");
            }
            other => panic!("expected a wrong-context error, got {other:?}"),
        }
    });
}
