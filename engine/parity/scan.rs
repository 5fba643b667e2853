//! Parity cases of the four scans, forward and backward, across the envelope: every (k, v)
//! in {1, 2, 4, 8, 16}^2, T in {1, 2, 3, 7, 64, 65, 257, 1000, 1024, 4099}, batch 1 and more,
//! both strategies. Inputs are drawn so values stay O(1): transitions contract (spectral norm
//! below about 0.7 for the matrices, |a| < 0.9 for the channels, minGRU-style log coefficients
//! -softplus(x)), so a long T neither explodes nor vanishes into the gate.
//!
//! Half rows ([`half_cases`]): the channel scans with F16 and BF16 inputs and outputs. Their
//! inputs are the same draws rounded to the dtype on the host, the reference runs in f64 on
//! those widened values, and a backward row feeds both sides the reference forward output
//! rounded to the dtype as h (the value a caller would pass), so the two compute from the
//! same inputs and the gate ([`gates::half_scan`]) is the f32 gate plus one output rounding.

use super::Row;
use crate::check::{compare, gates, Rng};
use crate::context::Context;
use crate::error::Result;
use crate::reference::scan::{self as reference, AffineShape};
use crate::scan::{self, Route, ScanOptions, Strategy};
use crate::shape::DType;
use crate::tensor::Tensor;

/// Which scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanOp {
    /// `linear_scan`.
    Linear,
    /// `parallel_scan_log`.
    Log,
    /// `matrix_scan`.
    Matrix,
    /// `matrix_affine_scan`.
    Affine,
}

impl ScanOp {
    /// The op's name, e.g. `linear_scan`.
    pub fn name(self) -> &'static str {
        match self {
            ScanOp::Linear => "linear_scan",
            ScanOp::Log => "parallel_scan_log",
            ScanOp::Matrix => "matrix_scan",
            ScanOp::Affine => "matrix_affine_scan",
        }
    }
}

/// One scan case: `n` is D for the channel scans, N for the matrix scans.
#[derive(Clone, Debug, PartialEq)]
pub struct ScanCase {
    /// Which scan.
    pub op: ScanOp,
    /// Check the gradients instead of the output.
    pub backward: bool,
    /// Batch B.
    pub b: usize,
    /// Time steps T.
    pub t: usize,
    /// Channels D (channel scans) or state blocks N (matrix scans).
    pub n: usize,
    /// Block rows k (`matrix_affine_scan`).
    pub k: usize,
    /// Block columns v (`matrix_affine_scan`).
    pub v: usize,
    /// Pass an initial state (the log scan always has one: log_values[:, 0]).
    pub h0: bool,
    /// How the kernel walks T.
    pub strategy: Strategy,
    /// Seed of the inputs.
    pub seed: u64,
    /// The dtype of every input and output (F16 and BF16: the channel scans).
    pub dtype: DType,
}

impl ScanCase {
    /// The case's dimensions as the parity table prints them.
    pub fn shape(&self) -> String {
        let dims = match self.op {
            ScanOp::Linear | ScanOp::Log => format!("B={} T={} D={}", self.b, self.t, self.n),
            ScanOp::Matrix => format!("B={} T={} N={}", self.b, self.t, self.n),
            ScanOp::Affine => format!("B={} T={} N={} k={} v={}", self.b, self.t, self.n, self.k, self.v),
        };
        match self.dtype {
            DType::F32 => dims,
            d => format!("{dims} {d}"),
        }
    }

    fn affine_shape(&self) -> AffineShape {
        AffineShape {
            b: self.b,
            t: self.t,
            n: self.n,
            k: self.k,
            v: self.v,
        }
    }
}

/// Pushes `case` forward and backward onto `out`, each with the next seed.
fn both_directions(out: &mut Vec<ScanCase>, seed: &mut u64, case: ScanCase) {
    for backward in [false, true] {
        *seed += 1;
        out.push(ScanCase {
            backward,
            seed: *seed,
            ..case.clone()
        });
    }
}

/// T values of the envelope.
pub const T_VALUES: [usize; 10] = [1, 2, 3, 7, 64, 65, 257, 1000, 1024, 4099];

/// A chunk length that gives several chunks even at small T (a ragged last one when T is odd).
pub fn test_chunk(t: usize) -> usize {
    if t >= 64 {
        scan::strategy::auto_chunk(t)
    } else {
        t.div_ceil(3).max(1)
    }
}

/// The two strategies a case list covers, for T.
pub fn strategies(t: usize) -> [Strategy; 2] {
    [
        Strategy::Lanes,
        Strategy::Chunked {
            chunk: Some(test_chunk(t)),
        },
    ]
}

