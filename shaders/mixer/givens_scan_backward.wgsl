// prelude: recurrence/launch.wgsl
// prelude: mixer/math.wgsl
// prelude: mixer/givens.wgsl
// prelude: mixer/givens_backward.wgsl
// prelude: mixer/givens_walk.wgsl
// The angle-fused scan (backward): a reverse walk that recomputes each step from the stored
// state h_{t-1} (the forward's own output, the C = 1 anchor) instead of reversing the
// recurrence by dividing by lambda, whose error grows like lambda^-T at strong decay. With
// M_t = lambda_t G_t and the carry w_t = M_{t+1}^T g_{t+1} (w_{T-1} = 0):
//   g_t = dh_t + w_t,   w_{t-1} = M_t^T g_t
//   u = G_t h_{t-1}:  dv_t = (1 - lambda_t) g_t,  dlambda_t = g_t . (u - v_t),
//   dtheta_t from givens_vjp(u, lambda_t g_t), which also leaves M_t^T g_t.
//
// Entries (the launch and its header: recurrence/launch.wgsl):
//   givens_scan_backward          lanes: one invocation per lane (b, n) walks [t_begin, t_end)
//                             backwards; across segments the carry travels through side.
//   givens_chunk_reduce_backward  chunked pass 1, per (lane, chunk, column c <= K), in reverse:
//                             column c < K of the chunk's transposed product (M^T's applied
//                             to e_c), c = K the chunk's local carry from zero with dh injected.
//   givens_carries_backward       chunked pass 2, per lane: walks the chunks backwards,
//                             w = Q w + R, storing each chunk's incoming carry in place of R.
//   givens_chunk_fixup_backward   chunked pass 3, per (lane, chunk): the lanes walk over the chunk
//                             from its incoming carry, writing d pre.

// binding 0: p, binding 2: side, declared in givens_walk.wgsl; side is (lanes, chunks, K + 1, K)
// when chunked, the (B, N, K) carry between the lane walk's segments
// binding 1: pre (B, T, 2D), declared in givens.wgsl
@group(0) @binding(3) var<storage, read> h: array<f32>;  // (B, T, D), the forward output
// binding 4: dpre (B, T, 2D), declared in givens_backward.wgsl
@group(0) @binding(5) var<storage, read> dh: array<f32>; // (B, T, D)

// Walks steps [t0, t1) of lane (b, n) backwards from the carry w, writing d pre.
fn walk_back(b: u32, n: u32, t0: u32, t1: u32, w: ptr<function, array<f32, KMAX>>) {
    let d = p.n * K;
    for (var t = t1; t > t0; t--) {
        let row = b * p.launch.t_len + t - 1u;
        var st = load_step(row, n, p.n);
        var u: array<f32, KMAX>;
        zero(&u);
        if t > 1u {
            for (var i = 0u; i < K; i++) {
                u[i] = h[(row - 1u) * d + n * K + i];
            }
        }
        givens_apply(&u, &st);
        var dv: array<f32, KMAX>;
        var dlambda = 0.0;
        for (var i = 0u; i < K; i++) {
            let g = dh[row * d + n * K + i] + (*w)[i];
            dv[i] = (1.0 - st.lambda) * g;
            dlambda += g * (u[i] - st.v[i]);
            (*w)[i] = st.lambda * g;
        }
        var dtheta: array<f32, KMAX>;
        zero(&dtheta);
        givens_vjp(&u, w, &st, &dtheta);
        store_step_backward(row, n, p.n, &st, &dv, dlambda, &dtheta);
    }
}

@compute @workgroup_size(WG)
fn givens_scan_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.launch.lanes {
        return;
    }
    var w: array<f32, KMAX>;
    zero(&w);
    if launch_resumes(p.launch, true) {
        for (var i = 0u; i < K; i++) {
            w[i] = side[lane * K + i];
        }
    }
    walk_back(lane / p.n, lane % p.n, p.launch.t_begin, p.launch.t_end, &w);
    for (var i = 0u; i < K; i++) {
        side[lane * K + i] = w[i];
    }
}

@compute @workgroup_size(WG)
fn givens_chunk_reduce_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
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
    let d = p.n * K;
    var w: array<f32, KMAX>;
    zero(&w);
    if c < K {
        w[c] = 1.0;
    }
    let t0 = chunk_start(p.launch, ch);
    for (var t = chunk_end(p.launch, ch); t > t0; t--) {
        let row = b * p.launch.t_len + t - 1u;
        var st = load_step(row, n, p.n);
        for (var i = 0u; i < K; i++) {
            if c == K {
                w[i] += dh[row * d + n * K + i];
            }
            w[i] *= st.lambda;
        }
        givens_apply_t(&w, &st);
    }
    side_store(lane, ch, c, &w);
}

@compute @workgroup_size(WG)
fn givens_carries_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                           @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.launch.lanes {
        return;
    }
    walk_carries(lane, true);
}

@compute @workgroup_size(WG)
fn givens_chunk_fixup_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                               @builtin(local_invocation_index) lid: u32) {
    let idx = invocation(wid, nwg, lid);
    if idx >= p.launch.lanes * p.launch.chunks {
        return;
    }
    let ch = idx % p.launch.chunks;
    let lane = idx / p.launch.chunks;
    var w = side_load(lane, ch, K);
    walk_back(lane / p.n, lane % p.n, chunk_start(p.launch, ch), chunk_end(p.launch, ch), &w);
}
