// prelude: scan/launch.wgsl
// parallel_scan_log: the minGRU scan in log space, channel-tiled (one invocation per (b, d)
// channel; a workgroup owns 64 consecutive channels of one batch row).
//
// Forward: with z_{-1} = lv_0 (the log initial state), for t = 0..T-1
//   z_t = logaddexp(lc_t + z_{t-1}, lv_{t+1}),  h_t = exp(z_t),
// i.e. h_t = exp(a*_t + logcumsumexp(lv - a*)_t) with the running cumulative sum a* rebased
// into the carried log state at every step, and each log-add max-shifted (online
// log-sum-exp). No sentinel is needed: the state starts at lv_0. Rebasing matters: a raw
// running cumsum reaches |a*| ~ 10^3 at long T and its f32 rounding alone breaks the gate.
//
// REVERSE = true: the adjoint over dL/dh = g, in linear space (every factor is exp of a log
// coefficient, at most 1 for minGRU's negative log coefficients, so it cannot blow up):
//   G_t = g_t + exp(lc_{t+1}) G_{t+1},                  G_{T-1} = g_{T-1}
//   d lc_t = G_t exp(lc_t) h_{t-1}   (h_{-1} = exp(lv_0))
//   d lv_{t+1} = G_t exp(lv_{t+1}),  d lv_0 = exp(lc_0) G_0 exp(lv_0)
// Each exp argument is a log coefficient, a log value or their sum with log h: bounded by the
// forward's own values, so the gradient is finite whenever the forward is.
//
// Entries: scan_lanes (lane-sequential), and the chunked passes scan_chunk_reduce (per
// (lane, chunk): sum of the chunk's log coefficients and its local state from empty),
// scan_carries (per lane: walks the chunks, storing each chunk's incoming carry) and
// scan_chunk_fixup (per (lane, chunk): reruns the chunk from its carry and writes out).
// Indices: lane = b * D + d; lc, h, g at (b * T + t) * D + d; lv at (b * (T + 1) + t) * D + d.

override REVERSE: bool = false;