/// The scan cases: `full` covers the whole envelope (1334 f32 rows and the [`half_cases`]);
/// otherwise a quick subset that still covers every op, every (k, v), odd T, both strategies
/// and both directions, and a few half rows.
pub fn scan_cases(full: bool) -> Vec<ScanCase> {
    let mut out = vec![];
    let mut seed = 1000;
    let mut push = |op, b, t, n, k, v, h0, strategy, out: &mut Vec<ScanCase>| {
        let case = ScanCase {
            op,
            backward: false,
            b,
            t,
            n,
            k,
            v,
            h0,
            strategy,
            seed: 0,
            dtype: DType::F32,
        };
        both_directions(out, &mut seed, case);
    };
    let channel_ts: &[usize] = if full { &T_VALUES } else { &[1, 7, 65] };
    for op in [ScanOp::Linear, ScanOp::Log, ScanOp::Matrix] {
        let (k, v) = if op == ScanOp::Matrix { (2, 1) } else { (1, 1) };
        let n = if op == ScanOp::Matrix { 5 } else { 65 };
        for (i, &t) in channel_ts.iter().enumerate() {
            let batches: &[usize] = if full { &[1, 3] } else { &[1 + i % 2 * 2] };
            for &b in batches {
                for s in strategies(t) {
                    push(op, b, t, n, k, v, (t + b) % 2 == 1, s, &mut out);
                }
            }
        }
    }
    // The channel kernels' own boundaries: one channel per invocation (D = 3..68 here) and
    // four when D divides into fours and B x D reaches `VEC4_WALKS` (the rows at that width);
    // T = 1, one unroll block of 8 steps, two (the software pipeline's first full trip), and
    // one step past each (9, 17), and chunks of 9 steps, so a chunk holds a block plus a tail
    // and T = 100 walks 12 chunk carries (three groups of four).
    let channel_ns: &[usize] = if full { &[3, 4, 5, 7, 8, 68] } else { &[5, 8] };
    let block_ts: &[usize] = if full { &[1, 8, 9, 16, 17, 100] } else { &[17] };
    let mut i = 0;
    for op in [ScanOp::Linear, ScanOp::Log] {
        for &n in channel_ns {
            for &t in block_ts {
                for s in [Strategy::Lanes, Strategy::Chunked { chunk: Some(9) }] {
                    i += 1;
                    push(op, 1 + i / 2 % 2, t, n, 1, 1, i % 4 < 2, s, &mut out);
                }
            }
        }
        if full {
            let wide = crate::scan::launch::VEC4_WALKS;
            for s in [Strategy::Lanes, Strategy::Chunked { chunk: Some(9) }] {
                push(op, 1, 17, wide, 1, 1, true, s, &mut out);
            }
        }
    }
    // The look-back passes (linear_scan, matrix_affine_scan at k = v = 1, parallel_scan_log;
    // the CPU context runs Auto's plan): T = 1, one step short of a chunk of 32, one chunk,
    // one step past, ragged chunks (100), look-backs 32 and 129 chunks deep; one, two and four
    // channels an invocation (3, 6; 68 and 300), lanes that fill and overrun workgroups of 64
    // (2 x 300 / 4 = 150).
    let lookback_ts: &[usize] = if full {
        &[1, 31, 32, 33, 100, 1000, 4099]
    } else {
        &[33, 100]
    };
    for (i, &t) in lookback_ts.iter().enumerate() {
        let ns: &[usize] = if full { &[3, 6, 68, 300] } else { &[5, 8] };
        for op in [ScanOp::Linear, ScanOp::Log] {
            for &n in ns {
                let b = if n == 300 { 2 } else { 1 + i % 2 };
                push(op, b, t, n, 1, 1, i % 2 == 0, Strategy::LookBack, &mut out);
            }
        }
        push(ScanOp::Affine, 1, t, 7, 1, 1, i % 2 == 1, Strategy::LookBack, &mut out);
    }
    let sizes = crate::scan::envelope::BLOCK_SIZES;
    let mut pair = 0;
    for k in sizes {
        for v in sizes {
            if full {
                let extra = [2, 3, 65][pair % 3];
                for t in [1, 7, 64, 257, extra] {
                    let b = if t % 2 == 1 { 2 } else { 1 };
                    for s in strategies(t) {
                        push(ScanOp::Affine, b, t, 3, k, v, t != 64, s, &mut out);
                    }
                }
            } else {
                let t = [3, 7, 65][pair % 3];
                let s = strategies(t)[pair % 2];
                push(ScanOp::Affine, 1 + pair % 2, t, 2, k, v, pair % 3 != 1, s, &mut out);
            }
            pair += 1;
        }
    }
    if full {
        // Long T with few lanes: the case the chunked strategy exists for.
        for (k, v) in [(1, 1), (2, 1), (1, 16), (4, 4), (8, 8), (16, 1), (16, 16)] {
            for t in [1000, 1024, 4099] {
                for s in strategies(t) {
                    push(ScanOp::Affine, 1, t, 1, k, v, true, s, &mut out);
                }
            }
        }
    }
    if full {
        out.extend(specialised_cases(&mut seed));
        out.extend(half_cases(true));
    } else {
        // A few half rows (the page runs this subset on SwiftShader): each op, both dtypes,
        // odd and even D, every strategy (the look-back at four and two channels an
        // invocation, across two chunks).
        out.extend(half_cases(false).into_iter().filter(|c| {
            let chunked = c.strategy != Strategy::Lanes;
            if c.strategy == Strategy::LookBack {
                return matches!(
                    (c.op, c.dtype, c.n),
                    (ScanOp::Linear, DType::BF16, 12) | (ScanOp::Log, DType::F16, 6)
                );
            }
            match (c.op, c.dtype) {
                (ScanOp::Linear, DType::F16) => c.n == 5 && c.t == 10 && !chunked,
                (ScanOp::Log, DType::BF16) => c.n == 6 && c.t == 17 && chunked,
                (ScanOp::Matrix, DType::F16) => c.t == 1,
                (ScanOp::Affine, DType::BF16) => c.k == 4,
                _ => false,
            }
        }));
    }
    out
}

