// prelude: scan/launch.wgsl
// prelude: scan/lookback.wgsl
// parallel_scan_log in ONE pass over the data: scan/log_walk.wgsl's recurrences (read its
// header for the math) over chunks of L steps, a chunk an invocation, the chunk carries passed
// on by decoupled look-back (scan/lookback.wgsl: tickets, flag words, why). f32 storage, one
// channel per invocation (engine/scan/parallel_scan_log.rs; strategy LookBack).
//
// Forward, in log space: a chunk from empty has the local state S_q (its first step's state is
// that step's log value alone) and the log transition P_q = the sum of its lc; the state after
// step q from the carry z_in is logaddexp(P_q + z_in, S_q), and h = exp of it.
// REVERSE, in linear space like linear_lookback's adjoint: G_t = g_t + exp(lc_{t+1}) G_{t+1};
// then d lc_t = G_t exp(lc_t) h_{t-1}, d lv_{t+1} = G_t exp(lv_{t+1}) and
// d lv_0 = exp(lc_0) G_0 exp(lv_0), read again when the outputs are written.

struct Params {
    launch: Launch, // lanes = B * D; chunk = L, chunks = ceil(T / L)
    d: u32,         // D
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> lc: array<f32>;          // (B, T, D) log coefficients
@group(0) @binding(2) var<storage, read> lv: array<f32>;          // (B, T + 1, D) log values, lv_0 = log h0
@group(0) @binding(3) var<storage, read> g: array<f32>;           // (B, T, D) dL/dh, read when REVERSE
@group(0) @binding(4) var<storage, read> h: array<f32>;           // (B, T, D) forward output, read when REVERSE
@group(0) @binding(5) var<storage, read_write> out: array<f32>;   // (B, T, D): h, or d lc when REVERSE
@group(0) @binding(6) var<storage, read_write> out2: array<f32>;  // (B, T + 1, D): d lv when REVERSE
@group(0) @binding(7) var<storage, read_write> side: array<atomic<u32>>; // scan/lookback.wgsl's words

// log(exp(u) + exp(w)), shifted by the larger (scan/log_walk.wgsl's).
fn logaddexp(u: f32, w: f32) -> f32 {
    let m = max(u, w);
    return m + log(1.0 + exp(min(u, w) - m));
}

// Indices of (lane, t = 0) in lc (g, h, out) and in lv (out2).
struct Rows {
    base: u32,
    base_lv: u32,
}

fn rows(lane: u32) -> Rows {
    let b = lane / p.d;
    let c = lane % p.d;
    return Rows(b * p.launch.t_len * p.d + c, b * (p.launch.t_len + 1u) * p.d + c);
}

// Step q (in scan order) of the chunk [start, end) from `l`: the identity past the chunk.
fn step(r: Rows, start: u32, end: u32, q: u32, l: Local) -> Local {
    if q >= end - start {
        return l;
    }
    let t = time_at(start, end, q, REVERSE);
    if REVERSE {
        var f = 0.0;
        if t + 1u < p.launch.t_len {
            f = exp(lc[r.base + (t + 1u) * p.d]);
        }
        return Local(fma(f, l.s, g[r.base + t * p.d]), l.p * f);
    }
    let c = lc[r.base + t * p.d];
    let v = lv[r.base_lv + (t + 1u) * p.d];
    if q == 0u {
        // From empty: the first step's state is its log value alone.
        return Local(v, c);
    }
    return Local(logaddexp(c + l.s, v), l.p + c);
}

// The state after a chunk of transition pc and local state sc, entered with carry.
fn combine(carry: f32, pc: f32, sc: f32) -> f32 {
    if REVERSE {
        return fma(pc, carry, sc);
    }
    return logaddexp(pc + carry, sc);
}

// (P, S) of the chunks folded so far, then chunk j's (pj, sj) before them.
fn fold(acc: Local, pj: f32, sj: f32) -> Local {
    if REVERSE {
        return Local(fma(acc.p, sj, acc.s), acc.p * pj);
    }
    return Local(logaddexp(acc.p + sj, acc.s), acc.p + pj);
}

// Writes step q of the chunk (if inside it) from its local state and transition.
fn emit(lane: u32, r: Rows, start: u32, end: u32, q: u32, s: f32, pr: f32, carry: f32) {
    if q >= end - start {
        return;
    }
    let t = time_at(start, end, q, REVERSE);
    let v = combine(carry, pr, s);
    if !REVERSE {
        out[r.base + t * p.d] = exp(v);
        return;
    }
    let c = exp(lc[r.base + t * p.d]);
    let h_prev = select(h[r.base + (max(t, 1u) - 1u) * p.d], exp(lv[r.base_lv]), t == 0u);
    out[r.base + t * p.d] = v * c * h_prev;
    out2[r.base_lv + (t + 1u) * p.d] = v * exp(lv[r.base_lv + (t + 1u) * p.d]);
    if t == 0u {
        out2[r.base_lv] = c * v * h_prev;
    }
}

// The carry into the first chunk: lv_0 forward, the zero adjoint in reverse.
fn initial(r: Rows, lane: u32) -> f32 {
    if REVERSE {
        return 0.0;
    }
    return lv[r.base_lv];
}

// Nothing follows a chunk: d lv_0 is written with step t = 0.
fn finish(lane: u32, r: Rows, start: u32, inclusive: f32) {}
