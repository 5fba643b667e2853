//! The campaign's families for the surfaces of issue 41 (deliverable 7): the tape (autograd
//! `Var` ops, their gradients and `clip_grad_norm`), the optimisers, `ParamStore`,
//! `TextStream`, the tune cache's paths, padded `matrix_affine_scan` (v not a power of two)
//! and `Context::from_wgpu`.
//!
//! Each family draws seeded random inputs, valid and not, runs each under `catch_unwind` on
//! the CPU context and then on every adapter (`each_adapter`, outputs poisoned with NaN), and
//! compares every GPU result with the CPU context's (`TextStream`, which runs on the host,
//! with `String::from_utf8_lossy` of the same bytes). It counts inputs, clean errors, results,
//! panics and wrong results, prints them as `campaign: <family>: ...` (the line CI keeps) and
//! fails on any panic or wrong result. Sizes are small: the whole file runs in seconds on
//! lavapipe and llvmpipe GL.

use std::panic::{catch_unwind, AssertUnwindSafe};

use wgsl_compute::autograd::{Tape, Var};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::scan::{self, Route, ScanOptions, Strategy};
use wgsl_compute::train::{clip_grad_norm, Adam, ParamStore, Sgd};
use wgsl_compute::tune::TuneMode;
use wgsl_compute::{Context, Result, Tensor};

use crate::common::each_adapter;

/// A case's run on one context: its outputs, flattened.
type Run = Box<dyn Fn(&Context) -> Result<Vec<Vec<f32>>>>;

/// One optimiser step over (parameters, gradients).
type Step = Box<dyn FnMut(&[&Tensor], &[&Tensor]) -> Result<()>>;

/// One input: what it is, and the op run on a context (the same draws on each).
struct Case {
    what: String,
    run: Run,
}

fn case(what: String, run: impl Fn(&Context) -> Result<Vec<Vec<f32>>> + 'static) -> Case {
    Case {
        what,
        run: Box::new(run),
    }
}

/// The counts of one family.
#[derive(Default)]
struct Tally {
    inputs: usize,
    clean_errors: usize,
    results: usize,
    compared: usize,
    panics: Vec<String>,
    wrong: Vec<String>,
}

impl Tally {
    /// Counts one run: `None` when it panicked, else its outcome.
    fn count<T>(&mut self, who: &str, what: &str, r: std::thread::Result<Result<T>>) -> Option<Result<T>> {
        self.inputs += 1;
        match r {
            Err(_) => {
                self.panics.push(format!("{who}: {what}"));
                None
            }
            Ok(Err(e)) => {
                self.clean_errors += 1;
                Some(Err(e))
            }
            Ok(Ok(v)) => {
                self.results += 1;
                Some(Ok(v))
            }
        }
    }

    /// Prints the family's line and fails on a panic or a wrong result.
    fn report(self, family: &str, against: &str) {
        println!(
            "campaign: {family}: {} inputs, {} clean errors, {} results ({} compared with {against}; {} wrong), {} panics",
            self.inputs,
            self.clean_errors,
            self.results,
            self.compared,
            self.wrong.len(),
            self.panics.len()
        );
        assert!(self.panics.is_empty(), "{family} panics: {:#?}", self.panics);
        assert!(self.wrong.is_empty(), "{family} wrong results: {:#?}", self.wrong);
    }
}

/// The first element where `got` and `want` differ: the same NaN-ness, the same infinity,
/// finite values within `gate`.
fn differ(got: &[Vec<f32>], want: &[Vec<f32>], gate: Gate) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} outputs, the CPU gives {}", got.len(), want.len()));
    }
    for (o, (g, w)) in got.iter().zip(want).enumerate() {
        if g.len() != w.len() {
            return Some(format!("output {o}: {} elements, the CPU gives {}", g.len(), w.len()));
        }
        for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
            let ok = if g.is_nan() || w.is_nan() {
                g.is_nan() && w.is_nan()
            } else if g.is_infinite() || w.is_infinite() {
                g == w
            } else {
                (f64::from(g) - f64::from(w)).abs() <= gate.atol + gate.rtol * f64::from(w).abs()
            };
            if !ok {
                return Some(format!("output {o} element {i}: GPU {g:e}, CPU {w:e}"));
            }
        }
    }
    None
}

