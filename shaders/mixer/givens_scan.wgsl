// prelude: recurrence/launch.wgsl
// prelude: mixer/math.wgsl
// prelude: mixer/givens.wgsl
// prelude: mixer/givens_walk.wgsl
// The angle-fused scan (forward): h_t = lambda_t G_t h_{t-1} + (1 - lambda_t) v_t per block,
// h_{-1} = 0, each step's transition lambda_t G_t built from its angles in registers
// (givens.wgsl) and applied in O(K): no per-step K x K matrix anywhere.
//
// Entries (the launch and its header: recurrence/launch.wgsl):
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

// binding 0: p, binding 2: side, declared in givens_walk.wgsl; side is (lanes, chunks, K + 1, K)
// when chunked, unused by the lane walk (a later segment resumes from h)
// binding 1: pre (B, T, 2D), declared in givens.wgsl
@group(0) @binding(3) var<storage, read_write> h: array<f32>; // (B, T, D)

// Walks steps [t0, t1) of lane (b, n) from state s, writing h.
fn walk(b: u32, n: u32, t0: u32, t1: u32, s: ptr<function, array<f32, KMAX>>) {
    let d = p.n * K;
    for (var t = t0; t < t1; t++) {
        let row = b * p.launch.t_len + t;
        var st = load_step(row, n, p.n);
        givens_apply(s, &st);
        for (var i = 0u; i < K; i++) {
            (*s)[i] = st.lambda * (*s)[i] + (1.0 - st.lambda) * st.v[i];
            h[row * d + n * K + i] = (*s)[i];
        }
    }
}

@compute @workgroup_size(WG)
fn givens_scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.launch.lanes {
        return;
    }
    let b = lane / p.n;
    let n = lane % p.n;
    var s: array<f32, KMAX>;
    zero(&s);
    if launch_resumes(p.launch, false) {
        let prev = (b * p.launch.t_len + p.launch.t_begin - 1u) * p.n * K + n * K;
        for (var i = 0u; i < K; i++) {
            s[i] = h[prev + i];
        }
    }
    walk(b, n, p.launch.t_begin, p.launch.t_end, &s);
}

@compute @workgroup_size(WG)
fn givens_chunk_reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    let idx = invocation(wid, nwg, lid);
    if idx >= p.launch.lanes * p.launch.chunks * (K + 1u) {
        return;
    }
    let c = idx % (K + 1u);
    let ch = (idx / (K + 1u)) % p.launch.chunks;
    let lane = idx / ((K + 1u) * p.launch.chunks);
    let b = lane / p.n;
    let n = lane % p.n;
    var s: array<f32, KMAX>;
    zero(&s);
    if c < K {
        s[c] = 1.0;
    }
    let t1 = chunk_end(p.launch, ch);
    for (var t = chunk_start(p.launch, ch); t < t1; t++) {
        var st = load_step(b * p.launch.t_len + t, n, p.n);
        givens_apply(&s, &st);
        for (var i = 0u; i < K; i++) {
            var inject = 0.0;
            if c == K {
                inject = (1.0 - st.lambda) * st.v[i];
            }
            s[i] = st.lambda * s[i] + inject;
        }
    }
    side_store(lane, ch, c, &s);
}

@compute @workgroup_size(WG)
fn givens_carries(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.launch.lanes {
        return;
    }
    walk_carries(lane, false);
}

@compute @workgroup_size(WG)
fn givens_chunk_fixup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
    let idx = invocation(wid, nwg, lid);
    if idx >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let ch = idx % p.launch.chunks;
    let lane = idx / p.launch.chunks;
    var s = side_load(lane, ch, K);
    walk(lane / p.n, lane % p.n, chunk_start(p.launch, ch), chunk_end(p.launch, ch), &s);
}
