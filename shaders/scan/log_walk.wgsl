// prelude: scan/launch.wgsl
// parallel_scan_log, the minGRU scan in log space: the walks shared by
// scan/parallel_scan_log.wgsl (`alias F = vec4<f32>`: four adjacent channels per invocation,
// D % 4 == 0), scan/parallel_scan_log_pair.wgsl (`alias F = vec2<f32>`, D % 2 == 0) and
// scan/parallel_scan_log_scalar.wgsl (`alias F = f32`), which declare F, the bindings' dtype
// slots (engine/kernel/dtype.rs) and the entry points. Every index counts F values: a time
// step's row holds p.d = D / 4 (D / 2, D). Reads and writes go through the slots' NAME_ld /
// NAME_st: F32, F16 or BF16 storage, f32 state, a half output rounded once when stored, and an
// invocation owns whole packed words of its outputs (the scalar width writes f32).
//
// Forward: with z_{-1} = lv_0 (the log initial state), for t = 0..T-1
//   z_t = logaddexp(lc_t + z_{t-1}, lv_{t+1}),  h_t = exp(z_t),
// i.e. h_t = exp(a*_t + logcumsumexp(lv - a*)_t) with the running cumulative sum a* rebased
// into the carried log state at every step, and each log-add max-shifted (online
// log-sum-exp). No sentinel is needed: a walk starts from lv_0 or from a chunk's first step.
// Rebasing matters: a raw running cumsum reaches |a*| ~ 10^3 at long T and its f32 rounding
// alone breaks the gate.
//
// REVERSE = true: the adjoint over dL/dh = g, in linear space (every factor is exp of a log
// coefficient, at most 1 for minGRU's negative log coefficients, so it cannot blow up):
//   G_t = g_t + exp(lc_{t+1}) G_{t+1},                  G_{T-1} = g_{T-1}
//   d lc_t = G_t exp(lc_t) h_{t-1}   (h_{-1} = exp(lv_0))
//   d lv_{t+1} = G_t exp(lv_{t+1}),  d lv_0 = exp(lc_0) G_0 exp(lv_0)
// Each exp argument is a log coefficient, a log value or their sum with log h: bounded by the
// forward's own values, so the gradient is finite whenever the forward is.
//
// The walk is shaped like scan/linear_walk.wgsl's (read its "why"): named F values, blocks of
// U = 8 steps whose loads are issued a block ahead of their dependent updates (software
// pipelined), and in reverse step t's factor
// exp(lc_{t+1}) carried from step t + 1, which computed it for its own d lc.
//
// Entries: lanes (a segmented walk keeps its state in side[lane] between segments), and the
// chunked passes chunk_reduce (per (chunk, lane): the chunk's transition, a log-sum forward
// and a product in reverse, and its local state from empty), carries (per lane: walks the
// chunks, storing each chunk's incoming carry) and chunk_fixup (per (chunk, lane): reruns the
// chunk from its carry, writing out). Chunked invocations are numbered lane fastest.

override REVERSE: bool = false;

// Steps whose loads one block issues before their dependent updates.
const U: u32 = 8u;