/// Runs `cases` on the CPU context, then on every adapter against it; `check` is what every
/// result must satisfy on its own (the CPU's included), `None` when it does.
fn campaign(family: &str, cases: &[Case], gate: Gate, check: impl Fn(&[Vec<f32>]) -> Option<String>) {
    let cpu = Context::cpu();
    let mut t = Tally::default();
    let checked = |t: &mut Tally, who: &str, what: &str, out: &[Vec<f32>]| {
        if let Some(why) = check(out) {
            t.wrong.push(format!("{who}: {what} ({why})"));
        }
    };
    let want: Vec<Option<Result<Vec<Vec<f32>>>>> = cases
        .iter()
        .map(|c| {
            let r = catch_unwind(AssertUnwindSafe(|| (c.run)(&cpu)));
            let r = t.count("cpu", &c.what, r);
            if let Some(Ok(out)) = &r {
                checked(&mut t, "cpu", &c.what, out);
            }
            r
        })
        .collect();
    each_adapter(|ctx| {
        let name = format!("{} ({:?})", ctx.info().name, ctx.info().backend);
        for (c, want) in cases.iter().zip(&want) {
            let r = catch_unwind(AssertUnwindSafe(|| (c.run)(ctx)));
            let Some(Ok(got)) = t.count(&name, &c.what, r) else {
                continue;
            };
            checked(&mut t, &name, &c.what, &got);
            if let Some(Ok(want)) = want {
                t.compared += 1;
                if let Some(why) = differ(&got, want, gate) {
                    t.wrong.push(format!("{name}: {} ({why})", c.what));
                }
            }
        }
    });
    t.report(family, "the CPU context");
}

/// No check beyond the comparison with the CPU context.
fn none(_: &[Vec<f32>]) -> Option<String> {
    None
}

/// A dimension: mostly small, sometimes 0.
fn dim(rng: &mut Rng) -> usize {
    match rng.below(12) {
        0 => 0,
        1..=3 => 1,
        _ => 2 + rng.below(6),
    }
}

fn tensor(ctx: &Context, shape: &[usize], data: &[f32]) -> Result<Tensor> {
    Tensor::from_slice(ctx, shape, data)
}

fn values(v: &Var) -> Result<Vec<f32>> {
    v.tensor().to_vec()
}

