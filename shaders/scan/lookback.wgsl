// Decoupled look-back for the one-pass channel scans (prelude of scan/linear_lookback.wgsl and
// scan/parallel_scan_log_lookback.wgsl; strategy LookBack, engine/scan/strategy.rs).
//
// Why: a lane walk reads a step's row of channels at a time and the lanes alone (B x N) keep
// too few loads in flight for HBM; the chunked passes give parallelism but read every input
// twice. In a look-back pass every (chunk of L steps, channel) is an invocation, each input is
// read once and each output written once:
//   1. the invocation walks its chunk from the identity, keeping each step's local state S_q
//      and transition P_q in registers (named vec4s, never an indexed array);
//   2. it publishes the chunk's aggregate (P, S), then looks back over the earlier chunks (in
//      scan order) of its channel: a chunk's inclusive carry ends the look-back, an aggregate
//      is folded in and the look-back moves one chunk further;
//   3. it publishes its own inclusive carry and writes each step from S_q, P_q and the carry.
// This prelude holds the protocol and the entry points (scan_lookback_clear, scan_lookback).
// The including file brings the bindings (`side: array<atomic<u32>>` among them) and the
// recurrence:
//   struct Rows                      a lane's row indices, from rows(lane)
//   step(r, start, end, q, l)        step q (scan order) of the chunk [start, end) from l
//   combine(carry, P, S)             the state after a chunk entered with carry
//   fold(acc, P_j, S_j)              the chunks folded so far (nearest first) after chunk j
//   initial(r, lane)                 the carry into the first chunk in scan order
//   emit(lane, r, start, end, q, S_q, P_q, carry)   writes step q's outputs
//   finish(lane, r, start, inclusive)               anything after the chunk's last step
//
// side: [ticket, (chunks in scan order, 3, lanes)]: P, S and the inclusive carry of each chunk.
// Forward progress: workgroups take their chunk from a ticket (an atomic counter), chunks in
// scan order, so a chunk's predecessor took its ticket earlier and is running or done; a
// look-back waits only on running workgroups. The engine offers these passes only where running
// workgroups progress while another spins (scan::strategy::lookback_offered); WebGPU does not
// promise it. Memory order: WGSL atomics are relaxed, so each published word is its own flag:
// side is zeroed first (scan_lookback_clear) and a value is stored with +0.0 as -0.0 (its bits
// never 0). A word is read only once it is non-zero and is written once, so no order between
// words is needed. The look-back polls with atomicOr(.., 0u), not atomicLoad: Mesa's software
// adapters compiled an atomicLoad spin as if the word could not change (sporadic wrong carries,
// never a hang, at two threads); a read-modify-write is never assumed so.

override REVERSE: bool = false;

// Steps per chunk: one invocation holds L local states and transitions (2 L registers).
// scan::strategy::LOOKBACK_STEPS reads it from here.
const L: u32 = 32u;

// A chunk's walk so far: local state and transition (also a fold of chunks).
struct Local {
    s: f32,
    p: f32,
}

// Four steps' local states and transitions, in scan order.
struct Quad {
    s: vec4<f32>,
    p: vec4<f32>,
}

// The ticket the workgroup drew.
var<workgroup> ticket: u32;

// Draws the workgroup's ticket: the same value in every invocation.
fn lookback_ticket(lid: u32) -> u32 {
    if lid == 0u {
        ticket = atomicAdd(&side[0], 1u);
    }
    return workgroupUniformLoad(&ticket);
}

// Invocation i of the clear pass zeroes word i.
fn lookback_clear(i: u32) {
    if i < arrayLength(&side) {
        atomicStore(&side[i], 0u);
    }
}

// side word of value k (0: P, 1: S, 2: inclusive carry) of the q-th chunk in scan order.
fn lookback_slot(q: u32, k: u32, lane: u32) -> u32 {
    return 1u + (q * 3u + k) * p.launch.lanes + lane;
}

// A value as a flag word: never 0 (+0.0 is stored as -0.0).
fn lookback_publish(i: u32, v: f32) {
    let bits = bitcast<u32>(v);
    atomicStore(&side[i], select(bits, 0x80000000u, bits == 0u));
}

fn lookback_publish_aggregate(q: u32, lane: u32, l: Local) {
    lookback_publish(lookback_slot(q, 0u, lane), l.p);
    lookback_publish(lookback_slot(q, 1u, lane), l.s);
}

fn lookback_publish_inclusive(q: u32, lane: u32, v: f32) {
    lookback_publish(lookback_slot(q, 2u, lane), v);
}

// The carry into the q-th chunk (q > 0) of lane. Chunk 0 publishes only its inclusive carry,
// so the look-back never passes it. NaN if the loop were ever left another way (Mesa's
// software adapters end a loop after 65535 trips): a cut look-back must not pass for a value.
fn lookback_carry(q: u32, lane: u32) -> f32 {
    var acc = Local(0.0, 1.0);
    var folded = false;
    var carry = bitcast<f32>(0x7fc00000u);
    var j = q - 1u;
    loop {
        let inclusive = atomicOr(&side[lookback_slot(j, 2u, lane)], 0u);
        if inclusive != 0u {
            carry = bitcast<f32>(inclusive);
            if folded {
                carry = combine(carry, acc.p, acc.s);
            }
            break;
        }
        let pj = atomicOr(&side[lookback_slot(j, 0u, lane)], 0u);
        let sj = atomicOr(&side[lookback_slot(j, 1u, lane)], 0u);
        if pj != 0u && sj != 0u {
            let chunk = Local(bitcast<f32>(sj), bitcast<f32>(pj));
            if folded {
                acc = fold(acc, chunk.p, chunk.s);
            } else {
                acc = chunk;
            }
            folded = true;
            j -= 1u;
        }
    }
    return carry;
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

// One invocation per (chunk, lane), workgroups in ticket order, chunk-major.
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
    // 1. the chunk from the identity: its loads do not wait on the dependent chain.
    var l = Local(0.0, 1.0);
    let q0 = quad(r, start, end, 0u, &l);
    let q1 = quad(r, start, end, 4u, &l);
    let q2 = quad(r, start, end, 8u, &l);
    let q3 = quad(r, start, end, 12u, &l);
    let q4 = quad(r, start, end, 16u, &l);
    let q5 = quad(r, start, end, 20u, &l);
    let q6 = quad(r, start, end, 24u, &l);
    let q7 = quad(r, start, end, 28u, &l);
    // 2. the carry in: the initial state for the first chunk, else the look-back.
    var carry = 0.0;
    if q == 0u {
        carry = initial(r, lane);
    } else {
        lookback_publish_aggregate(q, lane, l);
        carry = lookback_carry(q, lane);
    }
    // 3. the inclusive carry for the chunks after, then the outputs.
    let inclusive = combine(carry, l.p, l.s);
    lookback_publish_inclusive(q, lane, inclusive);
    emit_quad(lane, r, start, end, 0u, q0, carry);
    emit_quad(lane, r, start, end, 4u, q1, carry);
    emit_quad(lane, r, start, end, 8u, q2, carry);
    emit_quad(lane, r, start, end, 12u, q3, carry);
    emit_quad(lane, r, start, end, 16u, q4, carry);
    emit_quad(lane, r, start, end, 20u, q5, carry);
    emit_quad(lane, r, start, end, 24u, q6, carry);
    emit_quad(lane, r, start, end, 28u, q7, carry);
    finish(lane, r, start, inclusive);
}
