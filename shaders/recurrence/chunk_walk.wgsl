// prelude: recurrence/launch.wgsl
// The chunk/carry skeleton of the channel scans' walks (prelude of scan/linear*.wgsl and
// scan/parallel_scan_log*.wgsl, after recurrence/launch.wgsl): the software-pipelined walk of
// a range of T and the four passes of the launch (engine/recurrence/launch.rs), written once.
// A walk file (scan/linear_walk.wgsl, scan/log_walk.wgsl) brings its bindings (`side:
// array<F>` among them, laid out as below), the width alias F (from the including file), and
// its recurrence as these hooks:
//   struct Walk { s: F, prod: F, .. }   a walk in progress: the state s and the transition
//                                       prod applied so far (a chunk's transition)
//   begin(lane, end) -> Walk            a walk of lane from state zero whose first step in
//                                       scan order is in [.., end)
//   struct Step, load_step(w, t, write) step t's loads (no dependent arithmetic, so a block's
//                                       U steps issue all theirs at once)
//   update(w, t, l, write)              one dependent step from its loads; writes the
//                                       outputs when `write`
//   initial(lane) -> F                  the forward state before the first step
//   reduce_from(w, start) -> u32        a chunk reduce's first step to walk from `start`,
//                                       the state set to the chunk's empty value
//   combine(carry, P, S) -> F           the state after a chunk of transition P and local
//                                       state S entered with carry
//   lane_done(w, lane), carries_done(lane, carry)   anything after a lane walk or the
//                                       carry walk (the linear adjoint's dh0)
//   fwd_stride(), fwd_a(w, r), fwd_b(w, r) -> F   the forward lane walk's stride and the two
//                                       loads of the step whose row is r; fwd_step(s, a, b)
//                                       -> F its update; fwd_store(w, r, s) its store
//
// Why the walks look the way they do (bandwidth, not arithmetic, is the budget):
// - state and inputs are named F values, never arrays, so they stay in registers;
// - `walk` (reverse, and the chunked passes): a block of U = 8 steps issues all its loads at
//   once, and the walk is software pipelined: block n + 1's loads are issued before block n's
//   8 dependent updates, so 16-24 loads per invocation are in flight at every point;
// - `walk_forward` (the forward lane walk) is written as dev/src/bin/walk_probe.rs measured a
//   lane walk at 101-106% of the copy on an H200 (B16 T4096 D4096 f32, fresh random data):
//   four channels an invocation (vec4), blocks of UF = 16 steps carried in 32 named vars
//   (never a struct or array variable), a running row index, and a workgroup barrier after
//   every block, which keeps a workgroup's warps on the same rows of T (the probe's log walk:
//   57% of the copy without it, 106% with it). So every invocation of a lane walk walks, past
//   the last lane too (storing nothing there), keeping the barrier in uniform control flow.
//   Through the engine it runs at 102% of the copy on an H100 with the GPU's clock up, and at
//   54% after the GPU idled to 345 MHz (benches/results/h200.md, tenth session).
//
// Entries (the launch: recurrence/launch.wgsl; the entry points recurrence/channel_entries.wgsl):
//   lanes         per lane walks [t_begin, t_end) of T; a segmented walk resumes from the
//                 state it left in side[lane] (out holds it rounded when the output is a half).
//   chunk_reduce  per (chunk, lane): the chunk's transition P and local state S from empty,
//                 into side.
//   carries       per lane walks the chunks in scan order, carry = combine(carry, P, S),
//                 storing each chunk's incoming carry in place of S.
//   chunk_fixup   per (chunk, lane) reruns the chunk from its incoming carry, writing out.
// The chunked passes number invocations chunk-major (lane fastest) so a subgroup reads
// adjacent channels of one step: coalesced, like the lane walk.
// side (f32 words, F values): chunked (chunks, 2, lanes) P and S; segmented lanes (lanes,) state.

override REVERSE: bool = false;

// Steps whose loads one block issues before their dependent updates: the reverse and chunked
// walks (`walk`), and the forward lane walk (`walk_forward`).
const U: u32 = 8u;
const UF: u32 = 16u;

// The step after t in scan order.
fn next(t: u32) -> u32 {
    return select(t + 1u, t - 1u, REVERSE);
}

// The loads of one block: U steps' Step values, named.
struct Block {
    s0: Step, s1: Step, s2: Step, s3: Step, s4: Step, s5: Step, s6: Step, s7: Step,
}