#[test]
fn campaign_surfaces_tape() {
    // A chain of one to three recorded ops on x (r, c), a loss, its gradients, then
    // clip_grad_norm over them (gradients scaled by up to 1e20 and down to 3e-30).
    let mut rng = Rng::new(0x41_01);
    let cases: Vec<Case> = (0..60)
        .map(|_| {
            let (r, c, c2) = (dim(&mut rng), dim(&mut rng), 1 + rng.below(5));
            let x = rng.vec_range(r * c, -2.0, 2.0);
            let w = rng.vec_range(c * c2, -1.0, 1.0);
            let other = rng.vec_range(r * c, -2.0, 2.0);
            let mut cond = rng.vec_range(r * c, -1.0, 1.0);
            cond.iter_mut()
                .step_by(3)
                .for_each(|v| *v = if *v > 0.0 { f32::NAN } else { 0.0 });
            let chain: Vec<usize> = (0..1 + rng.below(3)).map(|_| rng.below(10)).collect();
            let scale = [1.0, 1e20, 3e-30][rng.below(3)];
            let max_norm = [1.0, 1e-3, 1e30][rng.below(3)];
            let mean = rng.below(2) == 0;
            let what = format!("x ({r}, {c}) chain {chain:?} scale {scale:e} max_norm {max_norm:e} mean {mean}");
            case(what, move |ctx| {
                let tape = Tape::new(ctx);
                let xv = tape.var(&tensor(ctx, &[r, c], &x)?)?;
                let wv = tape.var(&tensor(ctx, &[c, c2], &w)?)?;
                let ov = tape.var(&tensor(ctx, &[r, c], &other)?)?;
                let cond = tensor(ctx, &[r, c], &cond)?;
                let mut y = xv.clone();
                for &op in &chain {
                    y = match op {
                        0 => y.tanh()?,
                        1 => y.gelu()?,
                        2 => y.mul(&y)?,
                        3 => y.sigmoid()?,
                        4 if y.shape() == [r, c] => y.matmul(&wv)?,
                        5 => y.softmax_last(None)?,
                        6 if y.shape() == [r, c] => y.where_(&cond, &ov)?,
                        7 if y.shape() == [r, c] => y.add(&ov)?.sub(&xv)?,
                        8 => y.mean_last()?,
                        _ => y.sum_last()?,
                    };
                }
                let loss = if mean { y.mean_all()? } else { y.sum_all()? }.scale(scale)?;
                let mut grads = loss.backward()?;
                let vars = [xv.clone(), wv.clone(), ov.clone()];
                let mut out = vec![values(&loss)?];
                for v in &vars {
                    out.push(grads.get(v).map_or(Ok(vec![]), |g| g.to_vec())?);
                }
                // Clipped over the variables the loss reached (the others have no gradient).
                let reached: Vec<Var> = vars.iter().filter(|v| grads.get(v).is_some()).cloned().collect();
                out.push(vec![clip_grad_norm(&reached, &mut grads, max_norm)?]);
                for v in &vars {
                    out.push(grads.get(v).map_or(Ok(vec![]), |g| g.to_vec())?);
                }
                Ok(out)
            })
        })
        .collect();
    campaign("tape", &cases, Gate::new(1e-4, 1e-3), none);
}

#[test]
fn campaign_surfaces_optimisers() {
    // Adam (L2 or decoupled decay), AdamW and Sgd (momentum, Nesterov, decay) over one to
    // three parameters, some settings out of range, some steps given a wrong gradient or one
    // parameter twice.
    let mut rng = Rng::new(0x41_02);
    let cases: Vec<Case> = (0..60)
        .map(|_| {
            let shapes: Vec<Vec<usize>> = (0..1 + rng.below(3))
                .map(|_| vec![dim(&mut rng), 1 + rng.below(9)])
                .collect();
            let init: Vec<Vec<f32>> = shapes
                .iter()
                .map(|s| rng.vec_range(s.iter().product(), -1.0, 1.0))
                .collect();
            let steps = 1 + rng.below(4);
            let grads: Vec<Vec<Vec<f32>>> = (0..steps)
                .map(|_| {
                    shapes
                        .iter()
                        .map(|s| rng.vec_range(s.iter().product(), -1.0, 1.0))
                        .collect()
                })
                .collect();
            let kind = rng.below(4);
            let odd = |rng: &mut Rng, good: f32| match rng.below(10) {
                0 => f32::NAN,
                1 => -1.0,
                2 => 1.5,
                _ => good,
            };
            let (lr, wd, momentum) = (odd(&mut rng, 0.01), odd(&mut rng, 0.1), odd(&mut rng, 0.9));
            let misuse = rng.below(8);
            let what = format!(
                "kind {kind} shapes {shapes:?} steps {steps} lr {lr} wd {wd} momentum {momentum} misuse {misuse}"
            );
            case(what, move |ctx| {
                let params: Vec<Tensor> = shapes
                    .iter()
                    .zip(&init)
                    .map(|(s, v)| tensor(ctx, s, v))
                    .collect::<Result<_>>()?;
                let refs: Vec<&Tensor> = params.iter().collect();
                let mut step: Step = match kind {
                    0 | 1 => {
                        let mut a = Adam::new(&refs, lr)?;
                        a.weight_decay = wd;
                        a.decoupled = kind == 1;
                        Box::new(move |p, g| a.step(p, g))
                    }
                    2 => {
                        let mut a = Adam::adamw(&refs, lr, wd)?;
                        Box::new(move |p, g| a.step(p, g))
                    }
                    _ => {
                        let mut s = Sgd::new(&refs, lr, momentum)?;
                        s.nesterov = misuse.is_multiple_of(2);
                        s.weight_decay = wd;
                        Box::new(move |p, g| s.step(p, g))
                    }
                };
                for g in &grads {
                    let mut gs: Vec<Tensor> = shapes
                        .iter()
                        .zip(g)
                        .map(|(s, v)| tensor(ctx, s, v))
                        .collect::<Result<_>>()?;
                    let mut ps = refs.clone();
                    match misuse {
                        0 => gs[0] = Tensor::zeros(ctx, &[shapes[0][0] + 1, shapes[0][1]])?,
                        1 if ps.len() > 1 => ps[1] = ps[0],
                        _ => {}
                    }
                    let gr: Vec<&Tensor> = gs.iter().collect();
                    step(&ps, &gr)?;
                }
                params.iter().map(|p| p.to_vec()).collect()
            })
        })
        .collect();
    campaign("optimisers", &cases, Gate::new(1e-5, 1e-4), none);
}

