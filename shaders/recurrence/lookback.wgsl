// The one-pass channel scans' protocol (prelude of scan/linear_lookback.wgsl and
// scan/parallel_scan_log_lookback.wgsl; strategy LookBack, engine/recurrence/lookback.rs): chunks
// of p.launch.chunk steps of W adjacent channels, a chunk an invocation, the chunk carries
// passed on by decoupled look-back with a fallback, so it needs no forward-progress guarantee.
//
// Why: a lane walk reads a step's row of channels at a time and the lanes alone (B x N) keep
// too few loads in flight for HBM; the chunked passes give parallelism but read every input
// twice from memory. Here every (chunk, W channels) is an invocation and a workgroup a tile
// of chunk steps x WG * W adjacent channels, whose rows it reads as contiguous runs (vec4
// loads at W = 4):
//   1. the invocation walks its chunk from the identity, U steps' loads at a time, to the
//      chunk's aggregate (transition P, local state S), and publishes it;
//   2. it looks back over the earlier chunks (in scan order) of its channels: a chunk's
//      inclusive carry ends the look-back, an aggregate is folded in and the look-back moves
//      one chunk further; it publishes its own inclusive carry;
//   3. it walks its chunk again from the carry, writing every output once. The tile was read
//      moments before, so this second read is served by the cache, not by memory: memory
//      sees each input once and each output once, and no step's state waits in registers.
// Decoupled fallback (the method of Smith, Levien and Owens, SPAA 2025): a look-back that has
// polled a predecessor SPIN times without finding its words reads that chunk's inputs and
// computes its aggregate itself, then moves on. So no workgroup waits on one that is not
// running: the pass finishes on adapters that promise no forward progress (WebGPU, Metal,
// OpenGL), and where running workgroups do progress the fallback almost never runs.
//
// A width prelude (recurrence/width_vec4.wgsl, _vec2, _scalar) brings F (vec4<f32>, vec2<f32> or
// f32), W (its channels) and wide / narrow (F to and from vec4<f32>); the including file the
// bindings (`side: array<atomic<u32>>` among them) and the recurrence:
//   struct Rows, rows(lane)          a lane's row indices
//   struct In, load(r, t)            step t's inputs (loads only, so U of them go out at once)
//   local(l, i, first)               the chunk's aggregate after one more step from empty
//   apply(s, i)                      the state after a step from the state s
//   combine(carry, P, S)             the state after a chunk entered with carry
//   fold(acc, P_j, S_j)              the chunks folded so far (nearest first) after chunk j
//   initial(r, lane)                 the carry into the first chunk in scan order
//   emit(lane, r, t, s, i)           writes step t's outputs from its state and inputs
//   finish(lane, r, start, inclusive)               anything after the chunk's last step
//
// side: [ticket, (chunks in scan order, 3, lanes, W)]: P, S and the inclusive carry of each
// chunk, a word per channel. Workgroups take their chunk from a ticket (an atomic counter),
// chunks in scan order, so a predecessor usually took its ticket earlier and is running or
// done. Memory order: WGSL atomics are relaxed, so each published word is its own flag: side
// is zeroed first (scan_lookback_clear) and a value is stored with +0.0 as -0.0 (its bits
// never 0). A word is read only once it is non-zero and is written once, so no order between
// words is needed. The look-back polls with atomicOr(.., 0u), not atomicLoad: Mesa's software
// adapters compiled an atomicLoad spin as if the word could not change (sporadic wrong
// carries at two threads); a read-modify-write is never assumed so.

override REVERSE: bool = false;

// Steps whose loads a walk issues before their dependent updates.
const U: u32 = 8u;

// Polls of a predecessor's words before the look-back computes its aggregate itself
// (engine/recurrence/lookback.rs: lookback_spin). A predecessor publishes once it has read its chunk,
// which takes far longer than a poll, so where running workgroups are known to progress the
// engine sets it so high that the fallback is for starvation alone; recomputing chunks that
// were merely slow measured several times slower on an H200.
override SPIN: u32 = 64u;

