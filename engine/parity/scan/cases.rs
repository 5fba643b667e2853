//! The scan case lists: the envelope (quick subset or full), the half-precision rows and the
//! rows at the specialised kernels' boundaries, each case forward and backward with its own
//! seed.

use super::{both_directions, strategies, ScanCase, ScanOp, T_VALUES};
use crate::scan::Strategy;
use crate::shape::DType;

/// The scan cases: `full` covers the whole envelope (1334 f32 rows and the [`half_cases`]);
/// otherwise a quick subset that still covers every op, every (k, v), odd T, both strategies
/// and both directions, and a few half rows.
pub fn scan_cases(full: bool) -> Vec<ScanCase> {
    let mut out = vec![];
    let mut seed = 1000;
    let mut push = |op, b, t, n, k, v, h0, strategy, out: &mut Vec<ScanCase>| {
        let case = forward_case(op, (b, t, n), (k, v), h0, strategy, DType::F32);
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
    // one step past each (9, 17); the forward lane walk's 16-step blocks (31, 32, 33, 48);
    // chunks of 9 steps, so a chunk holds a block plus a tail and T = 100 walks 12 chunk
    // carries (three groups of four).
    let channel_ns: &[usize] = if full { &[3, 4, 5, 7, 8, 68] } else { &[5, 8] };
    let block_ts: &[usize] = if full {
        &[1, 8, 9, 16, 17, 31, 32, 33, 48, 100]
    } else {
        &[17, 33]
    };
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
        // Four channels an invocation (the forward lane walk's 16-step blocks: one block and a
        // tail at 17, the pipelined trip and a tail at 33, a partial last workgroup at 4 x 8193).
        let wide = crate::scan::channel::VEC4_WALKS;
        let wide_ts: &[(usize, usize)] = if full {
            &[(17, wide), (33, wide), (33, wide + 4)]
        } else {
            &[(33, wide + 4)]
        };
        for &(t, n) in wide_ts {
            for s in [Strategy::Lanes, Strategy::Chunked { chunk: Some(9) }] {
                push(op, 1, t, n, 1, 1, true, s, &mut out);
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
    // Value widths between the kernels' block sizes run zero-padded to the next (`scan::padded`).
    let padded: &[(usize, usize)] = if full {
        &[(2, 3), (1, 3), (1, 5), (4, 6), (8, 7), (16, 9)]
    } else {
        &[(2, 3), (4, 5)]
    };
    for (i, &(k, v)) in padded.iter().enumerate() {
        let t = [7, 65][i % 2];
        for s in strategies(t) {
            push(ScanOp::Affine, 1 + i % 2, t, 2, k, v, i % 2 == 0, s, &mut out);
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
        let case = forward_case(op, (b, t, n), (k, v), h0, strategy, dtype);
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
                let wide = crate::scan::channel::VEC4_WALKS;
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

/// Cases at the boundaries of the specialised kernels (`scan::affine`'s `kernels`):
/// `matrix_scan` (k = 2, v = 1) at T around its 16-step unroll, and k = 8 with every v at T
/// around its 4-step x pipeline and its staged blocks (max(v, 4) steps; 16 or 32 in the chunk
/// reduce), with more lanes than a workgroup holds and odd N, h0 on odd T, both strategies,
/// forward and backward. Seeds continue from `seed`.
pub fn specialised_cases(seed: &mut u64) -> Vec<ScanCase> {
    let mut out = vec![];
    let mut push = |op, b, t, n, k, v, out: &mut Vec<ScanCase>| {
        for strategy in strategies(t) {
            let case = forward_case(op, (b, t, n), (k, v), t % 2 == 1, strategy, DType::F32);
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

/// A forward case of (B, T, N) `dims` and (k, v) `block`; seed 0, as `both_directions` gives
/// each direction its own.
fn forward_case(
    op: ScanOp,
    (b, t, n): (usize, usize, usize),
    (k, v): (usize, usize),
    h0: bool,
    strategy: Strategy,
    dtype: DType,
) -> ScanCase {
    ScanCase {
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
    }
}
