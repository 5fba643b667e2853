// prelude: scan/launch.wgsl
// The K = V = 1 affine scan (linear_scan; matrix_affine_scan at k = v = 1): the walks shared by
// scan/linear.wgsl (`alias F = vec4<f32>`: four adjacent channels per invocation, N % 4 == 0),
// scan/linear_pair.wgsl (`alias F = vec2<f32>`, N % 2 == 0) and scan/linear_scalar.wgsl
// (`alias F = f32`), which declare F, the dtype slots (engine/kernel/dtype.rs) of the bindings
// and the entry points. Every index below counts F values: a time step's row holds
// p.n = N / 4 (N / 2, N) of them. Inputs and outputs go through the slots' NAME_ld / NAME_st
// (F32, F16 or BF16 storage, f32 values): the state is f32 whatever the storage, and a half
// output is rounded once, when it is stored. An invocation owns whole words of every output
// (a pair or quad of halves), so no two invocations share a packed word; the scalar width
// keeps f32 outputs (scan/linear_scalar.wgsl).
//
// Forward: h_t = a_t h_{t-1} + b_t, h_{-1} = h0 (or zero).
// REVERSE = true: the adjoint over dL/dh = x, fused with the transitions' gradient:
//   G_t = x_t + a_{t+1} G_{t+1} (a_T = 0),  out = dB = G,  dA_t = G_t h_{t-1},  dh0 = a_0 G_0.
//
// Why the walk looks the way it does (bandwidth, not arithmetic, is the budget):
// - state and inputs are named F values, never arrays, so they stay in registers;
// - a block of U = 8 steps issues all its loads (a, x and, in reverse, h_{t-1}) at once, and
//   the walk is software pipelined: block n + 1's loads are issued before block n's 8
//   dependent updates, so 16-24 loads per invocation are in flight at every point of the
//   walk, not only between one block's updates and the next;
// - in reverse, step t's transition a_{t+1} is the a the previous step (t + 1) loaded: it is
//   carried in `f`, so each step reads a once.
//
// Entries (the launch: scan/launch.wgsl):
//   lanes         per lane walks [t_begin, t_end) of T; a segmented walk resumes from out.
//   chunk_reduce  per (chunk, lane): the chunk's transition product P and local state S from
//                 zero, into side.
//   carries       per lane walks the chunks in scan order, carry = P carry + S, storing each
//                 chunk's incoming carry in place of S; in reverse also writes dh0.
//   chunk_fixup   per (chunk, lane) reruns the chunk from its incoming carry, writing out.
// The chunked passes number invocations chunk-major (lane fastest) so a subgroup reads
// adjacent channels of one step: coalesced, like the lane walk.

override REVERSE: bool = false;

// Steps whose loads one block issues before their dependent updates.
const U: u32 = 8u;