// The U steps of a block from t0, in scan order.
struct Times {
    t0: u32, t1: u32, t2: u32, t3: u32, t4: u32, t5: u32, t6: u32, t7: u32,
}

fn times(t0: u32) -> Times {
    let t1 = next(t0);
    let t2 = next(t1);
    let t3 = next(t2);
    let t4 = next(t3);
    let t5 = next(t4);
    let t6 = next(t5);
    return Times(t0, t1, t2, t3, t4, t5, t6, next(t6));
}

// Issues the loads of the U steps from t0 in scan order; nothing waits on them here.
fn load(w: ptr<function, Walk>, t0: u32, write: bool) -> Block {
    let t = times(t0);
    return Block(
        load_step(w, t.t0, write), load_step(w, t.t1, write), load_step(w, t.t2, write), load_step(w, t.t3, write),
        load_step(w, t.t4, write), load_step(w, t.t5, write), load_step(w, t.t6, write), load_step(w, t.t7, write)
    );
}

// The U dependent updates of the block loaded from t0.
fn apply(w: ptr<function, Walk>, l: Block, t0: u32, write: bool) {
    let t = times(t0);
    update(w, t.t0, l.s0, write);
    update(w, t.t1, l.s1, write);
    update(w, t.t2, l.s2, write);
    update(w, t.t3, l.s3, write);
    update(w, t.t4, l.s4, write);
    update(w, t.t5, l.s5, write);
    update(w, t.t6, l.s6, write);
    update(w, t.t7, l.s7, write);
}

// Walks [start, end) of T in scan order, writing the outputs when `write`. Software
// pipelined: block n + 1's loads are issued before block n's updates and stores.
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
        update(w, t, load_step(w, t, write), write);
    }
}

