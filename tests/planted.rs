//! Tests that catch the deliberate bugs of issues 21 and 32, item 5 (`scripts/mutants/`
//! plants them again; each entry names the test here that must fail). Every expected value is
//! computed here, independently of the engine's reference where the reference could share
//! the bug.

use std::collections::BTreeMap;

use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::generate::{Generate, Sampler, Sampling};
use wgsl_compute::mixer::MixerKind;
use wgsl_compute::models::gpt2::{self, Weights};
use wgsl_compute::ops::{self, AttentionPath};
use wgsl_compute::{Context, Tensor};

use crate::common::{assert_close, each_adapter};

/// Softmax of a row in f64, max-subtracted.
fn softmax(row: &[f32]) -> Vec<f32> {
    let max = row.iter().fold(f64::MIN, |m, &v| m.max(v as f64));
    let e: Vec<f64> = row.iter().map(|&v| (v as f64 - max).exp()).collect();
    let total: f64 = e.iter().sum();
    e.iter().map(|v| (v / total) as f32).collect()
}

#[test]
fn planted_softmax_inputs_beyond_exp_range() {
    // f32 exp overflows past 88.7: inputs in [60, 160] make a softmax without the max
    // subtraction return inf / NaN.
    let mut rng = Rng::new(2101);
    let (rows, cols) = (6, 300);
    let x = rng.vec_range(rows * cols, 60.0, 160.0);
    let want: Vec<f32> = x.chunks(cols).flat_map(softmax).collect();
    let run = |ctx: &Context| {
        let t = Tensor::from_slice(ctx, &[rows, cols], &x).unwrap();
        let got = ops::softmax_last(&t, None).unwrap().to_vec().unwrap();
        assert_close(
            ctx,
            "softmax of inputs in [60, 160]",
            &got,
            &want,
            Gate::new(1e-6, 1e-4),
        );
    };
    run(&Context::cpu());
    each_adapter(run);
}

/// Causal attention of one query row against `k`, `v` (Tk, D) in f64.
fn attention_row(q: &[f32], k: &[f32], v: &[f32], d: usize, visible: usize) -> Vec<f32> {
    let scale = 1.0 / (d as f64).sqrt();
    let s: Vec<f64> = (0..visible)
        .map(|j| (0..d).map(|e| q[e] as f64 * k[j * d + e] as f64).sum::<f64>() * scale)
        .collect();
    let max = s.iter().cloned().fold(f64::MIN, f64::max);
    let w: Vec<f64> = s.iter().map(|x| (x - max).exp()).collect();
    let total: f64 = w.iter().sum();
    (0..d)
        .map(|e| ((0..visible).map(|j| w[j] * v[j * d + e] as f64).sum::<f64>() / total) as f32)
        .collect()
}

#[test]
fn planted_fused_attention_largest_score_in_the_second_key_block() {
    // 300 keys: the fused kernel walks them in blocks of 256. Key 290 (second block) has by
    // far the largest score, so a kernel that does not rescale its running sum when the
    // maximum moves gets it wrong by ~1e-1. Scores reach ~100 (past exp's f32 range) too.
    let (h, tq, tk, d) = (2, 3, 300, 16);
    let mut rng = Rng::new(2102);
    let q = rng.vec_range(h * tq * d, -1.0, 1.0);
    let mut k = rng.vec_range(h * tk * d, -1.0, 1.0);
    let v = rng.vec_range(h * tk * d, -1.0, 1.0);
    for hh in 0..h {
        for e in 0..d {
            // k[290] = 25 q[row 0] direction: a score ~25 |q|^2 / 4 above the others.
            k[(hh * tk + 290) * d + e] = 25.0 * q[(hh * tq) * d + e];
        }
    }
    let past = tk - tq;
    let mut want = vec![];
    for hh in 0..h {
        for i in 0..tq {
            let qi = &q[(hh * tq + i) * d..(hh * tq + i + 1) * d];
            let kh = &k[hh * tk * d..(hh + 1) * tk * d];
            let vh = &v[hh * tk * d..(hh + 1) * tk * d];
            want.extend(attention_row(qi, kh, vh, d, past + i + 1));
        }
    }
    let run = |ctx: &Context, path: AttentionPath| {
        let t = |s: &[usize], x: &[f32]| Tensor::from_slice(ctx, s, x).unwrap();
        let got = ops::attention_with(
            &t(&[h, tq, d], &q),
            &t(&[h, tk, d], &k),
            &t(&[h, tk, d], &v),
            past,
            path,
        )
        .unwrap()
        .to_vec()
        .unwrap();
        assert_close(
            ctx,
            &format!("attention {path:?}, max at key 290 of 300"),
            &got,
            &want,
            Gate::new(1e-5, 1e-4),
        );
    };
    run(&Context::cpu(), AttentionPath::Composed);
    each_adapter(|ctx| {
        run(ctx, AttentionPath::Fused);
        run(ctx, AttentionPath::Composed);
    });
}

