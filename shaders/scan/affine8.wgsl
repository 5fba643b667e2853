// prelude: recurrence/launch.wgsl
// prelude: scan/affine_bindings.wgsl
// dtype: a vec4
// dtype: x scalar
// dtype: h0 scalar
// The inputs a, x, h0 are dtype slots (engine/kernel/dtype.rs): F32, F16 or BF16, read as f32;
// the outputs stay f32 (the engine narrows a half call's outputs afterwards, one word each).
// affine8: the affine scan's k = 8 case, H_t = A_t H_{t-1} + B_t with 8 x 8 transitions and
// 8 x V states (V in {1, 2, 4, 8, 16}): the same entries, side layout and contract as
// matrix_affine_scan.wgsl, written for the hardware instead of for every K:
//   - one invocation carries one column of H as two vec4s (lo = rows 0..3, hi = rows 4..7):
//     no indexed arrays, which NVIDIA's compiler places in local memory;
//   - the V column invocations of a lane share each A_t: a workgroup stages the transitions
//     of its items (lanes, or (lane, chunk) pairs) for a block of SLOT steps in workgroup
//     memory (64 matrices, 16 KiB, 16 dense vec4 loads an invocation, all in flight before
//     one barrier) and every column reads them from there; A is fetched from memory once,
//     not V times;
//   - the columns' B loads run 4 steps ahead of the dependent updates.
//
// Geometry. An item's SLOT consecutive invocations are its columns; SLOT = max(V, 4) in the
// walking passes (lanes, carries, fix-up; columns >= V idle) and 16 or 32 >= V + 8 in the
// chunk reduce (column c < V: local state; V <= c < V + 8: column c - V of the chunk's
// transition product; the rest idle). A workgroup holds WG / SLOT items and stages SLOT
// steps of each: 64 matrices whatever SLOT is.
//
// REVERSE = true runs the adjoint over the output gradients dH instead:
//   G_t = dH_t + A_{t+1}^T G_{t+1} (G_{T-1} = dH_{T-1}), out = G = dB, dh0 = A_0^T G_0.
// Indices: lane = b * N + n, step(b, t, n) = (b * T + t) * N + n; A at step * 16 vec4s,
// H / B at step * 8 V + i V + j.

override V: u32 = 8u;
override REVERSE: bool = false;

const K: u32 = 8u;
// Matrices a workgroup stages per block (items x steps), 16 vec4s each.
const STAGED: u32 = 64u;

// Params and the bindings: scan/affine_bindings.wgsl.

// The staged transitions: [item in workgroup][step in block][16 vec4s].
var<workgroup> staged: array<vec4<f32>, 1024>;

// One column of H: rows 0..3 and 4..7.
struct Col {
    lo: vec4<f32>,
    hi: vec4<f32>,
}

fn slot_walk() -> u32 {
    return max(V, 4u);
}

fn slot_reduce() -> u32 {
    return select(16u, 32u, V > 8u);
}

fn step_index(lane: u32, t: u32) -> u32 {
    return ((lane / p.n) * p.launch.t_len + t) * p.n + lane % p.n;
}

// An item's walk: its lane and its range [start, end) of T.
struct Item {
    lane: u32,
    start: u32,
    end: u32,
}

// Item i of a pass: a lane walking this segment, or (lane, chunk) = (i / chunks, i % chunks).
fn item_at(i: u32, chunked: bool) -> Item {
    if chunked {
        let c = i % p.launch.chunks;
        return Item(i / p.launch.chunks, chunk_start(p.launch, c), chunk_end(p.launch, c));
    }
    return Item(i, p.launch.t_begin, p.launch.t_end);
}

// The transition's time for the scan step at time t (A_t forward, A_{t+1} in reverse) and
// whether there is one (none at T - 1 in reverse: nothing comes from above).
fn transition_time(t: u32) -> u32 {
    return select(t, t + 1u, REVERSE);
}

