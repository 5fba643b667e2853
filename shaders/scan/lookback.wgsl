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
// The including file brings the bindings (`side: array<atomic<u32>>` among them) and the
// recurrence: `combine(carry, P, S)`, the state after a chunk entered with carry, and
// `fold(acc, P_j, S_j)`, the chunks folded so far (nearest first) composed after chunk j.
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
