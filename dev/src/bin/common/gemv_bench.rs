//! The bench's projection suite (`bench --only gemv`): the matrix-vector products of a GPT-2
//! decode step, timed inside a replay of the compiled decode plan, each dispatch on its own
//! (timestamps around every dispatch: the profiler's trace), as GB/s of the weight bytes.
//!
//! | name | weight (K, N) | kernel |
//! | --- | --- | --- |
//! | qkv | (C, 3C) | ln_1 fused, q out, k and v into the cache |
//! | attn_proj | (C, C) | residual add |
//! | fc | (C, 4C) | ln_2 and GELU fused |
//! | fc_proj | (4C, C) | residual add |
//! | head | wte^T (C, V): wte (V, C) read along C | ln_f fused, the logits |
//!
//! Each figure is the median over the blocks and a few replays, in f32 and f16 weights. Two
//! ratios: to the run's copy ceiling (the large vec4 copy, bytes read + written), and to the
//! engine's copy of the same bytes (reading half, writing half) timed the same way, a
//! dispatch of that size on its own, which shows how much of the gap is the size of the work
//! rather than the kernel. Keys `gemv_<name>_<dtype>_us`, `_gbps`, `_vs_copy`,
//! `_vs_same_copy`.

use wgsl_compute::context::Clock;
use wgsl_compute::generate;
use wgsl_compute::models::gpt2;
use wgsl_compute::{ops, Context, DType, Result, Tensor};

/// Replays (or copies) timed per figure.
const REPEAT: usize = 9;

/// One timed product: its name, (K, N) and its median device seconds.
pub struct Projection {
    pub name: &'static str,
    pub dtype: DType,
    pub k: usize,
    pub n: usize,
    pub seconds: f64,
    /// The engine's copy of the same bytes, a dispatch on its own.
    pub copy_seconds: f64,
}

impl Projection {
    pub fn weight_bytes(&self) -> f64 {
        (self.k * self.n * self.dtype.size()) as f64
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One call's dispatches in order: kernel name, device seconds.
type Dispatches = Vec<(String, f64)>;

/// Device seconds of each dispatch of `f`, in order, per call, `REPEAT` calls (None without
/// GPU timestamps: the wall clock around each dispatch would time the waits).
fn dispatch_times(ctx: &Context, mut f: impl FnMut() -> Result<()>) -> Result<Option<Vec<Dispatches>>> {
    ctx.synchronize()?;
    let was = ctx.profiling();
    ctx.set_profiling(true);
    let mut runs = vec![];
    for _ in 0..REPEAT {
        ctx.reset_profile()?;
        f()?;
        let p = ctx.profile()?;
        if p.clock != Clock::Timestamps {
            ctx.set_profiling(was);
            return Ok(None);
        }
        runs.push(
            p.events
                .iter()
                .map(|e| (p.kernels[e.kernel].name.clone(), e.seconds))
                .collect(),
        );
    }
    ctx.set_profiling(was);
    Ok(Some(runs))
}

/// The projections of the decode plan of a random `config`-shaped model in `dtype`.
pub fn projections(
    ctx: &Context,
    config: &gpt2::Config,
    weights: &gpt2::Weights,
    dtype: DType,
) -> Result<Vec<Projection>> {
    let model = gpt2::Gpt2::with_dtype(ctx, weights, dtype)?;
    let mut g = gpt2::Generator::new(&model)?;
    g.generate(&[1, 2, 3], 2, generate::Sampling::Greedy, |_| {})?;
    let plan = g.decode_plan();
    // A second of replays first: a GPU that was idle runs its first milliseconds at low clocks
    // (the first run of this suite timed every dispatch about 3.6x slow).
    let start = std::time::Instant::now();
    while start.elapsed().as_secs_f64() < 1.0 {
        for _ in 0..50 {
            plan.replay(ctx)?;
        }
        ctx.synchronize()?;
    }
    let Some(runs) = dispatch_times(ctx, || plan.replay(ctx))? else {
        return Ok(vec![]);
    };
    let c = config.n_embd;
    let names = [
        ("qkv", c, 3 * c),
        ("attn_proj", c, c),
        ("fc", c, 4 * c),
        ("fc_proj", 4 * c, c),
    ];
    let mut times = vec![vec![]; names.len() + 1];
    for run in &runs {
        let mut i = 0;
        for (name, s) in run {
            if name.contains("ln_matvec") {
                times[i % names.len()].push(*s);
                i += 1;
            } else if name.starts_with("generate/head") {
                times[names.len()].push(*s);
            }
        }
    }
    let mut out: Vec<Projection> = names
        .iter()
        .zip(&times)
        .map(|(&(name, k, n), t)| Projection {
            name,
            dtype,
            k,
            n,
            seconds: median(t.clone()),
            copy_seconds: f64::NAN,
        })
        .collect();
    out.push(Projection {
        name: "head",
        dtype,
        k: c,
        n: config.vocab_size,
        seconds: median(times[names.len()].clone()),
        copy_seconds: f64::NAN,
    });
    for p in &mut out {
        // A copy that moves the weight's bytes: half read, half written.
        let x = Tensor::full(ctx, &[(p.weight_bytes() / 8.0) as usize], 1.0)?;
        let copies = dispatch_times(ctx, || ops::unary(wgsl_compute::Unary::Identity, &x).map(drop))?;
        p.copy_seconds = median(copies.unwrap_or_default().iter().flatten().map(|e| e.1).collect());
    }
    Ok(out)
}
