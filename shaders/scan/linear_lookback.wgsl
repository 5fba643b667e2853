// prelude: scan/launch.wgsl
// prelude: scan/lookback.wgsl
// The K = V = 1 affine scan (linear_scan; matrix_affine_scan at k = v = 1) in ONE pass over
// the data: chunks of L steps, a chunk an invocation, the chunk carries passed on by decoupled
// look-back (scan/lookback.wgsl: tickets, flag words, why). f32 storage, one channel per
// invocation (engine/scan/linear_gpu.rs; strategy LookBack).
//
// Forward: h_t = a_t h_{t-1} + b_t, h_{-1} = h0 (or zero).
// REVERSE = true: G_t = x_t + a_{t+1} G_{t+1} (a_T = 0), out = G, dA_t = G_t h_{t-1},
// dh0 = a_0 G_0 (scan/linear_walk.wgsl's adjoint, walked the same way).

struct Params {
    launch: Launch, // lanes = B * N; chunk = L, chunks = ceil(T / L)
    n: u32,         // N
    has_h0: u32,    // 1 when h0 is bound, 0 for a zero initial state
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;          // (B, T, N) transitions
@group(0) @binding(2) var<storage, read> x: array<f32>;          // (B, T, N): b, or dL/dh when REVERSE
@group(0) @binding(3) var<storage, read> h0: array<f32>;         // (B, N), read when has_h0
@group(0) @binding(4) var<storage, read> h: array<f32>;          // (B, T, N) forward output, read when REVERSE
@group(0) @binding(5) var<storage, read_write> out: array<f32>;  // (B, T, N): h, or G = dB when REVERSE
@group(0) @binding(6) var<storage, read_write> da: array<f32>;   // (B, T, N) dA, written when REVERSE
@group(0) @binding(7) var<storage, read_write> side: array<atomic<u32>>; // scan/lookback.wgsl's words
@group(0) @binding(8) var<storage, read_write> dh0: array<f32>;  // (B, N), written when REVERSE

// Index of (lane, t = 0); step t adds t * p.n.
struct Rows {
    base: u32,
}

fn rows(lane: u32) -> Rows {
    return Rows((lane / p.n) * p.launch.t_len * p.n + lane % p.n);
}

// The transition of time step t: a_t forward, a_{t+1} in reverse (zero past the end).
fn transition(base: u32, t: u32) -> f32 {
    if REVERSE {
        if t + 1u < p.launch.t_len {
            return a[base + (t + 1u) * p.n];
        }
        return 0.0;
    }
    return a[base + t * p.n];
}

// Step q (in scan order) of the chunk [start, end) from `l`: the identity past the chunk.
fn step(r: Rows, start: u32, end: u32, q: u32, l: Local) -> Local {
    if q >= end - start {
        return l;
    }
    let t = time_at(start, end, q, REVERSE);
    let f = transition(r.base, t);
    return Local(fma(f, l.s, x[r.base + t * p.n]), l.p * f);
}

// The state after a chunk of transition pc and local state sc, entered with carry.
fn combine(carry: f32, pc: f32, sc: f32) -> f32 {
    return fma(pc, carry, sc);
}

// (P, S) of the chunks folded so far, then chunk j's (pj, sj) before them.
fn fold(acc: Local, pj: f32, sj: f32) -> Local {
    return Local(fma(acc.p, sj, acc.s), acc.p * pj);
}

// h_{t-1} for dA_t: the forward output, or h0 (zero) at t = 0.
fn h_prev(lane: u32, base: u32, t: u32) -> f32 {
    if t > 0u {
        return h[base + (t - 1u) * p.n];
    }
    if p.has_h0 == 1u {
        return h0[lane];
    }
    return 0.0;
}

// The carry into the first chunk: h0 (or zero) forward, the zero adjoint in reverse.
fn initial(r: Rows, lane: u32) -> f32 {
    if !REVERSE && p.has_h0 == 1u {
        return h0[lane];
    }
    return 0.0;
}

// Writes step q of the chunk (if inside it) from its local state and product.
fn emit(lane: u32, r: Rows, start: u32, end: u32, q: u32, s: f32, pr: f32, carry: f32) {
    if q >= end - start {
        return;
    }
    let t = time_at(start, end, q, REVERSE);
    let v = combine(carry, pr, s);
    out[r.base + t * p.n] = v;
    if REVERSE {
        da[r.base + t * p.n] = v * h_prev(lane, r.base, t);
    }
}

// The reverse walk's chunk at t = 0 ends with G_0 = inclusive: dh0 = a_0 G_0.
fn finish(lane: u32, r: Rows, start: u32, inclusive: f32) {
    if REVERSE && start == 0u {
        dh0[lane] = a[r.base] * inclusive;
    }
}
