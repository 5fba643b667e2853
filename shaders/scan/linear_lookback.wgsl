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

override REVERSE: bool = false;

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
fn row(lane: u32) -> u32 {
    return (lane / p.n) * p.launch.t_len * p.n + lane % p.n;
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
fn step(base: u32, start: u32, end: u32, q: u32, l: Local) -> Local {
    if q >= end - start {
        return l;
    }
    let t = time_at(start, end, q, REVERSE);
    let f = transition(base, t);
    return Local(fma(f, l.s, x[base + t * p.n]), l.p * f);
}

// Steps q .. q + 3 from *l, which is left at step q + 3's.
fn quad(base: u32, start: u32, end: u32, q: u32, l: ptr<function, Local>) -> Quad {
    let l0 = step(base, start, end, q, *l);
    let l1 = step(base, start, end, q + 1u, l0);
    let l2 = step(base, start, end, q + 2u, l1);
    let l3 = step(base, start, end, q + 3u, l2);
    *l = l3;
    return Quad(vec4(l0.s, l1.s, l2.s, l3.s), vec4(l0.p, l1.p, l2.p, l3.p));
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

// Writes step q of the chunk (if inside it) from its local state and product.
fn emit(lane: u32, base: u32, start: u32, end: u32, q: u32, s: f32, pr: f32, carry: f32) {
    if q >= end - start {
        return;
    }
    let t = time_at(start, end, q, REVERSE);
    let v = fma(pr, carry, s);
    out[base + t * p.n] = v;
    if REVERSE {
        da[base + t * p.n] = v * h_prev(lane, base, t);
    }
}

fn emit_quad(lane: u32, base: u32, start: u32, end: u32, q: u32, v: Quad, carry: f32) {
    emit(lane, base, start, end, q, v.s.x, v.p.x, carry);
    emit(lane, base, start, end, q + 1u, v.s.y, v.p.y, carry);
    emit(lane, base, start, end, q + 2u, v.s.z, v.p.z, carry);
    emit(lane, base, start, end, q + 3u, v.s.w, v.p.w, carry);
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
    let base = row(lane);
    // 1. the chunk from zero: its 2 L loads do not wait on the dependent chain.
    var l = Local(0.0, 1.0);
    let q0 = quad(base, start, end, 0u, &l);
    let q1 = quad(base, start, end, 4u, &l);
    let q2 = quad(base, start, end, 8u, &l);
    let q3 = quad(base, start, end, 12u, &l);
    let q4 = quad(base, start, end, 16u, &l);
    let q5 = quad(base, start, end, 20u, &l);
    let q6 = quad(base, start, end, 24u, &l);
    let q7 = quad(base, start, end, 28u, &l);
    // 2. the carry in: the initial state for the first chunk, else the look-back.
    var carry = 0.0;
    if q == 0u {
        if !REVERSE && p.has_h0 == 1u {
            carry = h0[lane];
        }
    } else {
        lookback_publish_aggregate(q, lane, l);
        carry = lookback_carry(q, lane);
    }
    // 3. the inclusive carry for the chunks after, then the outputs.
    let inclusive = combine(carry, l.p, l.s);
    lookback_publish_inclusive(q, lane, inclusive);
    emit_quad(lane, base, start, end, 0u, q0, carry);
    emit_quad(lane, base, start, end, 4u, q1, carry);
    emit_quad(lane, base, start, end, 8u, q2, carry);
    emit_quad(lane, base, start, end, 12u, q3, carry);
    emit_quad(lane, base, start, end, 16u, q4, carry);
    emit_quad(lane, base, start, end, 20u, q5, carry);
    emit_quad(lane, base, start, end, 24u, q6, carry);
    emit_quad(lane, base, start, end, 28u, q7, carry);
    if REVERSE && start == 0u {
        // The walk ended at t = 0: inclusive = G_0.
        dh0[lane] = a[base] * inclusive;
    }
}
