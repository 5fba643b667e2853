// prelude: recurrence/launch.wgsl
// dtype: a vec4
// dtype: x vec2
// dtype: h0 vec2
// dtype: out vec2 store
// dtype: dh0 vec2 store
// Every input and output is a dtype slot (engine/kernel/dtype.rs): F32, F16 or BF16 storage,
// f32 values and state. A step's output is one vec2, so in a half it is one whole packed word
// that only its lane's invocation writes, rounded once when stored; a segmented lane walk
// resumes from the f32 state it left in side, never from the rounded output.
// matrix2: the affine scan's (K, V) = (2, 1) case, `matrix_scan`: h_t = A_t h_{t-1} + b_t with
// 2 x 2 transitions, one invocation per lane (b, n) (per (lane, chunk) in the chunk passes).
// The same entries, bindings and side layout contract as matrix_affine_scan.wgsl, written for
// the hardware instead of for every K:
//   - the state is a vec2 and A_t one vec4 load, b_t one vec2 load: no indexed arrays, which
//     NVIDIA's compiler places in local memory;
//   - the T walk is unrolled 16 steps a block and software pipelined, the next block's loads
//     issued before this block's dependent chain of updates: a lane walk is latency-bound
//     otherwise (see walk);
//   - a chunk reduce carries the chunk's local state and its whole 2 x 2 transition product in
//     one invocation (6 values), so the chunked passes read every input twice, not 3 times.
//
// REVERSE = true runs the adjoint over dh instead: g_t = dh_t + A_{t+1}^T g_{t+1}
// (g_{T-1} = dh_{T-1}), out = g = db, dh0 = A_0^T g_0.
//
// Entries (the launch and its header: recurrence/launch.wgsl):
//   scan_lanes          one invocation per lane walks [t_begin, t_end) of T; a later segment
//                       resumes from the state this one leaves in side[lane].
//   scan_chunk_reduce   per (lane, chunk): the chunk's local state from zero and its transition
//                       product P (the chunk's steps applied to the identity).
//   scan_carries        per lane: walks the chunks in scan order, carry = P_c carry + S_c,
//                       storing each chunk's incoming carry in place of S_c; in REVERSE also dh0.
//   scan_chunk_fixup    per (lane, chunk): reruns the chunk from its incoming carry, writing out.
// Indices: lane = b * N + n, step(b, t, n) = (b * T + t) * N + n = base(lane) + t * N.

override REVERSE: bool = false;