/// Half-precision rows of the four scans, both dtypes, both strategies, both directions. The
/// channel scans at their kernels' word boundaries: odd D (one channel per invocation, f32
/// outputs narrowed after), even D (two channels: one packed word per step), D = `VEC4_WALKS`
/// (four); T = 1, one step past a chunk of 9 (10), past the unroll blocks (17), and 4099 in
/// lane walks (split into segments on the software adapters, resumed from f32 state). The
/// matrix scans on each of their kernels. `full` adds the large and long rows; the quick
/// subset is what the test suite runs on every adapter.
pub fn half_cases(full: bool) -> Vec<ScanCase> {
    let mut out = vec![];
    let mut seed = 9000;
    let mut push = |op, b, t, n, (k, v), h0, strategy, dtype| {
        let case = ScanCase {
            op,
            backward: false,
            b,
            t,
            n,
            k,
            v,
            h0,
            strategy,
            seed: 0,
            dtype,
        };
        both_directions(&mut out, &mut seed, case);
    };
    let both = [Strategy::Lanes, Strategy::Chunked { chunk: Some(9) }];
    for dtype in [DType::F16, DType::BF16] {
        for op in [ScanOp::Linear, ScanOp::Log] {
            // The look-back reads and writes halves at each width (odd N: one channel an
            // invocation, f32 outputs narrowed after; even: two; N % 4 == 0: four), over one
            // chunk and across chunks of 32 (33, 100).
            let ts: &[usize] = if full { &[1, 33, 100] } else { &[33] };
            for (i, n) in [5, 6, 12].into_iter().enumerate() {
                for &t in ts {
                    push(op, 1 + i % 2, t, n, (1, 1), (t + i) % 2 == 0, Strategy::LookBack, dtype);
                }
            }
            for (i, n) in [1, 5, 6, 12].into_iter().enumerate() {
                for t in [1, 10, 17] {
                    for s in both {
                        push(op, 1 + i % 2, t, n, (1, 1), (t + i) % 2 == 1, s, dtype);
                    }
                }
            }
            if full {
                push(op, 1, 4099, 3, (1, 1), true, Strategy::Lanes, dtype);
                push(op, 2, 4099, 2, (1, 1), false, Strategy::Lanes, dtype);
                let wide = crate::scan::launch::VEC4_WALKS;
                for s in both {
                    push(op, 1, 10, wide, (1, 1), true, s, dtype);
                }
            }
        }
        // The matrix kernels (matrix2, generic, k = 8) read halves and narrow f32 outputs: odd N
        // (odd element counts at v = 1), T = 1 and past a chunk.
        for (op, kv) in [
            (ScanOp::Matrix, (2, 1)),
            (ScanOp::Affine, (4, 1)),
            (ScanOp::Affine, (8, 4)),
        ] {
            let ts: &[usize] = if full { &[1, 10, 17] } else { &[1, 10] };
            for &t in ts {
                for s in both {
                    push(op, 2, t, 3, kv, t != 10, s, dtype);
                }
            }
        }
    }
    out
}

