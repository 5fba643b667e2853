// prelude: recurrence/launch.wgsl
// prelude: scan/affine_bindings.wgsl
// dtype: a scalar
// dtype: x scalar
// dtype: h0 scalar
// The inputs a, x, h0 are dtype slots (engine/kernel/dtype.rs): F32, F16 or BF16, read as f32;
// the outputs stay f32 (the engine narrows a half call's outputs afterwards, one word each).
// matrix_affine_scan: the affine recurrence H_t = A_t H_{t-1} + B_t, t = 0..T-1, H_{-1} = h0,
// per lane (b, n), specialised per (K, V) through override constants so every loop over K or
// V has a constant bound and unrolls. matrix_scan is its (2, 1) case; (K, V) = (1, 1), which
// linear_scan is, runs the channel kernels of scan/linear_walk.wgsl instead.
//
// Column split: the V columns of H evolve independently (H_t[:, j] = A_t H_{t-1}[:, j] +
// B_t[:, j]), so one invocation carries one column: K values in registers, not K * V.
//
// REVERSE = true runs the adjoint over the output gradients dH instead:
//   G_t = dH_t + A_{t+1}^T G_{t+1} (G_{T-1} = dH_{T-1}), out = G = dB, dh0 = A_0^T G_0.
//
// Entries (the launch and its header: recurrence/launch.wgsl):
//   scan_lanes          one invocation per (lane, column) walks [t_begin, t_end) of T
//                       (lane-sequential); a walk split into segments resumes from out.
//   scan_chunk_reduce   chunked pass 1: per (lane, chunk, column c < V + K) the chunk's local
//                       state from zero (c < V) and the chunk's transition applied to the unit
//                       vector e_{c-V} (c >= V): a column of the chunk's product matrix P.
//   scan_carries        chunked pass 2: per (lane, column < V) walks the chunks in scan order,
//                       carry = P_c carry + S_c, storing each chunk's incoming carry in place
//                       of S_c; in REVERSE also writes dh0.
//   scan_chunk_fixup    chunked pass 3: per (lane, chunk, column < V) reruns the chunk from its
//                       incoming carry and writes out. (A rerun instead of adding P-prefix
//                       times carry keeps the per-step cost at K^2 instead of K^3.)
// Accumulation is f32. Indices: lane = b * N + n, step(b, t, n) = (b * T + t) * N + n.

override K: u32 = 2u;
override V: u32 = 1u;
override REVERSE: bool = false;

const KMAX: u32 = 16u;

// Params and the bindings: scan/affine_bindings.wgsl.

fn step_index(lane: u32, t: u32) -> u32 {
    let b = lane / p.n;
    let n = lane % p.n;
    return (b * p.launch.t_len + t) * p.n + n;
}

// s <- M s, where M is A_{ta} (forward) or A_{ta}^T (reverse).
fn transition(s: ptr<function, array<f32, KMAX>>, lane: u32, ta: u32) {
    let base = step_index(lane, ta) * K * K;
    var r: array<f32, KMAX>;
    for (var i = 0u; i < K; i++) {
        var acc = 0.0;
        for (var l = 0u; l < K; l++) {
            var m: f32;
            if REVERSE {
                m = a_ld(base + l * K + i);
            } else {
                m = a_ld(base + i * K + l);
            }
            acc += m * (*s)[l];
        }
        r[i] = acc;
    }
    *s = r;
}

// One step at time t on the state s: forward s <- A_t s; reverse s <- A_{t+1}^T s, or zero at
// t = T-1 where nothing comes from above. With `inject`, column j of x at t is added.
fn step(s: ptr<function, array<f32, KMAX>>, lane: u32, t: u32, j: u32, inject: bool) {
    if REVERSE {
        if t + 1u < p.launch.t_len {
            transition(s, lane, t + 1u);
        } else {
            for (var i = 0u; i < K; i++) {
                (*s)[i] = 0.0;
            }
        }
    } else {
        transition(s, lane, t);
    }
    if inject {
        let xb = step_index(lane, t) * K * V;
        for (var i = 0u; i < K; i++) {
            (*s)[i] += x_ld(xb + i * V + j);
        }
    }
}

fn store(s: ptr<function, array<f32, KMAX>>, lane: u32, t: u32, j: u32) {
    let ob = step_index(lane, t) * K * V;
    for (var i = 0u; i < K; i++) {
        out[ob + i * V + j] = (*s)[i];
    }
}