#[test]
fn campaign_surfaces_param_store() {
    // Parameters under odd names (the reserved `__metadata__`, empty, repeated, non-ASCII),
    // written to bytes and read back on the same context, sometimes from corrupted or cut
    // bytes. An intact round trip must give back every value bit for bit.
    let mut rng = Rng::new(0x41_03);
    let names = ["w", "b", "layer.0.weight", "__metadata__", "", "é", "w"];
    let cases: Vec<Case> = (0..60)
        .map(|_| {
            let picked: Vec<&'static str> = (0..1 + rng.below(4)).map(|_| names[rng.below(names.len())]).collect();
            let shapes: Vec<Vec<usize>> = picked.iter().map(|_| vec![dim(&mut rng), 1 + rng.below(4)]).collect();
            let data: Vec<Vec<f32>> = shapes
                .iter()
                .map(|s| rng.vec_range(s.iter().product(), -3.0, 3.0))
                .collect();
            let damage = match rng.below(4) {
                0 => Some((rng.below(1 << 16), rng.below(256) as u8, rng.below(2) == 0)),
                _ => None,
            };
            let what = format!("names {picked:?} shapes {shapes:?} damage {damage:?}");
            case(what, move |ctx| {
                let mut store = ParamStore::new();
                for ((name, s), v) in picked.iter().zip(&shapes).zip(&data) {
                    store.insert(*name, tensor(ctx, s, v)?)?;
                }
                let mut bytes = store.to_bytes()?;
                if let Some((at, byte, cut)) = damage {
                    let at = at % bytes.len().max(1);
                    match cut {
                        true => bytes.truncate(at),
                        false if !bytes.is_empty() => bytes[at] ^= byte.max(1),
                        false => {}
                    }
                }
                let back = ParamStore::from_bytes(ctx, &bytes, "campaign")?;
                // The values read back, then 1 where a name's values came back bit for bit.
                let (mut out, mut same) = (vec![], vec![]);
                for name in store.names() {
                    let want = store.get(name).map_or(Ok(vec![]), |t| t.to_vec())?;
                    let got = back.get(name).map_or(Ok(vec![]), |t| t.to_vec())?;
                    same.push(f32::from(u8::from(
                        want.iter().map(|x| x.to_bits()).eq(got.iter().map(|x| x.to_bits())),
                    )));
                    out.push(got);
                }
                same.push(f32::from(u8::from(damage.is_none())));
                out.push(same);
                Ok(out)
            })
        })
        .collect();
    // An intact checkpoint (the last flag) must give back every value bit for bit.
    let intact = |out: &[Vec<f32>]| {
        let flags = out.last()?;
        let lost = flags.last() == Some(&1.0) && flags.contains(&0.0);
        lost.then(|| format!("an intact round trip changed values: {flags:?}"))
    };
    campaign("param_store", &cases, Gate::new(0.0, 0.0), intact);
}