/// `x` rounded to `dtype` and widened back (exact): the values a kernel reads.
fn rounded(dtype: DType, x: &[f32]) -> Vec<f32> {
    match dtype {
        DType::F32 => x.to_vec(),
        d => x
            .iter()
            .map(|&v| crate::tensor::widen(d, crate::tensor::narrow(d, v)))
            .collect(),
    }
}

/// Cases at the boundaries of the specialised kernels (`scan::affine`'s `kernels`):
/// `matrix_scan` (k = 2, v = 1) at T around its 16-step unroll, and k = 8 with every v at T
/// around its 4-step x pipeline and its staged blocks (max(v, 4) steps; 16 or 32 in the chunk
/// reduce), with more lanes than a workgroup holds and odd N, h0 on odd T, both strategies,
/// forward and backward. Seeds continue from `seed`.
pub fn specialised_cases(seed: &mut u64) -> Vec<ScanCase> {
    let mut out = vec![];
    let mut push = |op, b, t, n, k, v, out: &mut Vec<ScanCase>| {
        for strategy in strategies(t) {
            let case = ScanCase {
                op,
                backward: false,
                b,
                t,
                n,
                k,
                v,
                h0: t % 2 == 1,
                strategy,
                seed: 0,
                dtype: DType::F32,
            };
            both_directions(out, seed, case);
        }
    };
    for t in [9, 16, 17, 33] {
        push(ScanOp::Matrix, 2, t, 7, 2, 1, &mut out);
    }
    for v in crate::scan::envelope::BLOCK_SIZES {
        for t in [4, 5, 9, 17, 33] {
            push(ScanOp::Affine, 2, t, 5, 8, v, &mut out);
        }
    }
    out
}

/// The inputs of a case, seeded: (transitions or log_coeffs, injections or log_values, h0).
pub fn inputs(c: &ScanCase) -> (Vec<f32>, Vec<f32>, Option<Vec<f32>>) {
    let mut rng = Rng::new(c.seed);
    let steps = c.b * c.t * c.n;
    match c.op {
        ScanOp::Log => {
            let lc = (0..steps)
                .map(|_| {
                    let x = rng.normal();
                    -(1.0 + x.exp()).ln() as f32
                })
                .collect();
            let lv = rng.vec_normal(c.b * (c.t + 1) * c.n, 0.5);
            (lc, lv, None)
        }
        ScanOp::Linear => {
            let a = rng.vec_range(steps, -0.9, 0.9);
            let b = rng.vec_range(steps, -1.0, 1.0);
            let h0 = c.h0.then(|| rng.vec_range(c.b * c.n, -1.0, 1.0));
            (a, b, h0)
        }
        ScanOp::Matrix | ScanOp::Affine => {
            let scale = 0.6 / (c.k as f64).sqrt();
            let a = rng.vec_range(steps * c.k * c.k, -scale, scale);
            let b = rng.vec_range(steps * c.k * c.v, -1.0, 1.0);
            let h0 = c.h0.then(|| rng.vec_range(c.b * c.n * c.k * c.v, -1.0, 1.0));
            (a, b, h0)
        }
    }
}

fn f64s(x: &[f32]) -> Vec<f64> {
    x.iter().map(|&v| v as f64).collect()
}

fn f32s(x: &[f64]) -> Vec<f32> {
    x.iter().map(|&v| v as f32).collect()
}

/// Runs one scan case on `ctx` (the GPU kernel, demanded; the reference on the CPU context).
pub async fn run_case(ctx: &Context, c: &ScanCase) -> Row {
    let f32_gate = match (c.op, c.backward) {
        (ScanOp::Log, false) => gates::SCAN_LOG,
        (ScanOp::Log, true) => gates::SCAN_LOG_BACKWARD,
        (_, false) => gates::SCAN_AFFINE,
        (_, true) => gates::SCAN_AFFINE_BACKWARD,
    };
    let gate = match c.dtype {
        DType::F32 => f32_gate,
        DType::F16 => gates::half_scan(f32_gate, gates::F16_ROUNDING),
        DType::BF16 => gates::half_scan(f32_gate, gates::BF16_ROUNDING),
    };
    let mut row = Row::pending(
        c.op.name().to_string(),
        super::direction(c.backward),
        c.shape(),
        c.strategy.to_string(),
        gate,
    );
    match outputs(ctx, c).await {
        Ok(pairs) => {
            row.passed = true;
            row.max_abs_err = 0.0;
            for (got, want) in pairs {
                let cmp = compare(&got, &f32s(&want), gate);
                row.max_abs_err = row.max_abs_err.max(cmp.max_abs);
                row.passed &= cmp.ok;
            }
        }
        Err(e) => row.error = Some(e.to_string()),
    }
    row
}