// The forward lane walk of [start, end) from state s0 (see "why" above): blocks of UF = 16
// steps software pipelined through 32 named vars (the next block's loads issued before this
// block's 16 dependent updates), a barrier after every block. Hooks: fwd_stride() (F values a step), fwd_a(w, r),
// fwd_b(w, r) (the two loads of the step r F values past the lane's first),
// fwd_step(s, a, b) (the update), fwd_store(w, r, s). Stores only when `write`. Returns
// the last state. Uniform control flow: every invocation of the workgroup calls it with
// the same range.
fn walk_forward(w: Walk, start: u32, end: u32, s0: F, write: bool) -> F {
    var s = s0;
    let steps = end - start;
    let n = fwd_stride();
    // The row of step start + q: F values from the lane's first step.
    var r = start * n;
    var q = 0u;
    if steps >= UF {
        var a0 = fwd_a(w, r + 0u * n);
        var b0 = fwd_b(w, r + 0u * n);
        var a1 = fwd_a(w, r + 1u * n);
        var b1 = fwd_b(w, r + 1u * n);
        var a2 = fwd_a(w, r + 2u * n);
        var b2 = fwd_b(w, r + 2u * n);
        var a3 = fwd_a(w, r + 3u * n);
        var b3 = fwd_b(w, r + 3u * n);
        var a4 = fwd_a(w, r + 4u * n);
        var b4 = fwd_b(w, r + 4u * n);
        var a5 = fwd_a(w, r + 5u * n);
        var b5 = fwd_b(w, r + 5u * n);
        var a6 = fwd_a(w, r + 6u * n);
        var b6 = fwd_b(w, r + 6u * n);
        var a7 = fwd_a(w, r + 7u * n);
        var b7 = fwd_b(w, r + 7u * n);
        var a8 = fwd_a(w, r + 8u * n);
        var b8 = fwd_b(w, r + 8u * n);
        var a9 = fwd_a(w, r + 9u * n);
        var b9 = fwd_b(w, r + 9u * n);
        var a10 = fwd_a(w, r + 10u * n);
        var b10 = fwd_b(w, r + 10u * n);
        var a11 = fwd_a(w, r + 11u * n);
        var b11 = fwd_b(w, r + 11u * n);
        var a12 = fwd_a(w, r + 12u * n);
        var b12 = fwd_b(w, r + 12u * n);
        var a13 = fwd_a(w, r + 13u * n);
        var b13 = fwd_b(w, r + 13u * n);
        var a14 = fwd_a(w, r + 14u * n);
        var b14 = fwd_b(w, r + 14u * n);
        var a15 = fwd_a(w, r + 15u * n);
        var b15 = fwd_b(w, r + 15u * n);
        for (; q + 2u * UF <= steps; q += UF) {
            let na0 = fwd_a(w, r + 16u * n);
            let nb0 = fwd_b(w, r + 16u * n);
            let na1 = fwd_a(w, r + 17u * n);
            let nb1 = fwd_b(w, r + 17u * n);
            let na2 = fwd_a(w, r + 18u * n);
            let nb2 = fwd_b(w, r + 18u * n);
            let na3 = fwd_a(w, r + 19u * n);
            let nb3 = fwd_b(w, r + 19u * n);
            let na4 = fwd_a(w, r + 20u * n);
            let nb4 = fwd_b(w, r + 20u * n);
            let na5 = fwd_a(w, r + 21u * n);
            let nb5 = fwd_b(w, r + 21u * n);
            let na6 = fwd_a(w, r + 22u * n);
            let nb6 = fwd_b(w, r + 22u * n);
            let na7 = fwd_a(w, r + 23u * n);
            let nb7 = fwd_b(w, r + 23u * n);
            let na8 = fwd_a(w, r + 24u * n);
            let nb8 = fwd_b(w, r + 24u * n);
            let na9 = fwd_a(w, r + 25u * n);
            let nb9 = fwd_b(w, r + 25u * n);
            let na10 = fwd_a(w, r + 26u * n);
            let nb10 = fwd_b(w, r + 26u * n);
            let na11 = fwd_a(w, r + 27u * n);
            let nb11 = fwd_b(w, r + 27u * n);
            let na12 = fwd_a(w, r + 28u * n);
            let nb12 = fwd_b(w, r + 28u * n);
            let na13 = fwd_a(w, r + 29u * n);
            let nb13 = fwd_b(w, r + 29u * n);
            let na14 = fwd_a(w, r + 30u * n);
            let nb14 = fwd_b(w, r + 30u * n);
            let na15 = fwd_a(w, r + 31u * n);
            let nb15 = fwd_b(w, r + 31u * n);
            s = fwd_step(s, a0, b0);
            if write { fwd_store(w, r + 0u * n, s); }
            s = fwd_step(s, a1, b1);
            if write { fwd_store(w, r + 1u * n, s); }
            s = fwd_step(s, a2, b2);
            if write { fwd_store(w, r + 2u * n, s); }
            s = fwd_step(s, a3, b3);
            if write { fwd_store(w, r + 3u * n, s); }
            s = fwd_step(s, a4, b4);
            if write { fwd_store(w, r + 4u * n, s); }
            s = fwd_step(s, a5, b5);
            if write { fwd_store(w, r + 5u * n, s); }
            s = fwd_step(s, a6, b6);
            if write { fwd_store(w, r + 6u * n, s); }
            s = fwd_step(s, a7, b7);
            if write { fwd_store(w, r + 7u * n, s); }
            s = fwd_step(s, a8, b8);
            if write { fwd_store(w, r + 8u * n, s); }
            s = fwd_step(s, a9, b9);
            if write { fwd_store(w, r + 9u * n, s); }
            s = fwd_step(s, a10, b10);
            if write { fwd_store(w, r + 10u * n, s); }
            s = fwd_step(s, a11, b11);
            if write { fwd_store(w, r + 11u * n, s); }
            s = fwd_step(s, a12, b12);
            if write { fwd_store(w, r + 12u * n, s); }
            s = fwd_step(s, a13, b13);
            if write { fwd_store(w, r + 13u * n, s); }
            s = fwd_step(s, a14, b14);
            if write { fwd_store(w, r + 14u * n, s); }
            s = fwd_step(s, a15, b15);
            if write { fwd_store(w, r + 15u * n, s); }
            a0 = na0;
            b0 = nb0;
            a1 = na1;
            b1 = nb1;
            a2 = na2;
            b2 = nb2;
            a3 = na3;
            b3 = nb3;
            a4 = na4;
            b4 = nb4;
            a5 = na5;
            b5 = nb5;
            a6 = na6;
            b6 = nb6;
            a7 = na7;
            b7 = nb7;
            a8 = na8;
            b8 = nb8;
            a9 = na9;
            b9 = nb9;
            a10 = na10;
            b10 = nb10;
            a11 = na11;
            b11 = nb11;
            a12 = na12;
            b12 = nb12;
            a13 = na13;
            b13 = nb13;
            a14 = na14;
            b14 = nb14;
            a15 = na15;
            b15 = nb15;
            r += UF * n;
            workgroupBarrier();
        }
        s = fwd_step(s, a0, b0);
        if write { fwd_store(w, r + 0u * n, s); }
        s = fwd_step(s, a1, b1);
        if write { fwd_store(w, r + 1u * n, s); }
        s = fwd_step(s, a2, b2);
        if write { fwd_store(w, r + 2u * n, s); }
        s = fwd_step(s, a3, b3);
        if write { fwd_store(w, r + 3u * n, s); }
        s = fwd_step(s, a4, b4);
        if write { fwd_store(w, r + 4u * n, s); }
        s = fwd_step(s, a5, b5);
        if write { fwd_store(w, r + 5u * n, s); }
        s = fwd_step(s, a6, b6);
        if write { fwd_store(w, r + 6u * n, s); }
        s = fwd_step(s, a7, b7);
        if write { fwd_store(w, r + 7u * n, s); }
        s = fwd_step(s, a8, b8);
        if write { fwd_store(w, r + 8u * n, s); }
        s = fwd_step(s, a9, b9);
        if write { fwd_store(w, r + 9u * n, s); }
        s = fwd_step(s, a10, b10);
        if write { fwd_store(w, r + 10u * n, s); }
        s = fwd_step(s, a11, b11);
        if write { fwd_store(w, r + 11u * n, s); }
        s = fwd_step(s, a12, b12);
        if write { fwd_store(w, r + 12u * n, s); }
        s = fwd_step(s, a13, b13);
        if write { fwd_store(w, r + 13u * n, s); }
        s = fwd_step(s, a14, b14);
        if write { fwd_store(w, r + 14u * n, s); }
        s = fwd_step(s, a15, b15);
        if write { fwd_store(w, r + 15u * n, s); }
        r += UF * n;
        q += UF;
    }
    for (; q < steps; q++) {
        s = fwd_step(s, fwd_a(w, r), fwd_b(w, r));
        if write { fwd_store(w, r, s); }
        r += n;
    }
    return s;
}