struct Params {
    launch: Launch, // lanes = B * D (scan/launch.wgsl)
    d: u32,         // D
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> lc: array<f32>;         // (B, T, D) log coefficients
@group(0) @binding(2) var<storage, read> lv: array<f32>;         // (B, T + 1, D) log values, lv_0 = log h0
@group(0) @binding(3) var<storage, read> g: array<f32>;          // (B, T, D) dL/dh, read when REVERSE
@group(0) @binding(4) var<storage, read> h: array<f32>;          // (B, T, D) forward output, read when REVERSE
@group(0) @binding(5) var<storage, read_write> out: array<f32>;  // (B, T, D): h, or d lc when REVERSE
@group(0) @binding(6) var<storage, read_write> out2: array<f32>; // (B, T + 1, D): d lv when REVERSE
@group(0) @binding(7) var<storage, read_write> side: array<f32>; // chunked: (lanes, chunks, 2) scratch; segmented lanes: (lanes,) state

fn at(lane: u32, t: u32) -> u32 {
    return ((lane / p.d) * p.launch.t_len + t) * p.d + lane % p.d;
}

fn at_lv(lane: u32, t: u32) -> u32 {
    return ((lane / p.d) * (p.launch.t_len + 1u) + t) * p.d + lane % p.d;
}

// log(exp(u) + exp(w)), shifted by the larger so exp never overflows.
fn logaddexp(u: f32, w: f32) -> f32 {
    let m = max(u, w);
    return m + log(1.0 + exp(min(u, w) - m));
}

// The log coefficient of the transition that step t applies: lc_t forward, lc_{t+1} reverse.
fn transition_log(lane: u32, t: u32) -> f32 {
    if REVERSE {
        return lc[at(lane, t + 1u)];
    }
    return lc[at(lane, t)];
}

// One step on a nonempty state s: forward the log state z, reverse the linear adjoint G.
fn step(s: f32, lane: u32, t: u32) -> f32 {
    if REVERSE {
        var carried = 0.0;
        if t + 1u < p.launch.t_len {
            carried = exp(transition_log(lane, t)) * s;
        }
        return carried + g[at(lane, t)];
    }
    return logaddexp(transition_log(lane, t) + s, lv[at_lv(lane, t + 1u)]);
}

// The first step from an empty state (the chunk-local scan of pass 1).
fn first(lane: u32, t: u32) -> f32 {
    if REVERSE {
        return g[at(lane, t)];
    }
    return lv[at_lv(lane, t + 1u)];
}

// Writes step t's output from the state s after it.
fn store(s: f32, lane: u32, t: u32) {
    if !REVERSE {
        out[at(lane, t)] = exp(s);
        return;
    }
    var h_prev: f32;
    if t == 0u {
        h_prev = exp(lv[at_lv(lane, 0u)]);
    } else {
        h_prev = h[at(lane, t - 1u)];
    }
    let c = exp(lc[at(lane, t)]);
    out[at(lane, t)] = s * c * h_prev;
    out2[at_lv(lane, t + 1u)] = s * exp(lv[at_lv(lane, t + 1u)]);
    if t == 0u {
        out2[at_lv(lane, 0u)] = c * s * h_prev;
    }
}

fn initial(lane: u32) -> f32 {
    if REVERSE {
        return 0.0;
    }
    return lv[at_lv(lane, 0u)];
}

// Walks lane through [start, end) of T in scan order from the state s, writing the outputs;
// returns the last state.
fn walk(s: f32, lane: u32, start: u32, end: u32) -> f32 {
    var x = s;
    for (var q = 0u; q < end - start; q++) {
        let t = time_at(start, end, q, REVERSE);
        x = step(x, lane, t);
        store(x, lane, t);
    }
    return x;
}

@compute @workgroup_size(WG)
fn scan_lanes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.launch.lanes {
        return;
    }
    // A walk split into segments keeps its state in side[lane] between them.
    var s = initial(lane);
    if launch_resumes(p.launch, REVERSE) {
        s = side[lane];
    }
    s = walk(s, lane, p.launch.t_begin, p.launch.t_end);
    if p.launch.t_end - p.launch.t_begin < p.launch.t_len {
        side[lane] = s;
    }
}

@compute @workgroup_size(WG)
fn scan_chunk_reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
    let id = invocation(wid, nwg, lid);
    if id >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let lane = id / p.launch.chunks;
    let c = id % p.launch.chunks;
    let start = chunk_start(p.launch, c);
    let end = chunk_end(p.launch, c);
    // The chunk's transition in log space: the sum of the log coefficients its steps apply
    // (in reverse the last step's transition is absent at t = T-1; its carry is zero then).
    var log_p = 0.0;
    var s = first(lane, time_at(start, end, 0u, REVERSE));
    if REVERSE {
        if end < p.launch.t_len {
            log_p = transition_log(lane, end - 1u);
        }
    } else {
        log_p = transition_log(lane, start);
    }
    for (var q = 1u; q < end - start; q++) {
        let t = time_at(start, end, q, REVERSE);
        log_p += transition_log(lane, t);
        s = step(s, lane, t);
    }
    side[id * 2u] = log_p;
    side[id * 2u + 1u] = s;
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
        var c = q;
        if REVERSE {
            c = p.launch.chunks - 1u - q;
        }
        let slot = (lane * p.launch.chunks + c) * 2u;
        let log_p = side[slot];
        let local = side[slot + 1u];
        side[slot] = carry;
        if REVERSE {
            carry = exp(log_p) * carry + local;
        } else {
            carry = logaddexp(log_p + carry, local);
        }
    }
}

@compute @workgroup_size(WG)
fn scan_chunk_fixup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let id = invocation(wid, nwg, lid);
    if id >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let lane = id / p.launch.chunks;
    let c = id % p.launch.chunks;
    let start = chunk_start(p.launch, c);
    let end = chunk_end(p.launch, c);
    _ = walk(side[id * 2u], lane, start, end);
}