struct Params {
    launch: Launch, // lanes = B * N (recurrence/launch.wgsl)
    n: u32,         // N
    has_h0: u32,    // 1 when h0 is bound, 0 for a zero initial state
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<a_t>;                // (B, T, N) x (a00, a01, a10, a11)
@group(0) @binding(2) var<storage, read> x: array<x_t>;                // (B, T, N) x 2: b, or dh when REVERSE
@group(0) @binding(3) var<storage, read> h0: array<h0_t>;              // (B, N) x 2, read when has_h0 and not REVERSE
@group(0) @binding(4) var<storage, read_write> out: array<out_t>;      // (B, T, N) x 2: h, or g = db when REVERSE
@group(0) @binding(5) var<storage, read_write> side: array<vec2<f32>>; // f32: chunked (lanes, chunks, 3) x 2: S (then the carry), P e_0, P e_1; segmented lanes (lanes,) x 2 state
@group(0) @binding(6) var<storage, read_write> dh0: array<dh0_t>;      // (B, N) x 2, written when REVERSE

// step(b, 0, n): the lane's first step; step t is base + t * N.
fn lane_base(lane: u32) -> u32 {
    return (lane / p.n) * p.launch.t_len * p.n + lane % p.n;
}

// The transition the scan applies at time t: A_t forward; A_{t+1} in reverse, zero at T - 1
// (nothing comes from above). Loads a clamped index and selects, so the load never waits
// on a branch.
fn transition(base: u32, t: u32) -> vec4<f32> {
    if REVERSE {
        let above = min(t + 1u, p.launch.t_len - 1u);
        return select(vec4<f32>(0.0), a_ld(base + above * p.n), t + 1u < p.launch.t_len);
    }
    return a_ld(base + t * p.n);
}

// M s with M = A (forward) or A^T (reverse), A = (m.x m.y; m.z m.w).
fn apply(m: vec4<f32>, s: vec2<f32>) -> vec2<f32> {
    if REVERSE {
        return vec2<f32>(m.x * s.x + m.z * s.y, m.y * s.x + m.w * s.y);
    }
    return vec2<f32>(m.x * s.x + m.y * s.y, m.z * s.x + m.w * s.y);
}

// Walks the lane at `base` through [start, end) of T in scan order from s, writing out;
// returns the last state.
fn walk(base: u32, start: u32, end: u32, s0: vec2<f32>) -> vec2<f32> {
    var s = s0;
    let len = end - start;
    let n = p.n;
    var q = 0u;
    // Why 16 steps a block, software pipelined through scalar vars: the loads of a block do
    // not depend on s, so the next block's 32 loads are issued before this block's 16
    // dependent updates and 16 to 32 steps' loads are in flight at every point. On the H200
    // (dev/src/bin/walk_probe.rs, B16 T4096 N1024) this walk moved 106% of the vec4 copy,
    // the same 16-step blocks without pipelining 17-43%. The carried block is 32 named
    // vars, never a struct or array variable, which NVIDIA's compiler keeps out of registers.
    if len >= 16u {
        var m0 = transition(base, time_at(start, end, 0u, REVERSE));
        var m1 = transition(base, time_at(start, end, 1u, REVERSE));
        var m2 = transition(base, time_at(start, end, 2u, REVERSE));
        var m3 = transition(base, time_at(start, end, 3u, REVERSE));
        var m4 = transition(base, time_at(start, end, 4u, REVERSE));
        var m5 = transition(base, time_at(start, end, 5u, REVERSE));
        var m6 = transition(base, time_at(start, end, 6u, REVERSE));
        var m7 = transition(base, time_at(start, end, 7u, REVERSE));
        var m8 = transition(base, time_at(start, end, 8u, REVERSE));
        var m9 = transition(base, time_at(start, end, 9u, REVERSE));
        var m10 = transition(base, time_at(start, end, 10u, REVERSE));
        var m11 = transition(base, time_at(start, end, 11u, REVERSE));
        var m12 = transition(base, time_at(start, end, 12u, REVERSE));
        var m13 = transition(base, time_at(start, end, 13u, REVERSE));
        var m14 = transition(base, time_at(start, end, 14u, REVERSE));
        var m15 = transition(base, time_at(start, end, 15u, REVERSE));
        var x0 = x_ld(base + time_at(start, end, 0u, REVERSE) * n);
        var x1 = x_ld(base + time_at(start, end, 1u, REVERSE) * n);
        var x2 = x_ld(base + time_at(start, end, 2u, REVERSE) * n);
        var x3 = x_ld(base + time_at(start, end, 3u, REVERSE) * n);
        var x4 = x_ld(base + time_at(start, end, 4u, REVERSE) * n);
        var x5 = x_ld(base + time_at(start, end, 5u, REVERSE) * n);
        var x6 = x_ld(base + time_at(start, end, 6u, REVERSE) * n);
        var x7 = x_ld(base + time_at(start, end, 7u, REVERSE) * n);
        var x8 = x_ld(base + time_at(start, end, 8u, REVERSE) * n);
        var x9 = x_ld(base + time_at(start, end, 9u, REVERSE) * n);
        var x10 = x_ld(base + time_at(start, end, 10u, REVERSE) * n);
        var x11 = x_ld(base + time_at(start, end, 11u, REVERSE) * n);
        var x12 = x_ld(base + time_at(start, end, 12u, REVERSE) * n);
        var x13 = x_ld(base + time_at(start, end, 13u, REVERSE) * n);
        var x14 = x_ld(base + time_at(start, end, 14u, REVERSE) * n);
        var x15 = x_ld(base + time_at(start, end, 15u, REVERSE) * n);
        for (; q + 32u <= len; q += 16u) {
            let nm0 = transition(base, time_at(start, end, q + 16u, REVERSE));
            let nm1 = transition(base, time_at(start, end, q + 17u, REVERSE));
            let nm2 = transition(base, time_at(start, end, q + 18u, REVERSE));
            let nm3 = transition(base, time_at(start, end, q + 19u, REVERSE));
            let nm4 = transition(base, time_at(start, end, q + 20u, REVERSE));
            let nm5 = transition(base, time_at(start, end, q + 21u, REVERSE));
            let nm6 = transition(base, time_at(start, end, q + 22u, REVERSE));
            let nm7 = transition(base, time_at(start, end, q + 23u, REVERSE));
            let nm8 = transition(base, time_at(start, end, q + 24u, REVERSE));
            let nm9 = transition(base, time_at(start, end, q + 25u, REVERSE));
            let nm10 = transition(base, time_at(start, end, q + 26u, REVERSE));
            let nm11 = transition(base, time_at(start, end, q + 27u, REVERSE));
            let nm12 = transition(base, time_at(start, end, q + 28u, REVERSE));
            let nm13 = transition(base, time_at(start, end, q + 29u, REVERSE));
            let nm14 = transition(base, time_at(start, end, q + 30u, REVERSE));
            let nm15 = transition(base, time_at(start, end, q + 31u, REVERSE));
            let nx0 = x_ld(base + time_at(start, end, q + 16u, REVERSE) * n);
            let nx1 = x_ld(base + time_at(start, end, q + 17u, REVERSE) * n);
            let nx2 = x_ld(base + time_at(start, end, q + 18u, REVERSE) * n);
            let nx3 = x_ld(base + time_at(start, end, q + 19u, REVERSE) * n);
            let nx4 = x_ld(base + time_at(start, end, q + 20u, REVERSE) * n);
            let nx5 = x_ld(base + time_at(start, end, q + 21u, REVERSE) * n);
            let nx6 = x_ld(base + time_at(start, end, q + 22u, REVERSE) * n);
            let nx7 = x_ld(base + time_at(start, end, q + 23u, REVERSE) * n);
            let nx8 = x_ld(base + time_at(start, end, q + 24u, REVERSE) * n);
            let nx9 = x_ld(base + time_at(start, end, q + 25u, REVERSE) * n);
            let nx10 = x_ld(base + time_at(start, end, q + 26u, REVERSE) * n);
            let nx11 = x_ld(base + time_at(start, end, q + 27u, REVERSE) * n);
            let nx12 = x_ld(base + time_at(start, end, q + 28u, REVERSE) * n);
            let nx13 = x_ld(base + time_at(start, end, q + 29u, REVERSE) * n);
            let nx14 = x_ld(base + time_at(start, end, q + 30u, REVERSE) * n);
            let nx15 = x_ld(base + time_at(start, end, q + 31u, REVERSE) * n);
            s = apply(m0, s) + x0;
            out_st(base + time_at(start, end, q + 0u, REVERSE) * n, s);
            s = apply(m1, s) + x1;
            out_st(base + time_at(start, end, q + 1u, REVERSE) * n, s);
            s = apply(m2, s) + x2;
            out_st(base + time_at(start, end, q + 2u, REVERSE) * n, s);
            s = apply(m3, s) + x3;
            out_st(base + time_at(start, end, q + 3u, REVERSE) * n, s);
            s = apply(m4, s) + x4;
            out_st(base + time_at(start, end, q + 4u, REVERSE) * n, s);
            s = apply(m5, s) + x5;
            out_st(base + time_at(start, end, q + 5u, REVERSE) * n, s);
            s = apply(m6, s) + x6;
            out_st(base + time_at(start, end, q + 6u, REVERSE) * n, s);
            s = apply(m7, s) + x7;
            out_st(base + time_at(start, end, q + 7u, REVERSE) * n, s);
            s = apply(m8, s) + x8;
            out_st(base + time_at(start, end, q + 8u, REVERSE) * n, s);
            s = apply(m9, s) + x9;
            out_st(base + time_at(start, end, q + 9u, REVERSE) * n, s);
            s = apply(m10, s) + x10;
            out_st(base + time_at(start, end, q + 10u, REVERSE) * n, s);
            s = apply(m11, s) + x11;
            out_st(base + time_at(start, end, q + 11u, REVERSE) * n, s);
            s = apply(m12, s) + x12;
            out_st(base + time_at(start, end, q + 12u, REVERSE) * n, s);
            s = apply(m13, s) + x13;
            out_st(base + time_at(start, end, q + 13u, REVERSE) * n, s);
            s = apply(m14, s) + x14;
            out_st(base + time_at(start, end, q + 14u, REVERSE) * n, s);
            s = apply(m15, s) + x15;
            out_st(base + time_at(start, end, q + 15u, REVERSE) * n, s);
            m0 = nm0;
            x0 = nx0;
            m1 = nm1;
            x1 = nx1;
            m2 = nm2;
            x2 = nx2;
            m3 = nm3;
            x3 = nx3;
            m4 = nm4;
            x4 = nx4;
            m5 = nm5;
            x5 = nx5;
            m6 = nm6;
            x6 = nx6;
            m7 = nm7;
            x7 = nx7;
            m8 = nm8;
            x8 = nx8;
            m9 = nm9;
            x9 = nx9;
            m10 = nm10;
            x10 = nx10;
            m11 = nm11;
            x11 = nx11;
            m12 = nm12;
            x12 = nx12;
            m13 = nm13;
            x13 = nx13;
            m14 = nm14;
            x14 = nx14;
            m15 = nm15;
            x15 = nx15;
        }
        s = apply(m0, s) + x0;
        out_st(base + time_at(start, end, q + 0u, REVERSE) * n, s);
        s = apply(m1, s) + x1;
        out_st(base + time_at(start, end, q + 1u, REVERSE) * n, s);
        s = apply(m2, s) + x2;
        out_st(base + time_at(start, end, q + 2u, REVERSE) * n, s);
        s = apply(m3, s) + x3;
        out_st(base + time_at(start, end, q + 3u, REVERSE) * n, s);
        s = apply(m4, s) + x4;
        out_st(base + time_at(start, end, q + 4u, REVERSE) * n, s);
        s = apply(m5, s) + x5;
        out_st(base + time_at(start, end, q + 5u, REVERSE) * n, s);
        s = apply(m6, s) + x6;
        out_st(base + time_at(start, end, q + 6u, REVERSE) * n, s);
        s = apply(m7, s) + x7;
        out_st(base + time_at(start, end, q + 7u, REVERSE) * n, s);
        s = apply(m8, s) + x8;
        out_st(base + time_at(start, end, q + 8u, REVERSE) * n, s);
        s = apply(m9, s) + x9;
        out_st(base + time_at(start, end, q + 9u, REVERSE) * n, s);
        s = apply(m10, s) + x10;
        out_st(base + time_at(start, end, q + 10u, REVERSE) * n, s);
        s = apply(m11, s) + x11;
        out_st(base + time_at(start, end, q + 11u, REVERSE) * n, s);
        s = apply(m12, s) + x12;
        out_st(base + time_at(start, end, q + 12u, REVERSE) * n, s);
        s = apply(m13, s) + x13;
        out_st(base + time_at(start, end, q + 13u, REVERSE) * n, s);
        s = apply(m14, s) + x14;
        out_st(base + time_at(start, end, q + 14u, REVERSE) * n, s);
        s = apply(m15, s) + x15;
        out_st(base + time_at(start, end, q + 15u, REVERSE) * n, s);
        q += 16u;
    }
    for (; q < len; q++) {
        let t = time_at(start, end, q, REVERSE);
        s = apply(transition(base, t), s) + x_ld(base + t * n);
        out_st(base + t * n, s);
    }
    return s;
}

// The state before the first step of the scan order: h0 (or zero) forward, zero in reverse.
fn initial(lane: u32) -> vec2<f32> {
    if !REVERSE && p.has_h0 == 1u {
        return h0_ld(lane);
    }
    return vec2<f32>(0.0);
}

@compute @workgroup_size(WG)
fn scan_lanes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.launch.lanes {
        return;
    }
    let base = lane_base(lane);
    var s = initial(lane);
    // Resume from the previous segment's last state unless this segment starts the walk.
    if launch_resumes(p.launch, REVERSE) {
        s = side[lane];
    }
    s = walk(base, p.launch.t_begin, p.launch.t_end, s);
    if p.launch.t_end - p.launch.t_begin < p.launch.t_len {
        side[lane] = s;
    }
    if REVERSE && p.launch.t_begin == 0u {
        dh0_st(lane, apply(a_ld(base), s));
    }
}