#[test]
fn planted_sampler_honours_temperature() {
    // Two logits 0 and 1: P(id 1) = sigmoid(1 / T). 4,000 draws put the frequency within
    // 0.03 of it (about 4 standard deviations); T = 0.5, 1 and 2 give 0.881, 0.731, 0.622.
    for (temperature, p) in [(0.5f32, 0.8808), (1.0, 0.7311), (2.0, 0.6225), (0.1, 0.99995)] {
        let mut s = Sampler::new(Sampling::TopK {
            temperature,
            k: 0,
            seed: 7,
        })
        .unwrap();
        let n = 4000;
        let ones = (0..n).filter(|_| s.pick(&[0.0, 1.0]).unwrap() == 1).count();
        let freq = ones as f64 / n as f64;
        assert!(
            (freq - p).abs() < 0.03,
            "temperature {temperature}: P(1) = {freq}, want {p}"
        );
    }
    // top-k keeps only the k largest.
    let mut s = Sampler::new(Sampling::TopK {
        temperature: 100.0,
        k: 2,
        seed: 8,
    })
    .unwrap();
    for _ in 0..200 {
        assert!(s.pick(&[5.0, -1.0, 4.0, 0.0]).unwrap() != 1);
    }
}

#[test]
fn planted_rotation_mixers_sin_cos_in_every_quadrant() {
    // The parity rows of the rotation family draw angles in [-7, 7] (every quadrant of
    // sin_cos's range reduction, twice); the root tests' own cases draw them in [-2, 2].
    let cases: Vec<_> = wgsl_compute::parity::mixer::mixer_cases(false)
        .into_iter()
        .filter(|c| c.kind.is_rotation() || matches!(c.kind, MixerKind::GivensMinGru { .. }))
        .collect();
    assert!(!cases.is_empty());
    each_adapter(|ctx| {
        for c in &cases {
            let row = pollster::block_on(wgsl_compute::parity::mixer::run_case(ctx, c));
            assert!(
                row.passed,
                "{} on {}",
                wgsl_compute::parity::markdown_row(&row),
                ctx.info().name
            );
        }
    });
}