// A test hook (engine/recurrence/lookback.rs: withhold_lookback_carries): the chunks after the first
// publish their aggregates but never their inclusive carries, so every look-back folds the
// aggregates of all its predecessors back to chunk 0 (on a fast GPU, the path of a look-back
// that catches a predecessor mid-look-back). The same values, by the longest path.
override WITHHOLD: bool = false;

// A chunk's walk from empty: local state and transition (also a fold of chunks).
struct Local {
    s: F,
    p: F,
}

// The words of one published value: its bits per channel, and whether all W are there.
struct Words {
    v: vec4<f32>,
    ready: bool,
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

// side word of channel 0 of value k (0: P, 1: S, 2: inclusive carry) of the q-th chunk in
// scan order; its W channels follow.
fn lookback_slot(q: u32, k: u32, lane: u32) -> u32 {
    return 1u + ((q * 3u + k) * p.launch.lanes + lane) * W;
}

// A value as W flag words: never 0 (+0.0 is stored as -0.0).
fn lookback_publish(q: u32, k: u32, lane: u32, v: F) {
    let w = wide(v);
    let i = lookback_slot(q, k, lane);
    for (var c = 0u; c < W; c++) {
        let bits = bitcast<u32>(w[c]);
        atomicStore(&side[i + c], select(bits, 0x80000000u, bits == 0u));
    }
}

// Value k of chunk q, ready once all its W words are non-zero.
fn lookback_poll(q: u32, k: u32, lane: u32) -> Words {
    let i = lookback_slot(q, k, lane);
    var out = Words(vec4(0.0), true);
    for (var c = 0u; c < W; c++) {
        let bits = atomicOr(&side[i + c], 0u);
        out.v[c] = bitcast<f32>(bits);
        out.ready = out.ready && bits != 0u;
    }
    return out;
}

// [start, end) of the q-th chunk in scan order.
fn chunk_range(q: u32) -> vec2<u32> {
    let c = select(q, p.launch.chunks - 1u - q, REVERSE);
    return vec2(chunk_start(p.launch, c), chunk_end(p.launch, c));
}

// The aggregate of the chunk [start, end) from its inputs: U steps' loads, then their updates.
fn aggregate(r: Rows, range: vec2<u32>) -> Local {
    let start = range.x;
    let end = range.y;
    let len = end - start;
    let i0 = load(r, time_at(start, end, 0u, REVERSE));
    var l = local(Local(F(0.0), F(1.0)), i0, true);
    var q = 1u;
    for (; q + U <= len; q += U) {
        let j0 = load(r, time_at(start, end, q, REVERSE));
        let j1 = load(r, time_at(start, end, q + 1u, REVERSE));
        let j2 = load(r, time_at(start, end, q + 2u, REVERSE));
        let j3 = load(r, time_at(start, end, q + 3u, REVERSE));
        let j4 = load(r, time_at(start, end, q + 4u, REVERSE));
        let j5 = load(r, time_at(start, end, q + 5u, REVERSE));
        let j6 = load(r, time_at(start, end, q + 6u, REVERSE));
        let j7 = load(r, time_at(start, end, q + 7u, REVERSE));
        l = local(local(local(local(l, j0, false), j1, false), j2, false), j3, false);
        l = local(local(local(local(l, j4, false), j5, false), j6, false), j7, false);
    }
    for (; q < len; q++) {
        l = local(l, load(r, time_at(start, end, q, REVERSE)), false);
    }
    return l;
}

// The chunk [start, end) walked from the state carry, writing every step; its last state.
fn walk(lane: u32, r: Rows, range: vec2<u32>, carry: F) -> F {
    let start = range.x;
    let end = range.y;
    let len = end - start;
    var s = carry;
    var q = 0u;
    for (; q + U <= len; q += U) {
        let t0 = time_at(start, end, q, REVERSE);
        let t1 = time_at(start, end, q + 1u, REVERSE);
        let t2 = time_at(start, end, q + 2u, REVERSE);
        let t3 = time_at(start, end, q + 3u, REVERSE);
        let t4 = time_at(start, end, q + 4u, REVERSE);
        let t5 = time_at(start, end, q + 5u, REVERSE);
        let t6 = time_at(start, end, q + 6u, REVERSE);
        let t7 = time_at(start, end, q + 7u, REVERSE);
        let j0 = load(r, t0);
        let j1 = load(r, t1);
        let j2 = load(r, t2);
        let j3 = load(r, t3);
        let j4 = load(r, t4);
        let j5 = load(r, t5);
        let j6 = load(r, t6);
        let j7 = load(r, t7);
        s = apply(s, j0);
        emit(lane, r, t0, s, j0);
        s = apply(s, j1);
        emit(lane, r, t1, s, j1);
        s = apply(s, j2);
        emit(lane, r, t2, s, j2);
        s = apply(s, j3);
        emit(lane, r, t3, s, j3);
        s = apply(s, j4);
        emit(lane, r, t4, s, j4);
        s = apply(s, j5);
        emit(lane, r, t5, s, j5);
        s = apply(s, j6);
        emit(lane, r, t6, s, j6);
        s = apply(s, j7);
        emit(lane, r, t7, s, j7);
    }
    for (; q < len; q++) {
        let t = time_at(start, end, q, REVERSE);
        let j = load(r, t);
        s = apply(s, j);
        emit(lane, r, t, s, j);
    }
    return s;
}

// The carry into the q-th chunk (q > 0) of lane. Chunk 0 publishes only its inclusive carry,
// so a look-back that reaches it waits for that carry or computes chunk 0 itself. NaN if the
// loop were ever left another way (Mesa's software adapters end a loop after 65535 trips): a
// cut look-back must not pass for a value.
fn lookback_carry(r: Rows, q: u32, lane: u32) -> F {
    var acc = Local(F(0.0), F(1.0));
    var folded = false;
    // A quiet NaN from a variable: as a constant expression, Tint (WebGPU) rejects a NaN.
    var nan_bits = 0x7fc00000u;
    var carry = F(bitcast<f32>(nan_bits));
    var j = q - 1u;
    var spins = 0u;
    loop {
        let inclusive = lookback_poll(j, 2u, lane);
        if inclusive.ready {
            carry = narrow(inclusive.v);
            if folded {
                carry = combine(carry, acc.p, acc.s);
            }
            break;
        }
        var chunk = Local(F(0.0), F(1.0));
        var found = false;
        if j > 0u {
            let pj = lookback_poll(j, 0u, lane);
            let sj = lookback_poll(j, 1u, lane);
            found = pj.ready && sj.ready;
            chunk = Local(narrow(sj.v), narrow(pj.v));
        }
        spins += 1u;
        if !found && spins >= SPIN {
            chunk = aggregate(r, chunk_range(j));
            found = true;
        }
        if found {
            if folded {
                acc = fold(acc, chunk.p, chunk.s);
            } else {
                acc = chunk;
            }
            folded = true;
            spins = 0u;
            if j == 0u {
                // Chunk 0 computed here: the carry is the initial state through all of them.
                carry = combine(initial(r, lane), acc.p, acc.s);
                break;
            }
            j -= 1u;
        }
    }
    return carry;
}

@compute @workgroup_size(WG)
fn scan_lookback_clear(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    let i = invocation(wid, nwg, lid);
    if i < arrayLength(&side) {
        atomicStore(&side[i], 0u);
    }
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
    let r = rows(lane);
    let range = chunk_range(q);
    // 1. the aggregate; 2. the carry in: the initial state for the first chunk, else the
    // look-back; 3. the chunk again from its carry.
    let l = aggregate(r, range);
    var carry = initial(r, lane);
    if q > 0u {
        lookback_publish(q, 0u, lane, l.p);
        lookback_publish(q, 1u, lane, l.s);
        carry = lookback_carry(r, q, lane);
    }
    if q == 0u || !WITHHOLD {
        lookback_publish(q, 2u, lane, combine(carry, l.p, l.s));
    }
    let last = walk(lane, r, range, carry);
    finish(lane, r, range.x, last);
}