#[test]
fn campaign_surfaces_text_stream() {
    // Ids streamed through TextStream (mostly the 256 byte tokens, so invalid and unfinished
    // UTF-8 sequences abound; sometimes an id past the vocabulary) against
    // String::from_utf8_lossy of the ids' bytes. Host-side, so no adapter to compare.
    use wgsl_compute::models::gpt2::{TextStream, Tokenizer};
    let tok = Tokenizer::gpt2().expect("the GPT-2 tokenizer");
    let vocab = tok.vocab_size();
    let mut rng = Rng::new(0x41_04);
    let mut t = Tally::default();
    for _ in 0..400 {
        let ids: Vec<u32> = (0..rng.below(9))
            .map(|_| match rng.below(20) {
                0 => (vocab + rng.below(3)) as u32,
                1..=5 => rng.below(vocab) as u32,
                _ => rng.below(256) as u32,
            })
            .collect();
        let what = format!("ids {ids:?}");
        let r = catch_unwind(AssertUnwindSafe(|| -> Result<String> {
            let mut s = TextStream::new(tok);
            let mut out = String::new();
            for &id in &ids {
                out += &s.push(id)?;
            }
            Ok(out + &s.finish())
        }));
        if let Some(Ok(got)) = t.count("host", &what, r) {
            t.compared += 1;
            match tok.decode_bytes(&ids) {
                Ok(bytes) if String::from_utf8_lossy(&bytes) == got => {}
                Ok(bytes) => t
                    .wrong
                    .push(format!("{what}: {got:?}, lossy {:?}", String::from_utf8_lossy(&bytes))),
                Err(e) => t
                    .wrong
                    .push(format!("{what}: streamed {got:?}, decode_bytes refuses ({e})")),
            }
        }
    }
    t.report("text_stream", "String::from_utf8_lossy");
}

/// What a path names, for the check that the tuner replaced nothing but a regular file.
fn file_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "fifo";
        }
        if t.is_char_device() {
            return "character device";
        }
    }
    match (t.is_file(), t.is_dir()) {
        (true, _) => "file",
        (_, true) => "directory",
        _ => "other",
    }
}