// Every invocation of the workgroup walks (the barrier of `walk_forward`): one past the last
// lane walks lane 0's inputs and stores nothing.
fn lanes(id: u32) {
    let live = id < p.launch.lanes;
    let lane = select(0u, id, live);
    var w = begin(lane, p.launch.t_end);
    // Resume from the previous segment's last state unless this segment starts the walk.
    if launch_resumes(p.launch, REVERSE) {
        w.s = side[lane];
    } else if !REVERSE {
        w.s = initial(lane);
    }
    if REVERSE {
        walk(&w, p.launch.t_begin, p.launch.t_end, live);
    } else {
        w.s = walk_forward(w, p.launch.t_begin, p.launch.t_end, w.s, live);
    }
    if !live {
        return;
    }
    if p.launch.t_end - p.launch.t_begin < p.launch.t_len {
        side[lane] = w.s;
    }
    lane_done(&w, lane);
}

// side slot of chunk c's value k (0: P, 1: S, then the incoming carry) for lane.
fn slot(c: u32, k: u32, lane: u32) -> u32 {
    return (c * 2u + k) * p.launch.lanes + lane;
}

// A chunked pass's invocation id as (lane, chunk c): lane fastest.
struct Chunk {
    lane: u32,
    c: u32,
}

fn chunk_of(id: u32) -> Chunk {
    return Chunk(id % p.launch.lanes, id / p.launch.lanes);
}

fn chunk_reduce(id: u32) {
    if id >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let k = chunk_of(id);
    let end = chunk_end(p.launch, k.c);
    var w = begin(k.lane, end);
    walk(&w, reduce_from(&w, chunk_start(p.launch, k.c)), end, false);
    side[slot(k.c, 0u, k.lane)] = w.prod;
    side[slot(k.c, 1u, k.lane)] = w.s;
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
        carry = initial(lane);
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
    carries_done(lane, carry);
}

fn chunk_fixup(id: u32) {
    if id < p.launch.lanes * p.launch.chunks {
        let k = chunk_of(id);
        let end = chunk_end(p.launch, k.c);
        var w = begin(k.lane, end);
        w.s = side[slot(k.c, 1u, k.lane)];
        walk(&w, chunk_start(p.launch, k.c), end, true);
    }
}