// Staged vec4 f (of 1024) for the block starting at step q0 of the workgroup's items
// first, first + 1, ...: row part r of the transition of step q0 + s of item k, or zero where
// the item or the step does not exist.
fn fetch(f: u32, first: u32, items: u32, q0: u32, slot: u32, chunked: bool) -> vec4<f32> {
    let r = f % 16u;
    let s = (f / 16u) % slot;
    let k = f / (16u * slot);
    let it = item_at(first + k, chunked);
    let q = q0 + s;
    let t = time_at(it.start, it.end, min(q, it.end - it.start - 1u), REVERSE);
    let ta = transition_time(t);
    let ok = first + k < items && q < it.end - it.start && ta < p.launch.t_len;
    let lane = min(it.lane, p.launch.lanes - 1u);
    let v = a_ld(step_index(lane, min(ta, p.launch.t_len - 1u)) * 16u + r);
    return select(vec4<f32>(0.0), v, ok);
}

// Stages the block starting at step q0: 16 loads an invocation, all issued before any store
// waits on one (written out: a loop would wait for each load in turn).
fn stage(lid: u32, first: u32, items: u32, q0: u32, slot: u32, chunked: bool) {
    let v0 = fetch(lid, first, items, q0, slot, chunked);
    let v1 = fetch(lid + 64u, first, items, q0, slot, chunked);
    let v2 = fetch(lid + 128u, first, items, q0, slot, chunked);
    let v3 = fetch(lid + 192u, first, items, q0, slot, chunked);
    let v4 = fetch(lid + 256u, first, items, q0, slot, chunked);
    let v5 = fetch(lid + 320u, first, items, q0, slot, chunked);
    let v6 = fetch(lid + 384u, first, items, q0, slot, chunked);
    let v7 = fetch(lid + 448u, first, items, q0, slot, chunked);
    let v8 = fetch(lid + 512u, first, items, q0, slot, chunked);
    let v9 = fetch(lid + 576u, first, items, q0, slot, chunked);
    let v10 = fetch(lid + 640u, first, items, q0, slot, chunked);
    let v11 = fetch(lid + 704u, first, items, q0, slot, chunked);
    let v12 = fetch(lid + 768u, first, items, q0, slot, chunked);
    let v13 = fetch(lid + 832u, first, items, q0, slot, chunked);
    let v14 = fetch(lid + 896u, first, items, q0, slot, chunked);
    let v15 = fetch(lid + 960u, first, items, q0, slot, chunked);
    staged[lid] = v0;
    staged[lid + 64u] = v1;
    staged[lid + 128u] = v2;
    staged[lid + 192u] = v3;
    staged[lid + 256u] = v4;
    staged[lid + 320u] = v5;
    staged[lid + 384u] = v6;
    staged[lid + 448u] = v7;
    staged[lid + 512u] = v8;
    staged[lid + 576u] = v9;
    staged[lid + 640u] = v10;
    staged[lid + 704u] = v11;
    staged[lid + 768u] = v12;
    staged[lid + 832u] = v13;
    staged[lid + 896u] = v14;
    staged[lid + 960u] = v15;
}

// M s for the staged matrix at m (M = A forward, A^T in reverse).
fn apply_staged(m: u32, s: Col) -> Col {
    return apply(staged[m], staged[m + 1u], staged[m + 2u], staged[m + 3u], staged[m + 4u], staged[m + 5u],
                 staged[m + 6u], staged[m + 7u], staged[m + 8u], staged[m + 9u], staged[m + 10u],
                 staged[m + 11u], staged[m + 12u], staged[m + 13u], staged[m + 14u], staged[m + 15u], s);
}

// M s for the transition of step `step` read from memory (dh0's A_0).
fn apply_global(step: u32, s: Col) -> Col {
    let m = step * 16u;
    return apply(a_ld(m), a_ld(m + 1u), a_ld(m + 2u), a_ld(m + 3u), a_ld(m + 4u), a_ld(m + 5u), a_ld(m + 6u), a_ld(m + 7u), a_ld(m + 8u),
                 a_ld(m + 9u), a_ld(m + 10u), a_ld(m + 11u), a_ld(m + 12u), a_ld(m + 13u), a_ld(m + 14u), a_ld(m + 15u), s);
}