/// An independent safetensors reader (JSON header by hand-rolled offsets, F32 only): the
/// loader's output must match it tensor by tensor, so a loader that swaps two tensors (ln_1
/// and ln_2, say) fails.
fn independent_read(bytes: &[u8]) -> BTreeMap<String, Vec<f32>> {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let data = &bytes[8 + n..];
    let mut out = BTreeMap::new();
    for (name, e) in header.as_object().unwrap() {
        if name == "__metadata__" {
            continue;
        }
        let (b, end) = (
            e["data_offsets"][0].as_u64().unwrap() as usize,
            e["data_offsets"][1].as_u64().unwrap() as usize,
        );
        let v = match e["dtype"].as_str().unwrap() {
            "F32" => data[b..end]
                .chunks(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            "F16" => data[b..end]
                .chunks(2)
                .map(|c| f16(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
            other => panic!("{name}: dtype {other}"),
        };
        out.insert(name.trim_start_matches("transformer.").to_string(), v);
    }
    out
}

/// IEEE half to f32, written out (sign, 5-bit exponent, 10-bit mantissa; subnormals too).
fn f16(h: u16) -> f32 {
    let sign = if h >> 15 == 1 { -1.0 } else { 1.0 };
    let (e, m) = (((h >> 10) & 0x1f) as i32, (h & 0x3ff) as f32);
    sign * match e {
        0 => m * 2f32.powi(-24),
        31 => f32::INFINITY,
        _ => (1.0 + m / 1024.0) * 2f32.powi(e - 15),
    }
}

#[test]
fn planted_loader_matches_an_independent_reader() {
    let (config, bytes) = gpt2::tiny_random_checkpoint(gpt2::TINY_SEED);
    let w = Weights::from_safetensors(config.clone(), &bytes, "tiny").unwrap();
    let raw = independent_read(&bytes);
    let flat = |a: &ndarray::ArrayD<f32>| a.iter().copied().collect::<Vec<f32>>();
    let check = |name: String, got: Vec<f32>| {
        let want = raw.get(&name).unwrap_or_else(|| panic!("{name} missing from the file"));
        assert_eq!(&got, want, "{name}");
    };
    check("wte.weight".into(), flat(&w.wte.clone().into_dyn()));
    check("wpe.weight".into(), flat(&w.wpe.clone().into_dyn()));
    check("ln_f.weight".into(), w.ln_f_weight.to_vec());
    check("ln_f.bias".into(), w.ln_f_bias.to_vec());
    for (i, b) in w.blocks.iter().enumerate() {
        let k = |s: &str| format!("h.{i}.{s}");
        check(k("ln_1.weight"), b.ln_1_weight.to_vec());
        check(k("ln_1.bias"), b.ln_1_bias.to_vec());
        check(k("ln_2.weight"), b.ln_2_weight.to_vec());
        check(k("ln_2.bias"), b.ln_2_bias.to_vec());
        check(k("attn.c_attn.weight"), flat(&b.attn_weight.clone().into_dyn()));
        check(k("attn.c_attn.bias"), b.attn_bias.to_vec());
        check(k("attn.c_proj.weight"), flat(&b.attn_proj_weight.clone().into_dyn()));
        check(k("attn.c_proj.bias"), b.attn_proj_bias.to_vec());
        check(k("mlp.c_fc.weight"), flat(&b.fc_weight.clone().into_dyn()));
        check(k("mlp.c_fc.bias"), b.fc_bias.to_vec());
        check(k("mlp.c_proj.weight"), flat(&b.mlp_proj_weight.clone().into_dyn()));
        check(k("mlp.c_proj.bias"), b.mlp_proj_bias.to_vec());
    }
    // The tiny checkpoint's layer norms must differ, or a swap would go unseen.
    assert_ne!(w.blocks[0].ln_1_weight, w.blocks[0].ln_2_weight);
}

#[test]
fn planted_adam_matches_an_independent_reference() {
    // Adam (Kingma & Ba, algorithm 1) written out in f64 here: bias-corrected moments,
    // w -= lr m_hat / (sqrt(v_hat) + eps).
    let mut rng = Rng::new(2106);
    let w0 = rng.vec_range(300, -1.0, 1.0);
    let grads: Vec<Vec<f32>> = (0..4).map(|_| rng.vec_range(300, -1.0, 1.0)).collect();
    let (lr, b1, b2, eps) = (0.01f64, 0.9f64, 0.999f64, 1e-8f64);
    let mut w: Vec<f64> = w0.iter().map(|&x| x as f64).collect();
    let (mut m, mut v) = (vec![0f64; 300], vec![0f64; 300]);
    for (t, g) in grads.iter().enumerate() {
        let t = t as i32 + 1;
        for i in 0..300 {
            let g = g[i] as f64;
            m[i] = b1 * m[i] + (1.0 - b1) * g;
            v[i] = b2 * v[i] + (1.0 - b2) * g * g;
            let (mh, vh) = (m[i] / (1.0 - b1.powi(t)), v[i] / (1.0 - b2.powi(t)));
            w[i] -= lr * mh / (vh.sqrt() + eps);
        }
    }
    let want: Vec<f32> = w.iter().map(|&x| x as f32).collect();
    let run = |ctx: &Context| {
        let p = Tensor::from_slice(ctx, &[3, 100], &w0).unwrap();
        let mut adam = wgsl_compute::train::Adam::new(&[&p], lr as f32).unwrap();
        for g in &grads {
            adam.step(&[&p], &[&Tensor::from_slice(ctx, &[3, 100], g).unwrap()])
                .unwrap();
        }
        assert_close(
            ctx,
            "adam vs an f64 reference",
            &p.to_vec().unwrap(),
            &want,
            Gate::new(1e-6, 1e-5),
        );
    };
    run(&Context::cpu());
    each_adapter(run);
}

#[test]
fn planted_fusion_across_a_dispatch_that_rewrites_an_input() {
    // exp(x) is captured, then x is overwritten (copy_into), then exp's output is consumed.
    // Fusing exp into the consumer would read the new x: the answer must use the old one.
    // The expected values are written here: exp(x_old) + y.
    each_adapter(|ctx| {
        let mut rng = Rng::new(3208);
        let n = 37;
        let (x_old, x_new, y) = (
            rng.vec_range(n, -2.0, 2.0),
            rng.vec_range(n, 3.0, 4.0),
            rng.vec_range(n, -1.0, 1.0),
        );
        let want: Vec<f32> = x_old
            .iter()
            .zip(&y)
            .map(|(&a, &b)| ((a as f64).exp() + b as f64) as f32)
            .collect();
        let t = |v: &[f32]| Tensor::from_slice(ctx, &[n], v).unwrap();
        let (x, xn, yt, xo) = (t(&x_old), t(&x_new), t(&y), t(&x_old));
        let (plan, z) = wgsl_compute::plan::Plan::capture(ctx, &[&x, &xn, &yt], || {
            let e = ops::exp(&x)?;
            ops::copy_into(&x, &xn)?;
            ops::add(&e, &yt)
        })
        .unwrap();
        // x holds x_new after the capture ran: put the old values back, then replay.
        ops::copy_into(&x, &xo).unwrap();
        plan.replay(ctx).unwrap();
        assert_close(
            ctx,
            &format!("exp(x) + y across a rewrite of x\n{}", plan.dump()),
            &z.to_vec().unwrap(),
            &want,
            Gate::new(1e-6, 1e-5),
        );
        assert_eq!(x.to_vec().unwrap(), x_new, "the copy ran in the replay");
    });
}

#[test]
fn planted_fusion_through_a_transposed_view_of_the_producer() {
    // The consumer reads exp(x) through a transposed view: absorbing exp would read x in the
    // consumer's order, untransposed. The answer must be exp(x)^T + y, written out here.
    each_adapter(|ctx| {
        let mut rng = Rng::new(3210);
        let n = 5;
        let (xv, yv) = (rng.vec_range(n * n, -2.0, 2.0), rng.vec_range(n * n, -1.0, 1.0));
        let want: Vec<f32> = (0..n * n)
            .map(|i| {
                let (r, c) = (i / n, i % n);
                ((xv[c * n + r] as f64).exp() + yv[i] as f64) as f32
            })
            .collect();
        let x = Tensor::from_slice(ctx, &[n, n], &xv).unwrap();
        let y = Tensor::from_slice(ctx, &[n, n], &yv).unwrap();
        let (plan, z) = wgsl_compute::plan::Plan::capture(ctx, &[&x, &y], || {
            let e = ops::exp(&x)?;
            ops::add(&e.transpose(0, 1)?, &y)
        })
        .unwrap();
        plan.replay(ctx).unwrap();
        assert_close(
            ctx,
            &format!("exp(x)^T + y\n{}", plan.dump()),
            &z.to_vec().unwrap(),
            &want,
            Gate::new(1e-6, 1e-5),
        );
    });
}

#[test]
fn planted_generator_rewrites_the_prompt_of_a_length_it_has_a_plan_for() {
    // One Generator, two prompts of the SAME length: the second replays the cached prefill
    // plan, which must read the second prompt's ids (written before every replay), not the
    // first's. Greedy ids must equal the eager path's for each prompt, and differ between them.
    let (config, bytes) = gpt2::tiny_random_checkpoint(gpt2::TINY_SEED);
    let weights = Weights::from_safetensors(config, &bytes, "tiny").unwrap();
    each_adapter(|ctx| {
        if ctx.info().kind == wgsl_compute::DeviceKind::CpuReference {
            return; // the compiled path is GPU-only
        }
        let model = gpt2::Gpt2::new(ctx, &weights).unwrap();
        let mut g = gpt2::Generator::new(&model).unwrap();
        let mut seen = vec![];
        for prompt in [[5u32, 17, 2, 40], [9, 3, 33, 1], [5, 17, 2, 40]] {
            let want = model.generate_eager(&prompt, 8, Sampling::Greedy, |_| {}).unwrap();
            let got = g.generate(&prompt, 8, Sampling::Greedy, |_| {}).unwrap();
            assert_eq!(
                got,
                want,
                "prompt {prompt:?} (plan for length 4 reused) on {}",
                ctx.info().name
            );
            seen.push(got);
        }
        assert_ne!(seen[0], seen[1], "the two prompts should lead to different ids");
    });
}

#[test]
fn planted_lookback_folds_every_predecessors_aggregate_back_to_the_first_chunk() {
    // With the inclusive carries withheld (a test hook), every chunk's look-back folds the
    // aggregates of all its predecessors back to chunk 0: the path a fast GPU takes when a
    // look-back meets a predecessor still looking back itself, which no adapter here produces
    // on its own. B1 T1000 D8: two vec4 walks over 32 chunks of 32 steps (and a ragged last
    // one), so look-backs fold up to 31 aggregates. The expected values are a plain f64 loop.
    use wgsl_compute::scan::{self, Route, ScanOptions, Strategy};
    let (t, d) = (1000, 8);
    let mut rng = Rng::new(61);
    let a = rng.vec_range(t * d, 0.5, 1.0);
    let x = rng.vec_range(t * d, -1.0, 1.0);
    let mut want = vec![0f32; t * d];
    for c in 0..d {
        let mut h = 0f64;
        for s in 0..t {
            h = f64::from(a[s * d + c]) * h + f64::from(x[s * d + c]);
            want[s * d + c] = h as f32;
        }
    }
    let opts = ScanOptions {
        route: Some(Route::Gpu),
        strategy: Strategy::LookBack,
    };
    wgsl_compute::recurrence::lookback::withhold_lookback_carries(true);
    each_adapter(|ctx| {
        if ctx.info().kind == wgsl_compute::context::DeviceKind::CpuReference {
            return;
        }
        let at = Tensor::from_slice(ctx, &[1, t, d], &a).unwrap();
        let xt = Tensor::from_slice(ctx, &[1, t, d], &x).unwrap();
        let h = scan::linear_scan_with(&at, &xt, None, &opts).unwrap().to_vec().unwrap();
        assert_close(
            ctx,
            "look-back through every aggregate",
            &h,
            &want,
            wgsl_compute::check::gates::SCAN_AFFINE,
        );
    });
    wgsl_compute::recurrence::lookback::withhold_lookback_carries(false);
}
