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

override REVERSE: bool = false;

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

// Steps q .. q + 3 from *l, which is left at step q + 3's.
fn quad(r: Rows, start: u32, end: u32, q: u32, l: ptr<function, Local>) -> Quad {
    let l0 = step(r, start, end, q, *l);
    let l1 = step(r, start, end, q + 1u, l0);
    let l2 = step(r, start, end, q + 2u, l1);
    let l3 = step(r, start, end, q + 3u, l2);
    *l = l3;
    return Quad(vec4(l0.s, l1.s, l2.s, l3.s), vec4(l0.p, l1.p, l2.p, l3.p));
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

fn emit_quad(lane: u32, r: Rows, start: u32, end: u32, q: u32, v: Quad, carry: f32) {
    emit(lane, r, start, end, q, v.s.x, v.p.x, carry);
    emit(lane, r, start, end, q + 1u, v.s.y, v.p.y, carry);
    emit(lane, r, start, end, q + 2u, v.s.z, v.p.z, carry);
    emit(lane, r, start, end, q + 3u, v.s.w, v.p.w, carry);
}

@compute @workgroup_size(WG)
fn scan_lookback_clear(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    lookback_clear(invocation(wid, nwg, lid));
}

@compute @workgroup_size(WG)
fn scan_lookback(@builtin(local_invocation_index) lid: u32) {
    let id = lookback_ticket(lid);
    let blocks = (p.launch.lanes + WG - 1u) / WG;
    let q = id / blocks; // the chunk in scan order
    let lane = (id % blocks) * WG + lid;
    if q >= p.launch.chunks || lane >= p.launch.lanes {
        return;
    }
    let c = select(q, p.launch.chunks - 1u - q, REVERSE);
    let start = chunk_start(p.launch, c);
    let end = chunk_end(p.launch, c);
    let r = rows(lane);
    // 1. the chunk from empty (forward) or the zero adjoint (reverse).
    var l = Local(0.0, 1.0);
    let q0 = quad(r, start, end, 0u, &l);
    let q1 = quad(r, start, end, 4u, &l);
    let q2 = quad(r, start, end, 8u, &l);
    let q3 = quad(r, start, end, 12u, &l);
    let q4 = quad(r, start, end, 16u, &l);
    let q5 = quad(r, start, end, 20u, &l);
    let q6 = quad(r, start, end, 24u, &l);
    let q7 = quad(r, start, end, 28u, &l);
    // 2. the carry in: the initial state (lv_0, or the zero adjoint) or the look-back.
    var carry = 0.0;
    if q == 0u {
        if !REVERSE {
            carry = lv[r.base_lv];
        }
    } else {
        lookback_publish_aggregate(q, lane, l);
        carry = lookback_carry(q, lane);
    }
    // 3. the inclusive carry for the chunks after, then the outputs.
    lookback_publish_inclusive(q, lane, combine(carry, l.p, l.s));
    emit_quad(lane, r, start, end, 0u, q0, carry);
    emit_quad(lane, r, start, end, 4u, q1, carry);
    emit_quad(lane, r, start, end, 8u, q2, carry);
    emit_quad(lane, r, start, end, 12u, q3, carry);
    emit_quad(lane, r, start, end, 16u, q4, carry);
    emit_quad(lane, r, start, end, 20u, q5, carry);
    emit_quad(lane, r, start, end, 24u, q6, carry);
    emit_quad(lane, r, start, end, 28u, q7, carry);
}