// M s with A's rows i = (ri_lo, ri_hi): forward A s (row dot products), reverse A^T s (the
// rows scaled by s's components and summed).
fn apply(r0l: vec4<f32>, r0h: vec4<f32>, r1l: vec4<f32>, r1h: vec4<f32>, r2l: vec4<f32>, r2h: vec4<f32>,
         r3l: vec4<f32>, r3h: vec4<f32>, r4l: vec4<f32>, r4h: vec4<f32>, r5l: vec4<f32>, r5h: vec4<f32>,
         r6l: vec4<f32>, r6h: vec4<f32>, r7l: vec4<f32>, r7h: vec4<f32>, s: Col) -> Col {
    if REVERSE {
        let lo = s.lo.x * r0l + s.lo.y * r1l + s.lo.z * r2l + s.lo.w * r3l
            + s.hi.x * r4l + s.hi.y * r5l + s.hi.z * r6l + s.hi.w * r7l;
        let hi = s.lo.x * r0h + s.lo.y * r1h + s.lo.z * r2h + s.lo.w * r3h
            + s.hi.x * r4h + s.hi.y * r5h + s.hi.z * r6h + s.hi.w * r7h;
        return Col(lo, hi);
    }
    let lo = vec4<f32>(dot(r0l, s.lo) + dot(r0h, s.hi), dot(r1l, s.lo) + dot(r1h, s.hi),
                       dot(r2l, s.lo) + dot(r2h, s.hi), dot(r3l, s.lo) + dot(r3h, s.hi));
    let hi = vec4<f32>(dot(r4l, s.lo) + dot(r4h, s.hi), dot(r5l, s.lo) + dot(r5h, s.hi),
                       dot(r6l, s.lo) + dot(r6h, s.hi), dot(r7l, s.lo) + dot(r7h, s.hi));
    return Col(lo, hi);
}

// Column j of the (8, V) block at element offset o of x.
fn load_x(o: u32, j: u32) -> Col {
    let b = o + j;
    return Col(vec4<f32>(x_ld(b), x_ld(b + V), x_ld(b + 2u * V), x_ld(b + 3u * V)),
               vec4<f32>(x_ld(b + 4u * V), x_ld(b + 5u * V), x_ld(b + 6u * V), x_ld(b + 7u * V)));
}

fn load_out(o: u32, j: u32) -> Col {
    let b = o + j;
    return Col(vec4<f32>(out[b], out[b + V], out[b + 2u * V], out[b + 3u * V]),
               vec4<f32>(out[b + 4u * V], out[b + 5u * V], out[b + 6u * V], out[b + 7u * V]));
}

fn store_out(o: u32, j: u32, s: Col) {
    let b = o + j;
    out[b] = s.lo.x;
    out[b + V] = s.lo.y;
    out[b + 2u * V] = s.lo.z;
    out[b + 3u * V] = s.lo.w;
    out[b + 4u * V] = s.hi.x;
    out[b + 5u * V] = s.hi.y;
    out[b + 6u * V] = s.hi.z;
    out[b + 7u * V] = s.hi.w;
}

fn add(s: Col, u: Col, w: f32) -> Col {
    return Col(s.lo + w * u.lo, s.hi + w * u.hi);
}

fn zero() -> Col {
    return Col(vec4<f32>(0.0), vec4<f32>(0.0));
}

// e_c, the unit column.
fn unit(c: u32) -> Col {
    let i = vec4<u32>(0u, 1u, 2u, 3u);
    return Col(select(vec4<f32>(0.0), vec4<f32>(1.0), i == vec4<u32>(c)),
               select(vec4<f32>(0.0), vec4<f32>(1.0), i + 4u == vec4<u32>(c)));
}

// The state before the first step of the scan order: h0 (or zero) forward, zero in reverse.
fn initial(lane: u32, j: u32) -> Col {
    if !REVERSE && p.has_h0 == 1u {
        let b = lane * K * V + j;
        return Col(vec4<f32>(h0_ld(b), h0_ld(b + V), h0_ld(b + 2u * V), h0_ld(b + 3u * V)),
                   vec4<f32>(h0_ld(b + 4u * V), h0_ld(b + 5u * V), h0_ld(b + 6u * V), h0_ld(b + 7u * V)));
    }
    return zero();
}

// dh0[:, j] = A_0^T G_0 (REVERSE; s holds G_0).
fn write_dh0(lane: u32, j: u32, s: Col) {
    let g = apply_global(step_index(lane, 0u), s);
    let b = lane * K * V + j;
    dh0[b] = g.lo.x;
    dh0[b + V] = g.lo.y;
    dh0[b + 2u * V] = g.lo.z;
    dh0[b + 3u * V] = g.lo.w;
    dh0[b + 4u * V] = g.hi.x;
    dh0[b + 5u * V] = g.hi.y;
    dh0[b + 6u * V] = g.hi.z;
    dh0[b + 7u * V] = g.hi.w;
}