/// Every output of the case as (got, reference) pairs.
async fn outputs(ctx: &Context, c: &ScanCase) -> Result<Vec<(Vec<f32>, Vec<f64>)>> {
    let route = if ctx.is_gpu() { Route::Gpu } else { Route::Cpu };
    let opts = ScanOptions {
        route: Some(route),
        strategy: c.strategy,
    };
    let dtype = c.dtype;
    let (x, y, h0) = inputs(c);
    let (x, y, h0) = (rounded(dtype, &x), rounded(dtype, &y), h0.map(|h| rounded(dtype, &h)));
    let (b, t, n, k, v) = (c.b, c.t, c.n, c.k, c.v);
    let g = rounded(dtype, &Rng::new(c.seed ^ 0x5eed).vec_normal(b * t * n * k * v, 1.0));
    let up = |shape: &[usize], data: &[f32]| Tensor::from_slice_as(ctx, shape, data, dtype);
    // A half backward row takes h = the reference forward rounded (see the module docs);
    // the reference then reads the same values.
    let h_input = |h: Tensor, want: &mut Vec<f64>, shape: &[usize]| -> Result<Tensor> {
        if dtype == DType::F32 {
            return Ok(h);
        }
        let r = rounded(dtype, &f32s(want));
        *want = f64s(&r);
        up(shape, &r)
    };
    if c.op == ScanOp::Log {
        let (lc, lv) = (up(&[b, t, n], &x)?, up(&[b, t + 1, n], &y)?);
        let mut want_h = reference::log_forward_f64(b, t, n, &f64s(&x), &f64s(&y))?;
        let h = scan::parallel_scan_log_with(&lc, &lv, &opts)?;
        if !c.backward {
            return Ok(vec![(h.to_vec_async().await?, want_h)]);
        }
        let h = h_input(h, &mut want_h, &[b, t, n])?;
        let gr = scan::parallel_scan_log_backward_with(&lc, &lv, &h, &up(&[b, t, n], &g)?, &opts)?;
        let (dlc, dlv) = reference::log_backward_f64(b, t, n, &f64s(&x), &f64s(&y), &want_h, &f64s(&g))?;
        return Ok(vec![
            (gr.d_log_coeffs.to_vec_async().await?, dlc),
            (gr.d_log_values.to_vec_async().await?, dlv),
        ]);
    }
    let s = c.affine_shape();
    let mut want_h = reference::affine_forward_f64(&s, &f64s(&x), &f64s(&y), h0.as_deref().map(f64s).as_deref())?;
    let (a_shape, b_shape, h0_shape): (Vec<usize>, Vec<usize>, Vec<usize>) = match c.op {
        ScanOp::Linear => (vec![b, t, n], vec![b, t, n], vec![b, n]),
        ScanOp::Matrix => (vec![b, t, n, 2, 2], vec![b, t, n, 2], vec![b, n, 2]),
        _ => (vec![b, t, n, k, k], vec![b, t, n, k, v], vec![b, n, k, v]),
    };
    let a = up(&a_shape, &x)?;
    let bt = up(&b_shape, &y)?;
    let h0t = h0.as_ref().map(|h| up(&h0_shape, h)).transpose()?;
    let h0r = h0t.as_ref();
    let h = match c.op {
        ScanOp::Linear => scan::linear_scan_with(&a, &bt, h0r, &opts)?,
        ScanOp::Matrix => scan::matrix_scan_with(&a, &bt, h0r, &opts)?,
        _ => scan::matrix_affine_scan_with(&a, &bt, h0r, &opts)?,
    };
    if !c.backward {
        return Ok(vec![(h.to_vec_async().await?, want_h)]);
    }
    let h = h_input(h, &mut want_h, &b_shape)?;
    let gt = up(&b_shape, &g)?;
    let gr = match c.op {
        ScanOp::Linear => scan::linear_scan_backward_with(&a, h0r, &h, &gt, &opts)?,
        ScanOp::Matrix => scan::matrix_scan_backward_with(&a, h0r, &h, &gt, &opts)?,
        _ => scan::matrix_affine_scan_backward_with(&a, h0r, &h, &gt, &opts)?,
    };
    let h0f = h0.as_deref().map(f64s);
    let (da, db, dh0) = reference::affine_backward_f64(&s, &f64s(&x), h0f.as_deref(), &want_h, &f64s(&g))?;
    Ok(vec![
        (gr.da.to_vec_async().await?, da),
        (gr.db.to_vec_async().await?, db),
        (gr.dh0.to_vec_async().await?, dh0),
    ])
}