#[test]
fn campaign_surfaces_tune_cache_paths() {
    // A fresh context per adapter in `cached` mode, pointed at a new cache path before each
    // matmul: missing, a directory, garbage, empty, a good file with a byte flipped, a path
    // under a file, /dev/null, a FIFO. Every matmul must match the CPU's, nothing may hang, and
    // no path that is not a regular file may be replaced.
    let dir = std::env::temp_dir().join(format!("wgsl-compute-campaign-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    let have_fifo = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let mut rng = Rng::new(0x41_05);
    let draws: Vec<(usize, usize, u8, [usize; 3])> = (0..24)
        .map(|_| {
            (
                rng.below(9),
                rng.below(4096),
                rng.below(256) as u8,
                [1 + rng.below(3) * 16, 16, 8 + rng.below(2) * 24],
            )
        })
        .collect();
    let inputs: Vec<Vec<f32>> = draws
        .iter()
        .map(|d| rng.vec_range(d.3[0] * d.3[1] + d.3[1] * d.3[2], -1.0, 1.0))
        .collect();
    let matmul = |ctx: &Context, s: [usize; 3], v: &[f32]| -> Result<Vec<f32>> {
        let a = tensor(ctx, &[s[0], s[1]], &v[..s[0] * s[1]])?;
        let b = tensor(ctx, &[s[1], s[2]], &v[s[0] * s[1]..])?;
        wgsl_compute::ops::matmul(&a, &b)?.to_vec()
    };
    let cpu = Context::cpu();
    let want: Vec<Vec<f32>> = draws
        .iter()
        .zip(&inputs)
        .map(|(d, v)| matmul(&cpu, d.3, v).unwrap())
        .collect();
    let mut t = Tally::default();
    let kind_of = |p: &std::path::Path| std::fs::metadata(p).ok().map(|m| file_kind(&m.file_type()));
    each_adapter(|shared| {
        let ctx = crate::common::fresh(shared);
        ctx.set_tune_mode(TuneMode::Cached);
        let tag = format!("{:?}", ctx.info().backend);
        let good = dir.join(format!("good-{tag}.json"));
        for (i, ((kind, at, byte, shape), v)) in draws.iter().zip(&inputs).enumerate() {
            let path = match kind {
                0 => dir.join(format!("missing-{tag}-{i}.json")),
                1 => dir.clone(),
                2 => {
                    let p = dir.join(format!("garbage-{tag}-{i}.json"));
                    std::fs::write(&p, [*byte; 64]).unwrap();
                    p
                }
                3 => {
                    let p = dir.join(format!("empty-{tag}-{i}.json"));
                    std::fs::write(&p, b"").unwrap();
                    p
                }
                4 => {
                    let mut text = std::fs::read(&good).unwrap_or_default();
                    let p = dir.join(format!("flipped-{tag}-{i}.json"));
                    if !text.is_empty() {
                        let n = text.len();
                        text[at % n] ^= byte.max(&1);
                    }
                    std::fs::write(&p, text).unwrap();
                    p
                }
                5 => dir.join("fifo").join("under-a-fifo.json"),
                6 => std::path::PathBuf::from("/dev/null"),
                7 if have_fifo => fifo.clone(),
                _ => good.clone(),
            };
            let before = kind_of(&path);
            ctx.set_tune_cache(Some(path.clone()));
            let what = format!("#{i} path {} shape {shape:?}", path.display());
            let r = catch_unwind(AssertUnwindSafe(|| matmul(&ctx, *shape, v)));
            if let Some(Ok(got)) = t.count(&tag, &what, r) {
                t.compared += 1;
                if let Some(why) = differ(&[got], &[want[i].clone()], Gate::new(1e-4, 1e-4)) {
                    t.wrong.push(format!("{tag}: {what} ({why})"));
                }
            }
            if before.is_some_and(|k| k != "file") && kind_of(&path) != before {
                t.wrong.push(format!(
                    "{tag}: {what}: the path was {before:?}, now {:?}",
                    kind_of(&path)
                ));
            }
        }
        ctx.set_tune_cache(None);
    });
    let _ = std::fs::remove_dir_all(&dir);
    t.report("tune_cache_paths", "the CPU context");
}

#[test]
fn campaign_surfaces_padded_scans() {
    // matrix_affine_scan forward and backward at k = 1, 2, 4 and v not a power of two (3, 5,
    // 6, 7, 9), with and without h0, under every strategy; A scaled so the state stays
    // bounded. The GPU route (padded to a power of two there) against the CPU route.
    let mut rng = Rng::new(0x41_06);
    let cases: Vec<Case> = (0..40)
        .map(|_| {
            let k = [1, 2, 4][rng.below(3)];
            let v = [3, 5, 6, 7, 9][rng.below(5)];
            let (b, t, n) = (1 + rng.below(2), 1 + rng.below(40), 1 + rng.below(2));
            let with_h0 = rng.below(2) == 0;
            let strategy = [
                Strategy::Auto,
                Strategy::Lanes,
                Strategy::Chunked {
                    chunk: Some(1 + rng.below(8)),
                },
            ][rng.below(3)];
            let a = rng.vec_range(b * t * n * k * k, -0.9 / k as f64, 0.9 / k as f64);
            let x = rng.vec_range(b * t * n * k * v, -1.0, 1.0);
            let h0 = rng.vec_range(b * n * k * v, -1.0, 1.0);
            let g = rng.vec_range(b * t * n * k * v, -1.0, 1.0);
            let what = format!("B {b} T {t} N {n} k {k} v {v} h0 {with_h0} {strategy:?}");
            case(what, move |ctx| {
                let route = if ctx.is_gpu() { Route::Gpu } else { Route::Cpu };
                let opts = ScanOptions::route(route).with_strategy(strategy);
                let at = tensor(ctx, &[b, t, n, k, k], &a)?;
                let xt = tensor(ctx, &[b, t, n, k, v], &x)?;
                let gt = tensor(ctx, &[b, t, n, k, v], &g)?;
                let h0t = with_h0.then(|| tensor(ctx, &[b, n, k, v], &h0)).transpose()?;
                let h = scan::matrix_affine_scan_with(&at, &xt, h0t.as_ref(), &opts)?;
                let d = scan::matrix_affine_scan_backward_with(&at, h0t.as_ref(), &h, &gt, &opts)?;
                [h, d.da, d.db, d.dh0].iter().map(|t| t.to_vec()).collect()
            })
        })
        .collect();
    campaign("padded_scans", &cases, Gate::new(1e-4, 1e-4), none);
}

#[test]
fn campaign_surfaces_from_wgpu() {
    // An application's own device on every adapter (`Context::from_wgpu`): x + h element
    // scans and linear_scan forward under a random strategy, at lengths up to past the
    // software adapters' loop limit, against the CPU context.
    let mut rng = Rng::new(0x41_07);
    let draws: Vec<(usize, usize, usize, Strategy)> = (0..16)
        .map(|_| {
            let t = match rng.below(4) {
                0 => 60_000 + rng.below(20_000),
                _ => 1 + rng.below(3000),
            };
            let strategy = [
                Strategy::Auto,
                Strategy::Lanes,
                Strategy::Chunked { chunk: None },
                Strategy::Chunked {
                    chunk: Some(1 + rng.below(64)),
                },
            ][rng.below(4)];
            (rng.below(2), t, 1 + rng.below(3), strategy)
        })
        .collect();
    let data: Vec<[Vec<f32>; 2]> = draws
        .iter()
        .map(|&(_, t, w, _)| {
            // Multiples of 1/8 in [-1, 1] for the sums (exact in f32), decays in [0.3, 0.95).
            let x = (0..t * w).map(|_| (rng.below(17) as f32 - 8.0) / 8.0).collect();
            [x, rng.vec_range(t * w, 0.3, 0.95)]
        })
        .collect();
    let run = |ctx: &Context, i: usize| -> Result<Vec<Vec<f32>>> {
        let (op, t, w, strategy) = draws[i];
        let [x, a] = &data[i];
        if op == 0 {
            let bind = Bindings::new()
                .tensor(
                    "x",
                    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[t, w]), x.clone()).unwrap(),
                )
                .tensor("initial", ndarray::ArrayD::zeros(ndarray::IxDyn(&[w])));
            let scan =
                ElementScan::from_sexpr("(element-scan (lambda (h x) (+ x h)) initial (list x) :axis 0)", &bind)?;
            Ok(vec![scan.run(ctx)?.to_vec()?])
        } else {
            let route = if ctx.is_gpu() { Route::Gpu } else { Route::Cpu };
            let opts = ScanOptions::route(route).with_strategy(strategy);
            let (at, xt) = (tensor(ctx, &[1, t, w], a)?, tensor(ctx, &[1, t, w], x)?);
            Ok(vec![scan::linear_scan_with(&at, &xt, None, &opts)?.to_vec()?])
        }
    };
    let cpu = Context::cpu();
    let mut t = Tally::default();
    let want: Vec<_> = (0..draws.len())
        .map(|i| t.count("cpu", &format!("#{i}"), catch_unwind(AssertUnwindSafe(|| run(&cpu, i)))))
        .collect();
    each_adapter(|shared| {
        let ctx = crate::from_wgpu::app_context(shared);
        let name = format!("{} ({:?}) via from_wgpu", ctx.info().name, ctx.info().backend);
        for (i, want) in want.iter().enumerate() {
            let what = format!("#{i} {:?}", draws[i]);
            let r = catch_unwind(AssertUnwindSafe(|| run(&ctx, i)));
            if let (Some(Ok(got)), Some(Ok(want))) = (t.count(&name, &what, r), want) {
                t.compared += 1;
                if let Some(why) = differ(&got, want, Gate::new(1e-4, 1e-4)) {
                    t.wrong.push(format!("{name}: {what} ({why})"));
                }
            }
        }
    });
    t.report("from_wgpu", "the CPU context");
}