// Four consecutive steps of one column: their x columns and their element offsets.
struct Steps4 {
    x0: Col,
    x1: Col,
    x2: Col,
    x3: Col,
    o0: u32,
    o1: u32,
    o2: u32,
    o3: u32,
}

// Steps q .. q + 3 (in scan order, clamped to the item's last step) of column j of item `it`.
fn load_steps4(it: Item, q: u32, j: u32) -> Steps4 {
    let last = it.end - it.start - 1u;
    let o0 = step_index(it.lane, time_at(it.start, it.end, min(q, last), REVERSE)) * K * V;
    let o1 = step_index(it.lane, time_at(it.start, it.end, min(q + 1u, last), REVERSE)) * K * V;
    let o2 = step_index(it.lane, time_at(it.start, it.end, min(q + 2u, last), REVERSE)) * K * V;
    let o3 = step_index(it.lane, time_at(it.start, it.end, min(q + 3u, last), REVERSE)) * K * V;
    return Steps4(load_x(o0, j), load_x(o1, j), load_x(o2, j), load_x(o3, j), o0, o1, o2, o3);
}

// The walk every staged pass shares: the workgroup's items (`items` of them in the pass, SLOT
// invocations each) walk their ranges block by block from their states s; column j adds
// x with weight `inject` (0 for a transition-product column) and stores into out when
// `store`. Every invocation of the workgroup runs the loop (the barriers), the idle ones
// (`busy` false) without touching memory. Returns the last state.
//
// Loads in flight: a block's transitions are staged with 16 independent loads an
// invocation, and x is software-pipelined 4 steps ahead of the updates (the first four steps
// before the first staging, each next one before the updates of the current), so the
// dependent chain never waits on a load issued just before it.
fn walk_staged(lid: u32, wg: u32, items: u32, slot: u32, chunked: bool, s0: Col, busy: bool, inject: f32,
               store: bool) -> Col {
    var s = s0;
    let per_wg = WG / slot;
    let first = wg * per_wg;
    let k = lid / slot;
    let j = min(lid % slot, V - 1u); // the x column read (weight 0 for the others)
    let it = item_at(min(first + k, items - 1u), chunked);
    let len = it.end - it.start;
    let mbase = k * slot * 16u;
    // Every item's length is at most this, uniform across the workgroup.
    let longest = select(p.launch.t_end - p.launch.t_begin, p.launch.chunk, chunked);
    var cur = Steps4(zero(), zero(), zero(), zero(), 0u, 0u, 0u, 0u);
    if busy {
        cur = load_steps4(it, 0u, j);
    }
    for (var q0 = 0u; q0 < longest; q0 += slot) {
        stage(lid, first, items, q0, slot, chunked);
        workgroupBarrier();
        if busy {
            for (var u = 0u; u < slot; u += 4u) {
                let q = q0 + u;
                let next = load_steps4(it, q + 4u, j);
                let m = mbase + u * 16u;
                if q < len {
                    s = add(apply_staged(m, s), cur.x0, inject);
                    if store {
                        store_out(cur.o0, j, s);
                    }
                }
                if q + 1u < len {
                    s = add(apply_staged(m + 16u, s), cur.x1, inject);
                    if store {
                        store_out(cur.o1, j, s);
                    }
                }
                if q + 2u < len {
                    s = add(apply_staged(m + 32u, s), cur.x2, inject);
                    if store {
                        store_out(cur.o2, j, s);
                    }
                }
                if q + 3u < len {
                    s = add(apply_staged(m + 48u, s), cur.x3, inject);
                    if store {
                        store_out(cur.o3, j, s);
                    }
                }
                cur = next;
            }
        }
        workgroupBarrier();
    }
    return s;
}

fn workgroup_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.x + wid.y * nwg.x;
}

@compute @workgroup_size(WG)
fn scan_lanes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let slot = slot_walk();
    let id = invocation(wid, nwg, lid);
    let lane = id / slot;
    let j = id % slot;
    let busy = lane < p.launch.lanes && j < V;
    var s = zero();
    if busy {
        s = initial(lane, j);
        // Resume from the previous segment's last state (out at t_begin - 1 forward, at
        // t_end in reverse) unless this segment starts the walk.
        if launch_resumes(p.launch, REVERSE) {
            s = load_out(step_index(lane, select(p.launch.t_begin - 1u, p.launch.t_end, REVERSE)) * K * V, j);
        }
    }
    s = walk_staged(lid, workgroup_index(wid, nwg), p.launch.lanes, slot, false, s, busy, 1.0, true);
    if busy && REVERSE && p.launch.t_begin == 0u {
        write_dh0(lane, j, s);
    }
}

