// prelude: scan/launch.wgsl
// The K = V = 1 affine scan (linear_scan; matrix_affine_scan at k = v = 1) in ONE pass over
// the data: chunks of L steps per channel, the chunk carries passed on by decoupled look-back.
// f32 storage, one channel per invocation (engine/scan/linear_gpu.rs; strategy LookBack).
//
// Forward: h_t = a_t h_{t-1} + b_t, h_{-1} = h0 (or zero).
// REVERSE = true: G_t = x_t + a_{t+1} G_{t+1} (a_T = 0), out = G, dA_t = G_t h_{t-1},
// dh0 = a_0 G_0 (scan/linear_walk.wgsl's adjoint, walked the same way).
//
// Why: a lane walk reads a step's row of channels at a time and the lanes alone (B x N)
// keep too few loads in flight for HBM; the chunked passes give parallelism but read every
// input twice. Here every (chunk, channel) is an invocation, each input is read once and
// each output written once:
//   1. the invocation walks its chunk from the zero state, keeping each step's local state
//      S_q and transition product P_q in registers (named vec4s, never an indexed array);
//   2. it publishes the chunk's aggregate (P, S) in side, then looks back over the earlier
//      chunks (in scan order) of its channel: a chunk's inclusive carry ends the look-back,
//      an aggregate is folded in and the look-back moves one chunk further;
//   3. it publishes its own inclusive carry and writes out_q = S_q + P_q carry_in.
// Forward progress: workgroups take their chunk from a ticket (an atomic counter), so a
// chunk's predecessor took its ticket earlier and is running or done; the look-back waits
// only on running workgroups. The engine offers this pass only where running workgroups make
// progress while others spin (scan::strategy::lookback_offered); WebGPU does not promise it.
// Memory order: WGSL atomics are relaxed, so each published word is its own flag: side is
// zeroed first (scan_lookback_clear) and a value is stored with +0.0 as -0.0 (bits never 0).
// A word is read only once it is non-zero, and each word is written once, so no ordering
// between words is needed. The look-back polls with atomicOr(.., 0u), not atomicLoad: Mesa's
// software adapters compiled an atomicLoad spin as if the loaded word could not change
// (sporadic wrong carries, never a hang, at two threads); a read-modify-write is never
// assumed so.

override REVERSE: bool = false;

// Steps per chunk: one invocation holds L local states and products (2 L registers).
// scan::launch::LOOKBACK_STEPS reads it from here.
const L: u32 = 32u;

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
@group(0) @binding(7) var<storage, read_write> side: array<atomic<u32>>; // [ticket, (chunks, 3, lanes)]: P, S, inclusive carry
@group(0) @binding(8) var<storage, read_write> dh0: array<f32>;  // (B, N), written when REVERSE

// The ticket this workgroup drew.
var<workgroup> ticket: u32;

// Index of (lane, t = 0); step t adds t * p.n.
fn row(lane: u32) -> u32 {
    return (lane / p.n) * p.launch.t_len * p.n + lane % p.n;
}

// side word of the value k (0: P, 1: S, 2: inclusive carry) of the q-th chunk in scan order.
fn slot(q: u32, k: u32, lane: u32) -> u32 {
    return 1u + (q * 3u + k) * p.launch.lanes + lane;
}

// A value as a flag word: never 0 (+0.0 is stored as -0.0).
fn publish(i: u32, v: f32) {
    let bits = bitcast<u32>(v);
    atomicStore(&side[i], select(bits, 0x80000000u, bits == 0u));
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

// A walk's local state from zero and product of transitions.
struct Local {
    s: f32,
    p: f32,
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

// Four steps' local states and products, in scan order.
struct Quad {
    s: vec4<f32>,
    p: vec4<f32>,
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

// The carry into the q-th chunk (q > 0) of lane: the earlier chunks' published values,
// nearest first, until one's inclusive carry is there. Chunk 0 publishes only its inclusive
// carry, so the look-back never passes it.
// (NaN if the loop were ever left otherwise: Mesa's software adapters end a loop after 65535
// trips, and a cut look-back must not pass for a value.)
fn look_back(lane: u32, q: u32) -> f32 {
    var acc_p = 1.0;
    var acc_s = 0.0;
    var carry = bitcast<f32>(0x7fc00000u);
    var j = q - 1u;
    loop {
        let inclusive = atomicOr(&side[slot(j, 2u, lane)], 0u);
        if inclusive != 0u {
            carry = fma(acc_p, bitcast<f32>(inclusive), acc_s);
            break;
        }
        let pj = atomicOr(&side[slot(j, 0u, lane)], 0u);
        let sj = atomicOr(&side[slot(j, 1u, lane)], 0u);
        if pj != 0u && sj != 0u {
            // carry_in(q) = acc_s + acc_p (S_j + P_j carry_in(j))
            acc_s = fma(acc_p, bitcast<f32>(sj), acc_s);
            acc_p *= bitcast<f32>(pj);
            j -= 1u;
        }
    }
    return carry;
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

// Zeroes side (ticket and every flag word) before scan_lookback.
@compute @workgroup_size(WG)
fn scan_lookback_clear(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    let i = invocation(wid, nwg, lid);
    if i < arrayLength(&side) {
        atomicStore(&side[i], 0u);
    }
}

// One invocation per (chunk, lane), workgroups in ticket order: chunk-major, so a chunk's
// predecessors in scan order took earlier tickets.
@compute @workgroup_size(WG)
fn scan_lookback(@builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        ticket = atomicAdd(&side[0], 1u);
    }
    let id = workgroupUniformLoad(&ticket);
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
    // 1. the chunk from zero: all 2 L loads are independent of the dependent chain.
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
        publish(slot(q, 0u, lane), l.p);
        publish(slot(q, 1u, lane), l.s);
        carry = look_back(lane, q);
    }
    // 3. the inclusive carry for the chunks after, then the outputs.
    let inclusive = fma(l.p, carry, l.s);
    publish(slot(q, 2u, lane), inclusive);
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
