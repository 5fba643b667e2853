// prelude: recurrence/launch.wgsl
// dtype: a quad
// dtype: x pair
// dtype: h0 pair
// dtype: out pair store
// dtype: dh0 pair store
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
//   - the T walk is unrolled 16 steps a trip, every load of the 16 steps issued before the
//     dependent chain of updates: a lane walk is latency-bound otherwise (one step's loads in
//     flight per invocation);
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
    // Why 16 steps a trip: the 32 loads below do not depend on s, so all of them are in
    // flight before the first update waits on one; a step at a time exposes the full memory
    // latency on every step (and with few lanes, as at B16 N1024, 8 steps are not enough
    // bytes in flight to cover it).
    for (; q + 16u <= len; q += 16u) {
        let t0 = time_at(start, end, q, REVERSE);
        let t1 = time_at(start, end, q + 1u, REVERSE);
        let t2 = time_at(start, end, q + 2u, REVERSE);
        let t3 = time_at(start, end, q + 3u, REVERSE);
        let t4 = time_at(start, end, q + 4u, REVERSE);
        let t5 = time_at(start, end, q + 5u, REVERSE);
        let t6 = time_at(start, end, q + 6u, REVERSE);
        let t7 = time_at(start, end, q + 7u, REVERSE);
        let t8 = time_at(start, end, q + 8u, REVERSE);
        let t9 = time_at(start, end, q + 9u, REVERSE);
        let t10 = time_at(start, end, q + 10u, REVERSE);
        let t11 = time_at(start, end, q + 11u, REVERSE);
        let t12 = time_at(start, end, q + 12u, REVERSE);
        let t13 = time_at(start, end, q + 13u, REVERSE);
        let t14 = time_at(start, end, q + 14u, REVERSE);
        let t15 = time_at(start, end, q + 15u, REVERSE);
        let m0 = transition(base, t0);
        let m1 = transition(base, t1);
        let m2 = transition(base, t2);
        let m3 = transition(base, t3);
        let m4 = transition(base, t4);
        let m5 = transition(base, t5);
        let m6 = transition(base, t6);
        let m7 = transition(base, t7);
        let m8 = transition(base, t8);
        let m9 = transition(base, t9);
        let m10 = transition(base, t10);
        let m11 = transition(base, t11);
        let m12 = transition(base, t12);
        let m13 = transition(base, t13);
        let m14 = transition(base, t14);
        let m15 = transition(base, t15);
        let x0 = x_ld(base + t0 * n);
        let x1 = x_ld(base + t1 * n);
        let x2 = x_ld(base + t2 * n);
        let x3 = x_ld(base + t3 * n);
        let x4 = x_ld(base + t4 * n);
        let x5 = x_ld(base + t5 * n);
        let x6 = x_ld(base + t6 * n);
        let x7 = x_ld(base + t7 * n);
        let x8 = x_ld(base + t8 * n);
        let x9 = x_ld(base + t9 * n);
        let x10 = x_ld(base + t10 * n);
        let x11 = x_ld(base + t11 * n);
        let x12 = x_ld(base + t12 * n);
        let x13 = x_ld(base + t13 * n);
        let x14 = x_ld(base + t14 * n);
        let x15 = x_ld(base + t15 * n);
        s = apply(m0, s) + x0;
        out_st(base + t0 * n, s);
        s = apply(m1, s) + x1;
        out_st(base + t1 * n, s);
        s = apply(m2, s) + x2;
        out_st(base + t2 * n, s);
        s = apply(m3, s) + x3;
        out_st(base + t3 * n, s);
        s = apply(m4, s) + x4;
        out_st(base + t4 * n, s);
        s = apply(m5, s) + x5;
        out_st(base + t5 * n, s);
        s = apply(m6, s) + x6;
        out_st(base + t6 * n, s);
        s = apply(m7, s) + x7;
        out_st(base + t7 * n, s);
        s = apply(m8, s) + x8;
        out_st(base + t8 * n, s);
        s = apply(m9, s) + x9;
        out_st(base + t9 * n, s);
        s = apply(m10, s) + x10;
        out_st(base + t10 * n, s);
        s = apply(m11, s) + x11;
        out_st(base + t11 * n, s);
        s = apply(m12, s) + x12;
        out_st(base + t12 * n, s);
        s = apply(m13, s) + x13;
        out_st(base + t13 * n, s);
        s = apply(m14, s) + x14;
        out_st(base + t14 * n, s);
        s = apply(m15, s) + x15;
        out_st(base + t15 * n, s);
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