fn side_index(lane: u32, c: u32, i: u32, col: u32) -> u32 {
    return ((lane * p.launch.chunks + c) * K + i) * (V + K) + col;
}

fn side_load(lane: u32, c: u32, col: u32) -> Col {
    return Col(vec4<f32>(side[side_index(lane, c, 0u, col)], side[side_index(lane, c, 1u, col)],
                         side[side_index(lane, c, 2u, col)], side[side_index(lane, c, 3u, col)]),
               vec4<f32>(side[side_index(lane, c, 4u, col)], side[side_index(lane, c, 5u, col)],
                         side[side_index(lane, c, 6u, col)], side[side_index(lane, c, 7u, col)]));
}

fn side_store(lane: u32, c: u32, col: u32, s: Col) {
    side[side_index(lane, c, 0u, col)] = s.lo.x;
    side[side_index(lane, c, 1u, col)] = s.lo.y;
    side[side_index(lane, c, 2u, col)] = s.lo.z;
    side[side_index(lane, c, 3u, col)] = s.lo.w;
    side[side_index(lane, c, 4u, col)] = s.hi.x;
    side[side_index(lane, c, 5u, col)] = s.hi.y;
    side[side_index(lane, c, 6u, col)] = s.hi.z;
    side[side_index(lane, c, 7u, col)] = s.hi.w;
}

@compute @workgroup_size(WG)
fn scan_chunk_reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
    let slot = slot_reduce();
    let id = invocation(wid, nwg, lid);
    let items = p.launch.lanes * p.launch.chunks;
    let item = id / slot;
    let col = id % slot;
    let busy = item < items && col < V + K;
    // Columns < V: the local state from zero; V + c: the chunk's product applied to e_c.
    var s = zero();
    if col >= V {
        s = unit(col - V);
    }
    let inject = select(0.0, 1.0, col < V);
    s = walk_staged(lid, workgroup_index(wid, nwg), items, slot, true, s, busy, inject, false);
    if busy {
        side_store(item / p.launch.chunks, item % p.launch.chunks, col, s);
    }
}

@compute @workgroup_size(WG)
fn scan_carries(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let slot = slot_walk();
    let id = invocation(wid, nwg, lid);
    let lane = id / slot;
    let j = id % slot;
    if lane >= p.launch.lanes || j >= V {
        return;
    }
    var carry = initial(lane, j);
    for (var q = 0u; q < p.launch.chunks; q++) {
        let c = select(q, p.launch.chunks - 1u - q, REVERSE);
        // carry <- P_c carry + S_c; the incoming carry replaces S_c (only this invocation
        // reads or writes column j of chunk c).
        var next = side_load(lane, c, j);
        next = add(next, side_load(lane, c, V), carry.lo.x);
        next = add(next, side_load(lane, c, V + 1u), carry.lo.y);
        next = add(next, side_load(lane, c, V + 2u), carry.lo.z);
        next = add(next, side_load(lane, c, V + 3u), carry.lo.w);
        next = add(next, side_load(lane, c, V + 4u), carry.hi.x);
        next = add(next, side_load(lane, c, V + 5u), carry.hi.y);
        next = add(next, side_load(lane, c, V + 6u), carry.hi.z);
        next = add(next, side_load(lane, c, V + 7u), carry.hi.w);
        side_store(lane, c, j, carry);
        carry = next;
    }
    if REVERSE {
        write_dh0(lane, j, carry);
    }
}

@compute @workgroup_size(WG)
fn scan_chunk_fixup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let slot = slot_walk();
    let id = invocation(wid, nwg, lid);
    let items = p.launch.lanes * p.launch.chunks;
    let item = id / slot;
    let j = id % slot;
    let busy = item < items && j < V;
    var s = zero();
    if busy {
        s = side_load(item / p.launch.chunks, item % p.launch.chunks, j);
    }
    s = walk_staged(lid, workgroup_index(wid, nwg), items, slot, true, s, busy, 1.0, true);
}
