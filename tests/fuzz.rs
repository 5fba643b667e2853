//! Fuzz targets on stable Rust (issue 21, item 2): each target takes an `arbitrary`
//! `Unstructured` over bytes and drives one front end of the engine, asserting no panic.
//! The bytes come from a seeded generator here, so every run is reproducible; a finding is
//! kept as a regression test (see `tests/robustness.rs`).
//!
//! Targets: the safetensors parser (random bytes and mutated valid files, then the weights
//! loader), the config reader, the s-expression front end and checker (token soup, then
//! running what checks), the tokenizer (encode / decode round trip) and shape / view
//! construction. `ENGINE_FUZZ_ITERS` scales every target (default: a few seconds each).

use std::panic::{catch_unwind, AssertUnwindSafe};

use arbitrary::{Result as AResult, Unstructured};
use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::Rng;
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::io::safetensors;
use wgsl_compute::models::gpt2::{self, Config, Tokenizer, Weights};
use wgsl_compute::{Context, Tensor};

fn iterations(default: usize) -> usize {
    std::env::var("ENGINE_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `target` on `n` seeded byte strings; fails with the seed and input of any panic.
fn fuzz(name: &str, seed: u64, default: usize, max_len: usize, target: impl Fn(&mut Unstructured) -> AResult<bool>) {
    let n = iterations(default);
    let mut rng = Rng::new(seed);
    let (mut ok, mut rejected) = (0, 0);
    for i in 0..n {
        let len = rng.below(max_len + 1);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let r = catch_unwind(AssertUnwindSafe(|| target(&mut Unstructured::new(&bytes))));
        match r {
            Ok(Ok(true)) => ok += 1,
            Ok(_) => rejected += 1,
            Err(_) => panic!("fuzz target {name} panicked on input #{i} (seed {seed}): {bytes:?}"),
        }
    }
    println!("fuzz {name}: {n} inputs, {ok} accepted, {rejected} clean errors, 0 panics");
}

#[test]
fn fuzz_safetensors_parser_and_loader() {
    let (config, valid) = gpt2::tiny_random_checkpoint(gpt2::TINY_SEED);
    let header_len = u64::from_le_bytes(valid[..8].try_into().unwrap()) as usize;
    fuzz("safetensors", 1, 3000, 256, |u| {
        let mode = u.int_in_range(0..=2)?;
        let bytes = if mode == 0 {
            // Raw bytes, sometimes behind a plausible header length.
            let mut b: Vec<u8> = u.arbitrary()?;
            if u.arbitrary()? && b.len() >= 8 {
                let n = (b.len() - 8) as u64;
                b[..8].copy_from_slice(&n.to_le_bytes());
            }
            b
        } else if mode == 1 {
            // The valid file with a few digits of its header changed: offsets that overlap,
            // leave gaps or run past the end, shapes that disagree with their bytes.
            let mut b = valid.clone();
            let digits: Vec<usize> = (8..8 + header_len).filter(|&i| b[i].is_ascii_digit()).collect();
            for _ in 0..u.int_in_range(1..=3)? {
                let at = digits[u.choose_index(digits.len())?];
                b[at] = b'0' + u.int_in_range(0..=9)?;
            }
            b
        } else {
            // The valid file with a few header bytes changed, inserted or cut.
            let mut b = valid.clone();
            for _ in 0..u.int_in_range(1..=4)? {
                let at = 8 + u.choose_index(header_len)?;
                match u.int_in_range(0..=3)? {
                    0 => b[at] = u.arbitrary()?,
                    1 => b[at] = *u.choose(b"0123456789[],:\"{}-e.")?,
                    2 => b.truncate(at + u.choose_index(b.len() - at)?),
                    _ => b[..8].copy_from_slice(&(u.arbitrary::<u64>()? % (header_len as u64 * 2)).to_le_bytes()),
                }
                if b.len() <= 8 + header_len {
                    break;
                }
            }
            b
        };
        let Ok(file) = safetensors::parse(&bytes, "fuzz") else {
            return Ok(false);
        };
        for (name, t) in &file {
            let _ = t.to_f32(name);
        }
        Ok(Weights::from_safetensors(config.clone(), &bytes, "fuzz").is_ok())
    });
}

#[test]
fn fuzz_config_reader() {
    let valid = Config::default().to_json(Some("fuzz"));
    let pieces = [
        "{",
        "}",
        "\"n_embd\"",
        "\"n_head\"",
        "\"n_layer\"",
        "\"vocab_size\"",
        "\"n_ctx\"",
        ":",
        ",",
        "0",
        "-1",
        "1e308",
        "18446744073709551615",
        "65536",
        "12",
        "null",
        "[]",
        "\"gelu\"",
        "\"activation_function\"",
        "\"layer_norm_epsilon\"",
        "0.0",
        "NaN",
    ];
    fuzz("config", 2, 3000, 128, |u| {
        let text = match u.int_in_range(0..=2)? {
            0 => String::from_utf8_lossy(&u.arbitrary::<Vec<u8>>()?).into_owned(),
            1 => {
                let n = u.int_in_range(0..=24)?;
                (0..n)
                    .map(|_| u.choose(&pieces).copied())
                    .collect::<AResult<Vec<_>>>()?
                    .join("")
            }
            _ => {
                let mut b = valid.clone().into_bytes();
                for _ in 0..u.int_in_range(1..=3)? {
                    let at = u.choose_index(b.len())?;
                    b[at] = *u.choose(b"0123456789-e.:,{}\" ")?;
                }
                String::from_utf8_lossy(&b).into_owned()
            }
        };
        Ok(match Config::from_json(&text, "fuzz") {
            Ok(c) => {
                // What parses stays inside the documented limits.
                assert!(c.n_embd <= gpt2::config::MAX_EMBD && c.vocab_size <= gpt2::config::MAX_VOCAB);
                true
            }
            Err(_) => false,
        })
    });
}

/// A random well-typed scalar expression of depth at most `depth`.
fn expression(u: &mut Unstructured, depth: u32) -> AResult<String> {
    if depth == 0 || u.ratio(1, 4)? {
        return Ok(match u.int_in_range(0..=3)? {
            0 => "h".into(),
            1 => "x".into(),
            2 => format!("{}", u.int_in_range(-40..=40)? as f32 / 8.0),
            _ => ["1e30", "-1e30", "0", "1e-30"][u.choose_index(4)?].into(),
        });
    }
    let a = expression(u, depth - 1)?;
    let b = expression(u, depth - 1)?;
    Ok(match u.int_in_range(0..=11)? {
        0 => format!("(+ {a} {b})"),
        1 => format!("(- {a} {b})"),
        2 => format!("(* {a} {b})"),
        3 => format!("(/ {a} {b})"),
        4 => format!("(tanh {a})"),
        5 => format!("(exp {a})"),
        6 => format!("(log {a})"),
        7 => format!("(max {a} {b})"),
        8 => format!("(sigmoid {a})"),
        9 => format!("(where (< {a} {b}) {a} {b})"),
        10 => format!("(sqrt (abs {a}))"),
        _ => format!("(let ((t {a})) (* t {b}))"),
    })
}

#[test]
fn fuzz_sexpr_front_end_and_checker() {
    let tokens = [
        "(",
        "(",
        "(",
        ")",
        ")",
        ")",
        "[",
        "]",
        "element-scan",
        "lambda",
        "let",
        "list",
        "zeros",
        "shape",
        "broadcast-to",
        "slice",
        "(h x)",
        "(h x a)",
        "h",
        "x",
        "a",
        "initial",
        "decay",
        "+",
        "-",
        "*",
        "/",
        "tanh",
        "exp",
        "log",
        "sum",
        "max",
        "where",
        "<",
        "not",
        "matmul",
        "random",
        ":axis",
        ":reverse",
        ":keepdims",
        ":state-axis",
        "true",
        "false",
        "1",
        "-1",
        "0",
        "2",
        "0.5",
        "1e30",
        "100000",
        "-100000",
        "99999999999999999999",
        "[2 3]",
        "[100000 100000]",
        "f",
        "(lambda (u) (f u))",
        "\"",
        ";",
        "#",
    ];
    let bindings = Bindings::new()
        .tensor("x", ArrayD::from_elem(IxDyn(&[2, 3]), 0.5))
        .tensor("decay", ArrayD::from_elem(IxDyn(&[3]), 0.9))
        .tensor("initial", ArrayD::zeros(IxDyn(&[3])));
    let ctx = Context::cpu();
    fuzz("sexpr", 3, 3000, 96, |u| {
        let pick = u.arbitrary::<u8>()?;
        let text = if pick < 16 {
            String::from_utf8_lossy(&u.arbitrary::<Vec<u8>>()?).into_owned()
        } else if pick < 128 {
            // A well-formed body: a random expression tree over the state, the input and
            // constants, so the checker, the interpreter and the gradient see valid programs.
            format!(
                "(element-scan (lambda (h x) {}) initial (list x) :axis 0)",
                expression(u, 4)?
            )
        } else {
            let mut s = String::from("(element-scan (lambda (h x) ");
            let n = u.int_in_range(0..=30)?;
            for _ in 0..n {
                s += u.choose(&tokens)?;
                s += " ";
            }
            if u.arbitrary()? {
                s += ") initial (list x) :axis 0)";
            }
            s
        };
        let Ok(scan) = ElementScan::from_sexpr(&text, &bindings) else {
            return Ok(false);
        };
        let _ = scan.ir();
        let Ok(out) = scan.run(&ctx) else { return Ok(false) };
        let seed = ArrayD::from_elem(IxDyn(out.shape()), 1.0);
        Ok(scan.grad(&ctx, &seed).is_ok())
    });
}

#[test]
fn fuzz_tokenizer_round_trip() {
    let tok = Tokenizer::gpt2().unwrap();
    fuzz("tokenizer", 4, 2000, 512, |u| {
        let text = match u.int_in_range(0..=2)? {
            0 => String::from_utf8_lossy(&u.arbitrary::<Vec<u8>>()?).into_owned(),
            1 => u.arbitrary::<String>()?,
            _ => {
                let n = u.int_in_range(0..=40)?;
                let parts = [
                    " ",
                    "  ",
                    "\n",
                    "'s",
                    "'ll",
                    "<|endoftext|>",
                    "hello",
                    "\u{4e2d}",
                    "\u{1f600}",
                    "123",
                    "!?",
                ];
                (0..n)
                    .map(|_| u.choose(&parts).copied())
                    .collect::<AResult<Vec<_>>>()?
                    .concat()
            }
        };
        let ids = tok.encode(&text);
        assert_eq!(tok.decode(&ids).unwrap(), text, "round trip of {text:?}");
        // Arbitrary ids decode or fail cleanly.
        let ids: Vec<u32> = u.arbitrary()?;
        Ok(tok.decode(&ids).is_ok())
    });
}

#[test]
fn fuzz_shape_and_view_construction() {
    let ctx = Context::cpu();
    fuzz("shapes", 5, 4000, 64, |u| {
        let dim = |u: &mut Unstructured| -> AResult<usize> {
            Ok(match u.int_in_range(0..=9)? {
                0 => 0,
                1 => usize::MAX - u.int_in_range(0..=2)?,
                2 => 1 << u.int_in_range(16..=40)?,
                _ => u.int_in_range(1..=6)?,
            })
        };
        let rank = u.int_in_range(0..=4)?;
        let shape = (0..rank).map(|_| dim(u)).collect::<AResult<Vec<_>>>()?;
        let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        let t = match n {
            Some(n) if n <= 1024 => Tensor::from_slice(&ctx, &shape, &(0..n).map(|i| i as f32).collect::<Vec<_>>()),
            // Legal but large: not worth gigabytes per input.
            Some(n) if n <= wgsl_compute::tensor::MAX_ELEMENTS => return Ok(false),
            _ => {
                assert!(
                    Tensor::zeros(&ctx, &shape).is_err(),
                    "{shape:?} past the limit was accepted"
                );
                return Ok(false);
            }
        };
        let Ok(mut t) = t else { return Ok(false) };
        for _ in 0..u.int_in_range(0..=6)? {
            let r = match u.int_in_range(0..=3)? {
                0 => t.transpose(u.int_in_range(0..=5)?, u.int_in_range(0..=5)?),
                1 => {
                    let (a, s, e) = (u.int_in_range(0..=5)?, dim(u)?, dim(u)?);
                    t.narrow(a, s.min(e), e)
                }
                2 => {
                    let r = u.int_in_range(0..=3)?;
                    let s = (0..r).map(|_| dim(u)).collect::<AResult<Vec<_>>>()?;
                    t.reshape(&s)
                }
                _ => t.contiguous(),
            };
            match r {
                Ok(v) => t = v,
                Err(_) => return Ok(false),
            }
        }
        let v = t.to_vec().map_err(|_| arbitrary::Error::IncorrectFormat)?;
        assert_eq!(v.len(), t.len());
        Ok(true)
    });
}

#[test]
fn fuzz_corpus_replays_without_a_panic() {
    // Every input libFuzzer kept (fuzz/corpus/<target>/, minimized) through the same entry
    // point as its cargo-fuzz target (fuzz/entry.rs), on stable Rust: the coverage the
    // fuzzer found stays covered in CI at the cost of a few hundred small inputs.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for (name, entry) in crate::fuzz_entry::TARGETS {
        let Ok(dir) = std::fs::read_dir(root.join(name)) else {
            println!("fuzz corpus {name}: none");
            continue;
        };
        let mut files: Vec<_> = dir.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        files.sort();
        let (mut n, mut bytes, mut panics) = (0, 0, vec![]);
        for path in &files {
            let data = std::fs::read(path).unwrap();
            n += 1;
            bytes += data.len();
            if catch_unwind(AssertUnwindSafe(|| entry(&data))).is_err() {
                panics.push(path.display().to_string());
            }
        }
        println!("fuzz corpus {name}: {n} inputs, {bytes} bytes, {} panics", panics.len());
        assert!(panics.is_empty(), "{name}: panics on {panics:#?}");
    }
}