@compute @workgroup_size(WG)
fn scan_chunk_reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
    let id = invocation(wid, nwg, lid);
    if id >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let c = id % p.launch.chunks;
    let base = lane_base(id / p.launch.chunks);
    let start = chunk_start(p.launch, c);
    let end = chunk_end(p.launch, c);
    let len = end - start;
    let n = p.n;
    var s = vec2<f32>(0.0);
    var p0 = vec2<f32>(1.0, 0.0); // P e_0
    var p1 = vec2<f32>(0.0, 1.0); // P e_1
    var q = 0u;
    // 4 steps a trip: their 8 loads in flight before the updates (see walk).
    for (; q + 4u <= len; q += 4u) {
        let t0 = time_at(start, end, q, REVERSE);
        let t1 = time_at(start, end, q + 1u, REVERSE);
        let t2 = time_at(start, end, q + 2u, REVERSE);
        let t3 = time_at(start, end, q + 3u, REVERSE);
        let m0 = transition(base, t0);
        let m1 = transition(base, t1);
        let m2 = transition(base, t2);
        let m3 = transition(base, t3);
        let x0 = x_ld(base + t0 * n);
        let x1 = x_ld(base + t1 * n);
        let x2 = x_ld(base + t2 * n);
        let x3 = x_ld(base + t3 * n);
        s = apply(m0, s) + x0;
        p0 = apply(m0, p0);
        p1 = apply(m0, p1);
        s = apply(m1, s) + x1;
        p0 = apply(m1, p0);
        p1 = apply(m1, p1);
        s = apply(m2, s) + x2;
        p0 = apply(m2, p0);
        p1 = apply(m2, p1);
        s = apply(m3, s) + x3;
        p0 = apply(m3, p0);
        p1 = apply(m3, p1);
    }
    for (; q < len; q++) {
        let t = time_at(start, end, q, REVERSE);
        let m = transition(base, t);
        s = apply(m, s) + x_ld(base + t * n);
        p0 = apply(m, p0);
        p1 = apply(m, p1);
    }
    side[id * 3u] = s;
    side[id * 3u + 1u] = p0;
    side[id * 3u + 2u] = p1;
}

@compute @workgroup_size(WG)
fn scan_carries(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.launch.lanes {
        return;
    }
    var carry = initial(lane);
    for (var q = 0u; q < p.launch.chunks; q++) {
        let c = select(q, p.launch.chunks - 1u - q, REVERSE);
        let o = (lane * p.launch.chunks + c) * 3u;
        // carry <- P_c carry + S_c; the incoming carry replaces S_c (only this invocation
        // reads or writes the lane's side).
        let next = side[o + 1u] * carry.x + side[o + 2u] * carry.y + side[o];
        side[o] = carry;
        carry = next;
    }
    if REVERSE {
        dh0_st(lane, apply(a_ld(lane_base(lane)), carry));
    }
}

@compute @workgroup_size(WG)
fn scan_chunk_fixup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let id = invocation(wid, nwg, lid);
    if id >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let c = id % p.launch.chunks;
    let base = lane_base(id / p.launch.chunks);
    walk(base, chunk_start(p.launch, c), chunk_end(p.launch, c), side[id * 3u]);
}