// The state before the first step of the scan order: h0 (or zero) forward, zero in reverse.
fn initial(lane: u32, j: u32) -> array<f32, KMAX> {
    var s: array<f32, KMAX>;
    if !REVERSE && p.has_h0 == 1u {
        for (var i = 0u; i < K; i++) {
            s[i] = h0_ld(lane * K * V + i * V + j);
        }
    }
    return s;
}

// dh0[:, j] = A_0^T G_0 (REVERSE only; s holds G_0).
fn write_dh0(s: ptr<function, array<f32, KMAX>>, lane: u32, j: u32) {
    transition(s, lane, 0u);
    for (var i = 0u; i < K; i++) {
        dh0[lane * K * V + i * V + j] = (*s)[i];
    }
}

// Walks column j of lane through [start, end) of T in scan order from s, writing out.
fn walk(s: ptr<function, array<f32, KMAX>>, lane: u32, j: u32, start: u32, end: u32) {
    for (var q = 0u; q < end - start; q++) {
        let t = time_at(start, end, q, REVERSE);
        step(s, lane, t, j, true);
        store(s, lane, t, j);
    }
}

@compute @workgroup_size(WG)
fn scan_lanes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let id = invocation(wid, nwg, lid);
    if id >= p.launch.lanes * V {
        return;
    }
    let lane = id / V;
    let j = id % V;
    // Resume from the previous segment's last state (out at t_begin - 1 forward, at t_end
    // in reverse) unless this segment starts the walk.
    var s = initial(lane, j);
    let resume = launch_resumes(p.launch, REVERSE);
    if resume {
        let ob = step_index(lane, select(p.launch.t_begin - 1u, p.launch.t_end, REVERSE)) * K * V;
        for (var i = 0u; i < K; i++) {
            s[i] = out[ob + i * V + j];
        }
    }
    walk(&s, lane, j, p.launch.t_begin, p.launch.t_end);
    if REVERSE && p.launch.t_begin == 0u {
        write_dh0(&s, lane, j);
    }
}

fn side_index(lane: u32, c: u32, i: u32, col: u32) -> u32 {
    return ((lane * p.launch.chunks + c) * K + i) * (V + K) + col;
}

@compute @workgroup_size(WG)
fn scan_chunk_reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
    let id = invocation(wid, nwg, lid);
    if id >= p.launch.lanes * p.launch.chunks * (V + K) {
        return;
    }
    let col = id % (V + K);
    let c = (id / (V + K)) % p.launch.chunks;
    let lane = id / ((V + K) * p.launch.chunks);
    let start = chunk_start(p.launch, c);
    let end = chunk_end(p.launch, c);
    var s: array<f32, KMAX>;
    let inject = col < V;
    if !inject {
        s[col - V] = 1.0;
    }
    for (var q = 0u; q < end - start; q++) {
        step(&s, lane, time_at(start, end, q, REVERSE), col, inject);
    }
    for (var i = 0u; i < K; i++) {
        side[side_index(lane, c, i, col)] = s[i];
    }
}

@compute @workgroup_size(WG)
fn scan_carries(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let id = invocation(wid, nwg, lid);
    if id >= p.launch.lanes * V {
        return;
    }
    let lane = id / V;
    let j = id % V;
    var carry = initial(lane, j);
    for (var q = 0u; q < p.launch.chunks; q++) {
        var c = q;
        if REVERSE {
            c = p.launch.chunks - 1u - q;
        }
        // carry <- P_c carry + S_c; the incoming carry replaces S_c (only this invocation
        // reads or writes column j of chunk c).
        var next: array<f32, KMAX>;
        for (var i = 0u; i < K; i++) {
            var acc = side[side_index(lane, c, i, j)];
            for (var l = 0u; l < K; l++) {
                acc += side[side_index(lane, c, i, V + l)] * carry[l];
            }
            next[i] = acc;
        }
        for (var i = 0u; i < K; i++) {
            side[side_index(lane, c, i, j)] = carry[i];
        }
        carry = next;
    }
    if REVERSE {
        write_dh0(&carry, lane, j);
    }
}

@compute @workgroup_size(WG)
fn scan_chunk_fixup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let id = invocation(wid, nwg, lid);
    if id >= p.launch.lanes * p.launch.chunks * V {
        return;
    }
    let j = id % V;
    let c = (id / V) % p.launch.chunks;
    let lane = id / (V * p.launch.chunks);
    let start = chunk_start(p.launch, c);
    let end = chunk_end(p.launch, c);
    var s: array<f32, KMAX>;
    for (var i = 0u; i < K; i++) {
        s[i] = side[side_index(lane, c, i, j)];
    }
    walk(&s, lane, j, start, end);
}