struct Params {
    launch: Launch, // lanes = B * D / 4 (or B * D) (scan/launch.wgsl)
    d: u32,         // F values per time step: D / 4 (or D)
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> lc: array<lc_t>;          // (B, T, D) log coefficients
@group(0) @binding(2) var<storage, read> lv: array<lv_t>;          // (B, T + 1, D) log values, lv_0 = log h0
@group(0) @binding(3) var<storage, read> g: array<g_t>;            // (B, T, D) dL/dh, read when REVERSE
@group(0) @binding(4) var<storage, read> h: array<h_t>;            // (B, T, D) forward output, read when REVERSE
@group(0) @binding(5) var<storage, read_write> out: array<out_t>;  // (B, T, D): h, or d lc when REVERSE
@group(0) @binding(6) var<storage, read_write> out2: array<out2_t>; // (B, T + 1, D): d lv when REVERSE
@group(0) @binding(7) var<storage, read_write> side: array<F>; // chunked: (chunks, 2, lanes); segmented lanes: (lanes,) state

// A walk in progress; `base` and `base_lv` index (lane, t = 0) of lc and lv.
struct Walk {
    s: F,     // the state: log h forward, the adjoint G in reverse
    prod: F,  // the transitions applied so far: sum of lc forward, product of exp(lc) in reverse
    f: F,     // REVERSE: the next step's factor exp(lc_{t+1}), zero past the end
    init: F,  // REVERSE: h_{-1} = exp(lv_0)
    base: u32,
    base_lv: u32,
}

// The step after t in scan order.
fn next(t: u32) -> u32 {
    return select(t + 1u, t - 1u, REVERSE);
}

// log(exp(u) + exp(w)), shifted by the larger so exp never overflows.
fn logaddexp(u: F, w: F) -> F {
    let m = max(u, w);
    return m + log(1.0 + exp(min(u, w) - m));
}

// Index of (lane, t = 0) in lv; step t adds t * p.d.
fn row_lv(lane: u32) -> u32 {
    return (lane / p.d) * (p.launch.t_len + 1u) * p.d + lane % p.d;
}

// A walk of lane whose first step in scan order is in [start, end), from state s.
fn begin(lane: u32, end: u32, s: F) -> Walk {
    let base = (lane / p.d) * p.launch.t_len * p.d + lane % p.d;
    var w = Walk(s, F(0.0), F(0.0), F(0.0), base, row_lv(lane));
    if REVERSE {
        w.prod = F(1.0);
        if end < p.launch.t_len {
            w.f = exp(lc_ld(w.base + end * p.d));
        }
        w.init = exp(lv_ld(w.base_lv));
    }
    return w;
}

// g_t (REVERSE; unused forward).
fn grad_at(w: ptr<function, Walk>, t: u32) -> F {
    if !REVERSE {
        return F(0.0);
    }
    return g_ld((*w).base + t * p.d);
}

// lv_{t+1}: the forward always reads it, the reverse only for d lv (`write`), so a chunk
// reduce does not.
fn value_at(w: ptr<function, Walk>, t: u32, write: bool) -> F {
    if REVERSE && !write {
        return F(0.0);
    }
    return lv_ld((*w).base_lv + (t + 1u) * p.d);
}

// h_{t-1} (REVERSE and `write`; unused otherwise): the forward output, or exp(lv_0) at t = 0.
fn h_prev(w: ptr<function, Walk>, t: u32, write: bool) -> F {
    if !REVERSE || !write {
        return F(0.0);
    }
    let v = h_ld((*w).base + (max(t, 1u) - 1u) * p.d);
    return select(v, (*w).init, t == 0u);
}

// One dependent update at step t from the loaded lc_t, lv_{t+1}, g_t and h_{t-1}.
fn update(w: ptr<function, Walk>, t: u32, lct: F, lvt: F, gt: F, hp: F, write: bool) {
    let i = (*w).base + t * p.d;
    if !REVERSE {
        (*w).s = logaddexp(lct + (*w).s, lvt);
        (*w).prod += lct;
        if write {
            out_st(i, exp((*w).s));
        }
        return;
    }
    let f = (*w).f;
    let c = exp(lct);
    (*w).f = c;
    (*w).s = fma(f, (*w).s, gt);
    (*w).prod *= f;
    if write {
        let s = (*w).s;
        out_st(i, s * c * hp);
        out2_st((*w).base_lv + (t + 1u) * p.d, s * exp(lvt));
        if t == 0u {
            out2_st((*w).base_lv, c * s * hp);
        }
    }
}

// The loads of one block: U steps' lc_t and lv_{t+1} and, in reverse, g_t and h_{t-1}, as
// named values.
struct Block {
    c0: F, c1: F, c2: F, c3: F, c4: F, c5: F, c6: F, c7: F,
    v0: F, v1: F, v2: F, v3: F, v4: F, v5: F, v6: F, v7: F,
    g0: F, g1: F, g2: F, g3: F, g4: F, g5: F, g6: F, g7: F,
    q0: F, q1: F, q2: F, q3: F, q4: F, q5: F, q6: F, q7: F,
}

// Issues the loads of the U steps from t0 in scan order; nothing waits on them here.
fn load(w: ptr<function, Walk>, t0: u32, write: bool) -> Block {
    let t1 = next(t0);
    let t2 = next(t1);
    let t3 = next(t2);
    let t4 = next(t3);
    let t5 = next(t4);
    let t6 = next(t5);
    let t7 = next(t6);
    let b = (*w).base;
    return Block(
        lc_ld(b + t0 * p.d), lc_ld(b + t1 * p.d), lc_ld(b + t2 * p.d), lc_ld(b + t3 * p.d),
        lc_ld(b + t4 * p.d), lc_ld(b + t5 * p.d), lc_ld(b + t6 * p.d), lc_ld(b + t7 * p.d),
        value_at(w, t0, write), value_at(w, t1, write), value_at(w, t2, write), value_at(w, t3, write),
        value_at(w, t4, write), value_at(w, t5, write), value_at(w, t6, write), value_at(w, t7, write),
        grad_at(w, t0), grad_at(w, t1), grad_at(w, t2), grad_at(w, t3),
        grad_at(w, t4), grad_at(w, t5), grad_at(w, t6), grad_at(w, t7),
        h_prev(w, t0, write), h_prev(w, t1, write), h_prev(w, t2, write), h_prev(w, t3, write),
        h_prev(w, t4, write), h_prev(w, t5, write), h_prev(w, t6, write), h_prev(w, t7, write)
    );
}

// The U dependent updates of the block loaded from t0.
fn apply(w: ptr<function, Walk>, l: Block, t0: u32, write: bool) {
    let t1 = next(t0);
    let t2 = next(t1);
    let t3 = next(t2);
    let t4 = next(t3);
    let t5 = next(t4);
    let t6 = next(t5);
    let t7 = next(t6);
    update(w, t0, l.c0, l.v0, l.g0, l.q0, write);
    update(w, t1, l.c1, l.v1, l.g1, l.q1, write);
    update(w, t2, l.c2, l.v2, l.g2, l.q2, write);
    update(w, t3, l.c3, l.v3, l.g3, l.q3, write);
    update(w, t4, l.c4, l.v4, l.g4, l.q4, write);
    update(w, t5, l.c5, l.v5, l.g5, l.q5, write);
    update(w, t6, l.c6, l.v6, l.g6, l.q6, write);
    update(w, t7, l.c7, l.v7, l.g7, l.q7, write);
}

// Walks [start, end) of T in scan order, writing the outputs when `write`; software
// pipelined like scan/linear_walk.wgsl's walk: block n + 1's loads are issued before block
// n's updates.
fn walk(w: ptr<function, Walk>, start: u32, end: u32, write: bool) {
    let steps = end - start;
    var q = 0u;
    if steps >= U {
        var cur = load(w, time_at(start, end, 0u, REVERSE), write);
        for (; q + 2u * U <= steps; q += U) {
            let ahead = load(w, time_at(start, end, q + U, REVERSE), write);
            apply(w, cur, time_at(start, end, q, REVERSE), write);
            cur = ahead;
        }
        apply(w, cur, time_at(start, end, q, REVERSE), write);
        q += U;
    }
    for (; q < steps; q++) {
        let t = time_at(start, end, q, REVERSE);
        let lct = lc_ld((*w).base + t * p.d);
        update(w, t, lct, value_at(w, t, write), grad_at(w, t), h_prev(w, t, write), write);
    }
}

fn lanes(lane: u32) {
    if lane >= p.launch.lanes {
        return;
    }
    var w = begin(lane, p.launch.t_end, F(0.0));
    if launch_resumes(p.launch, REVERSE) {
        w.s = side[lane];
    } else if !REVERSE {
        w.s = lv_ld(w.base_lv);
    }
    walk(&w, p.launch.t_begin, p.launch.t_end, true);
    if p.launch.t_end - p.launch.t_begin < p.launch.t_len {
        side[lane] = w.s;
    }
}

// side slot of chunk c's value k (0: transition, 1: local state, then the incoming carry).
fn slot(c: u32, k: u32, lane: u32) -> u32 {
    return (c * 2u + k) * p.launch.lanes + lane;
}

fn chunk_reduce(id: u32) {
    if id >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let lane = id % p.launch.lanes;
    let c = id / p.launch.lanes;
    let start = chunk_start(p.launch, c);
    let end = chunk_end(p.launch, c);
    var w = begin(lane, end, F(0.0));
    if REVERSE {
        // From the zero adjoint.
        walk(&w, start, end, false);
    } else {
        // From empty: the first step's state is its log value alone.
        w.s = lv_ld(w.base_lv + (start + 1u) * p.d);
        w.prod = lc_ld(w.base + start * p.d);
        walk(&w, start + 1u, end, false);
    }
    side[slot(c, 0u, lane)] = w.prod;
    side[slot(c, 1u, lane)] = w.s;
}

// The chunk index of the q-th chunk in scan order.
fn chunk_at(q: u32) -> u32 {
    return select(q, p.launch.chunks - 1u - q, REVERSE);
}

// The state after a chunk of transition pc and local state sc, from carry.
fn combine(carry: F, pc: F, sc: F) -> F {
    if REVERSE {
        return fma(pc, carry, sc);
    }
    return logaddexp(pc + carry, sc);
}

fn carries(lane: u32) {
    if lane >= p.launch.lanes {
        return;
    }
    var carry = F(0.0);
    if !REVERSE {
        carry = lv_ld(row_lv(lane));
    }
    // Four chunks at a time, loads first; the incoming carry replaces the local state (only
    // this invocation touches this lane's slots).
    var q = 0u;
    for (; q + 4u <= p.launch.chunks; q += 4u) {
        let c0 = chunk_at(q);
        let c1 = chunk_at(q + 1u);
        let c2 = chunk_at(q + 2u);
        let c3 = chunk_at(q + 3u);
        let p0 = side[slot(c0, 0u, lane)];
        let p1 = side[slot(c1, 0u, lane)];
        let p2 = side[slot(c2, 0u, lane)];
        let p3 = side[slot(c3, 0u, lane)];
        let s0 = side[slot(c0, 1u, lane)];
        let s1 = side[slot(c1, 1u, lane)];
        let s2 = side[slot(c2, 1u, lane)];
        let s3 = side[slot(c3, 1u, lane)];
        side[slot(c0, 1u, lane)] = carry;
        carry = combine(carry, p0, s0);
        side[slot(c1, 1u, lane)] = carry;
        carry = combine(carry, p1, s1);
        side[slot(c2, 1u, lane)] = carry;
        carry = combine(carry, p2, s2);
        side[slot(c3, 1u, lane)] = carry;
        carry = combine(carry, p3, s3);
    }
    for (; q < p.launch.chunks; q++) {
        let c = chunk_at(q);
        let pc = side[slot(c, 0u, lane)];
        let sc = side[slot(c, 1u, lane)];
        side[slot(c, 1u, lane)] = carry;
        carry = combine(carry, pc, sc);
    }
}

fn chunk_fixup(id: u32) {
    if id >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let lane = id % p.launch.lanes;
    let c = id / p.launch.lanes;
    let end = chunk_end(p.launch, c);
    var w = begin(lane, end, side[slot(c, 1u, lane)]);
    walk(&w, chunk_start(p.launch, c), end, true);
}