struct Params {
    launch: Launch, // lanes = B * N / 4 (or B * N) (scan/launch.wgsl)
    n: u32,         // F values per time step: N / 4 (or N)
    has_h0: u32,    // 1 when h0 is bound, 0 for a zero initial state
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<a_t>;           // (B, T, N) transitions
@group(0) @binding(2) var<storage, read> x: array<x_t>;           // (B, T, N): b, or dL/dh when REVERSE
@group(0) @binding(3) var<storage, read> h0: array<h0_t>;         // (B, N), read when has_h0
@group(0) @binding(4) var<storage, read> h: array<h_t>;           // (B, T, N) forward output, read when REVERSE
@group(0) @binding(5) var<storage, read_write> out: array<out_t>; // (B, T, N): h, or G = dB when REVERSE
@group(0) @binding(6) var<storage, read_write> da: array<da_t>;   // (B, T, N) dA, written when REVERSE
@group(0) @binding(7) var<storage, read_write> side: array<F>;    // f32: chunked (chunks, 2, lanes) P and S; segmented lanes (lanes,) state
@group(0) @binding(8) var<storage, read_write> dh0: array<dh0_t>; // (B, N), written when REVERSE

// A walk in progress.
struct Walk {
    s: F,     // the state: h forward, the adjoint G in reverse
    prod: F,  // the product of the transitions applied so far (a chunk's transition)
    f: F,     // REVERSE: the next step's transition a_{t+1}, zero past the end
    init: F,  // REVERSE: h_{-1} (h0 or zero), for dA_0
}

// Index of (lane, t = 0); step t adds t * p.n.
fn row(lane: u32) -> u32 {
    return (lane / p.n) * p.launch.t_len * p.n + lane % p.n;
}

// The step after t in scan order.
fn next(t: u32) -> u32 {
    return select(t + 1u, t - 1u, REVERSE);
}

fn initial_h(lane: u32) -> F {
    if p.has_h0 == 1u {
        return h0_ld(lane);
    }
    return F(0.0);
}

// A walk of lane whose first step in scan order is in [start, end), from state s.
fn begin(lane: u32, base: u32, end: u32, s: F) -> Walk {
    var w = Walk(s, F(1.0), F(0.0), F(0.0));
    if REVERSE {
        if end < p.launch.t_len {
            w.f = a_ld(base + end * p.n);
        }
        w.init = initial_h(lane);
    }
    return w;
}

// h_{t-1} for dA_t (REVERSE and `write`; unused otherwise, so a chunk reduce does not read
// H): the forward output, or h0 at t = 0.
fn h_prev(base: u32, t: u32, init: F, write: bool) -> F {
    if !REVERSE || !write {
        return F(0.0);
    }
    let v = h_ld(base + (max(t, 1u) - 1u) * p.n);
    return select(v, init, t == 0u);
}

// One dependent update at index i from the loaded a_t, x_t and h_{t-1}.
fn update(w: ptr<function, Walk>, av: F, xt: F, hp: F, i: u32, write: bool) {
    var f = av;
    if REVERSE {
        f = (*w).f;
        (*w).f = av;
    }
    (*w).s = fma(f, (*w).s, xt);
    (*w).prod *= f;
    if write {
        out_st(i, (*w).s);
        if REVERSE {
            da_st(i, (*w).s * hp);
        }
    }
}

// The loads of one block: U steps' a_t, x_t and, in reverse, h_{t-1}, as named values.
struct Block {
    a0: F, a1: F, a2: F, a3: F, a4: F, a5: F, a6: F, a7: F,
    x0: F, x1: F, x2: F, x3: F, x4: F, x5: F, x6: F, x7: F,
    q0: F, q1: F, q2: F, q3: F, q4: F, q5: F, q6: F, q7: F,
}

// Issues the loads of the U steps from t0 in scan order; nothing waits on them here.
fn load(base: u32, t0: u32, init: F, write: bool) -> Block {
    let t1 = next(t0);
    let t2 = next(t1);
    let t3 = next(t2);
    let t4 = next(t3);
    let t5 = next(t4);
    let t6 = next(t5);
    let t7 = next(t6);
    let i0 = base + t0 * p.n;
    let i1 = base + t1 * p.n;
    let i2 = base + t2 * p.n;
    let i3 = base + t3 * p.n;
    let i4 = base + t4 * p.n;
    let i5 = base + t5 * p.n;
    let i6 = base + t6 * p.n;
    let i7 = base + t7 * p.n;
    return Block(
        a_ld(i0), a_ld(i1), a_ld(i2), a_ld(i3), a_ld(i4), a_ld(i5), a_ld(i6), a_ld(i7),
        x_ld(i0), x_ld(i1), x_ld(i2), x_ld(i3), x_ld(i4), x_ld(i5), x_ld(i6), x_ld(i7),
        h_prev(base, t0, init, write), h_prev(base, t1, init, write), h_prev(base, t2, init, write),
        h_prev(base, t3, init, write), h_prev(base, t4, init, write), h_prev(base, t5, init, write),
        h_prev(base, t6, init, write), h_prev(base, t7, init, write)
    );
}

// The U dependent updates of the block loaded from t0.
fn apply(w: ptr<function, Walk>, l: Block, base: u32, t0: u32, write: bool) {
    let t1 = next(t0);
    let t2 = next(t1);
    let t3 = next(t2);
    let t4 = next(t3);
    let t5 = next(t4);
    let t6 = next(t5);
    let t7 = next(t6);
    update(w, l.a0, l.x0, l.q0, base + t0 * p.n, write);
    update(w, l.a1, l.x1, l.q1, base + t1 * p.n, write);
    update(w, l.a2, l.x2, l.q2, base + t2 * p.n, write);
    update(w, l.a3, l.x3, l.q3, base + t3 * p.n, write);
    update(w, l.a4, l.x4, l.q4, base + t4 * p.n, write);
    update(w, l.a5, l.x5, l.q5, base + t5 * p.n, write);
    update(w, l.a6, l.x6, l.q6, base + t6 * p.n, write);
    update(w, l.a7, l.x7, l.q7, base + t7 * p.n, write);
}

// Walks [start, end) of T in scan order, writing out (and dA) when `write`. Software
// pipelined: block n + 1's loads are issued before block n's updates and stores, so loads
// are in flight all along the walk instead of only between one block's updates and the next.
fn walk(w: ptr<function, Walk>, base: u32, start: u32, end: u32, write: bool) {
    let steps = end - start;
    let init = (*w).init;
    var q = 0u;
    if steps >= U {
        var cur = load(base, time_at(start, end, 0u, REVERSE), init, write);
        for (; q + 2u * U <= steps; q += U) {
            let ahead = load(base, time_at(start, end, q + U, REVERSE), init, write);
            apply(w, cur, base, time_at(start, end, q, REVERSE), write);
            cur = ahead;
        }
        apply(w, cur, base, time_at(start, end, q, REVERSE), write);
        q += U;
    }
    for (; q < steps; q++) {
        let t = time_at(start, end, q, REVERSE);
        let i = base + t * p.n;
        update(w, a_ld(i), x_ld(i), h_prev(base, t, init, write), i, write);
    }
}

fn lanes(lane: u32) {
    if lane >= p.launch.lanes {
        return;
    }
    let base = row(lane);
    // Resume from the previous segment's last state (in side: out holds it rounded when the
    // output is a half) unless this segment starts the walk.
    var s = F(0.0);
    if launch_resumes(p.launch, REVERSE) {
        s = side[lane];
    } else if !REVERSE {
        s = initial_h(lane);
    }
    var w = begin(lane, base, p.launch.t_end, s);
    walk(&w, base, p.launch.t_begin, p.launch.t_end, true);
    if p.launch.t_end - p.launch.t_begin < p.launch.t_len {
        side[lane] = w.s;
    }
    if REVERSE && p.launch.t_begin == 0u {
        // The walk ended at t = 0: s = G_0 and f = a_0.
        dh0_st(lane, w.f * w.s);
    }
}

// side slot of chunk c's value k (0: P, 1: S, then the incoming carry) for lane.
fn slot(c: u32, k: u32, lane: u32) -> u32 {
    return (c * 2u + k) * p.launch.lanes + lane;
}

fn chunk_reduce(id: u32) {
    if id >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let lane = id % p.launch.lanes;
    let c = id / p.launch.lanes;
    let base = row(lane);
    let end = chunk_end(p.launch, c);
    var w = begin(lane, base, end, F(0.0));
    walk(&w, base, chunk_start(p.launch, c), end, false);
    side[slot(c, 0u, lane)] = w.prod;
    side[slot(c, 1u, lane)] = w.s;
}

// The chunk index of the q-th chunk in scan order.
fn chunk_at(q: u32) -> u32 {
    return select(q, p.launch.chunks - 1u - q, REVERSE);
}

fn carries(lane: u32) {
    if lane >= p.launch.lanes {
        return;
    }
    var carry = F(0.0);
    if !REVERSE {
        carry = initial_h(lane);
    }
    // Four chunks at a time: their P and S are loaded before the four dependent updates. The
    // incoming carry replaces S (only this invocation touches this lane's slots).
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
        carry = fma(p0, carry, s0);
        side[slot(c1, 1u, lane)] = carry;
        carry = fma(p1, carry, s1);
        side[slot(c2, 1u, lane)] = carry;
        carry = fma(p2, carry, s2);
        side[slot(c3, 1u, lane)] = carry;
        carry = fma(p3, carry, s3);
    }
    for (; q < p.launch.chunks; q++) {
        let c = chunk_at(q);
        let pc = side[slot(c, 0u, lane)];
        let sc = side[slot(c, 1u, lane)];
        side[slot(c, 1u, lane)] = carry;
        carry = fma(pc, carry, sc);
    }
    if REVERSE {
        dh0_st(lane, a_ld(row(lane)) * carry);
    }
}

fn chunk_fixup(id: u32) {
    if id >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let lane = id % p.launch.lanes;
    let c = id / p.launch.lanes;
    let base = row(lane);
    let end = chunk_end(p.launch, c);
    var w = begin(lane, base, end, side[slot(c, 1u, lane)]);
    walk(&w, base, chunk_start(p.launch, c), end, true);
}
