// prelude: mixer/math.wgsl
// prelude: mixer/givens.wgsl
// The angle-fused scan (forward): h_t = lambda_t G_t h_{t-1} + (1 - lambda_t) v_t per block,
// h_{-1} = 0, each step's transition lambda_t G_t built from its angles in registers
// (givens.wgsl) and applied in O(K): no per-step K x K matrix anywhere.
//
// Entries (invocation index = (wid.x + wid.y * nwg.x) * 64 + lid):
//   givens_scan          lanes: one invocation per lane (b, n) walks [t_begin, t_end) of T; a
//                        later segment resumes from the h it stored at t_begin - 1.
//   givens_chunk_reduce  chunked pass 1, per (lane, chunk, column c <= K): column c < K of the
//                        chunk's transition product (the chunk's steps applied to e_c without
//                        injection), c = K the chunk's local state from zero.
//   givens_carries       chunked pass 2, per lane: walks the chunks, carry = P carry + S,
//                        storing each chunk's incoming carry in place of its S.
//   givens_chunk_fixup   chunked pass 3, per (lane, chunk): reruns the chunk from its carry and
//                        writes h.
// The chunked passes trade K + 1 walks of a chunk for a walk of T / chunks steps: more
// invocations when there are few lanes. side holds one K x K product per chunk, not per step.

struct Params {
    lanes: u32,   // B * N
    n: u32,       // N
    t_len: u32,   // T
    t_begin: u32, // givens_scan: the segment of T this dispatch walks
    t_end: u32,
    chunk: u32,   // chunked: steps per chunk
    chunks: u32,  // ceil(T / chunk)
}

@group(0) @binding(0) var<uniform> p: Params;
// binding 1: pre (B, T, 2D), declared in givens.wgsl
@group(0) @binding(2) var<storage, read_write> h: array<f32>;    // (B, T, D)
@group(0) @binding(3) var<storage, read_write> side: array<f32>; // chunked: (lanes, chunks, K + 1, K)

// Walks steps [t0, t1) of lane (b, n) from state s, writing h.
fn walk(b: u32, n: u32, t0: u32, t1: u32, s: ptr<function, array<f32, KMAX>>) {
    let d = p.n * K;
    for (var t = t0; t < t1; t++) {
        let row = b * p.t_len + t;
        var st = load_step(row, n, p.n);
        givens_apply(s, &st);
        for (var i = 0u; i < K; i++) {
            (*s)[i] = st.lambda * (*s)[i] + (1.0 - st.lambda) * st.v[i];
            h[row * d + n * K + i] = (*s)[i];
        }
    }
}

@compute @workgroup_size(64)
fn givens_scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.lanes {
        return;
    }
    let b = lane / p.n;
    let n = lane % p.n;
    var s: array<f32, KMAX>;
    zero(&s);
    if p.t_begin > 0u {
        let prev = (b * p.t_len + p.t_begin - 1u) * p.n * K + n * K;
        for (var i = 0u; i < K; i++) {
            s[i] = h[prev + i];
        }
    }
    walk(b, n, p.t_begin, p.t_end, &s);
}

// side offset of column c of chunk `ch` of `lane`.
fn side_at(lane: u32, ch: u32, c: u32) -> u32 {
    return ((lane * p.chunks + ch) * (K + 1u) + c) * K;
}

@compute @workgroup_size(64)
fn givens_chunk_reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    let idx = invocation(wid, nwg, lid);
    if idx >= p.lanes * p.chunks * (K + 1u) {
        return;
    }
    let c = idx % (K + 1u);
    let ch = (idx / (K + 1u)) % p.chunks;
    let lane = idx / ((K + 1u) * p.chunks);
    let b = lane / p.n;
    let n = lane % p.n;
    var s: array<f32, KMAX>;
    zero(&s);
    if c < K {
        s[c] = 1.0;
    }
    let t1 = min((ch + 1u) * p.chunk, p.t_len);
    for (var t = ch * p.chunk; t < t1; t++) {
        var st = load_step(b * p.t_len + t, n, p.n);
        givens_apply(&s, &st);
        for (var i = 0u; i < K; i++) {
            var inject = 0.0;
            if c == K {
                inject = (1.0 - st.lambda) * st.v[i];
            }
            s[i] = st.lambda * s[i] + inject;
        }
    }
    let o = side_at(lane, ch, c);
    for (var i = 0u; i < K; i++) {
        side[o + i] = s[i];
    }
}

@compute @workgroup_size(64)
fn givens_carries(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.lanes {
        return;
    }
    var carry: array<f32, KMAX>;
    zero(&carry);
    for (var ch = 0u; ch < p.chunks; ch++) {
        let so = side_at(lane, ch, K);
        var next: array<f32, KMAX>;
        for (var i = 0u; i < K; i++) {
            next[i] = side[so + i];
            side[so + i] = carry[i];
        }
        for (var c = 0u; c < K; c++) {
            let po = side_at(lane, ch, c);
            for (var i = 0u; i < K; i++) {
                next[i] += side[po + i] * carry[c];
            }
        }
        carry = next;
    }
}

@compute @workgroup_size(64)
fn givens_chunk_fixup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
    let idx = invocation(wid, nwg, lid);
    if idx >= p.lanes * p.chunks {
        return;
    }
    let ch = idx % p.chunks;
    let lane = idx / p.chunks;
    var s: array<f32, KMAX>;
    let so = side_at(lane, ch, K);
    for (var i = 0u; i < K; i++) {
        s[i] = side[so + i];
    }
    walk(lane / p.n, lane % p.n, ch * p.chunk, min((ch + 1u) * p.chunk, p.t_len), &s);
}
