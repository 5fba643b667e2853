// prelude: mixer/math.wgsl
// prelude: mixer/givens.wgsl
// prelude: mixer/givens_grad.wgsl
// The angle-fused scan (backward): a reverse walk that recomputes each step from the stored
// state h_{t-1} (the forward's own output, the C = 1 anchor) instead of reversing the
// recurrence by dividing by lambda, whose error grows like lambda^-T at strong decay.
//   g_t = dh_t + lambda_{t+1} G_{t+1}^T g_{t+1}           (the carry, g_T = 0)
//   u = G_t h_{t-1}:  dv_t = (1 - lambda_t) g_t,  dlambda_t = g_t . (u - v_t),
//   (dtheta_t, carry) from givens_vjp(u, lambda_t g_t).
// One invocation per lane (b, n) walks [t_begin, t_end) of T backwards; across segments the
// carry travels through `carry`.

struct Params {
    lanes: u32,   // B * N
    n: u32,       // N
    t_len: u32,   // T
    t_begin: u32,
    t_end: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
// binding 1: pre (B, T, 2D), declared in givens.wgsl
@group(0) @binding(2) var<storage, read> h: array<f32>;           // (B, T, D), the forward output
@group(0) @binding(3) var<storage, read> dh: array<f32>;          // (B, T, D)
// binding 4: dpre (B, T, 2D), declared in givens_grad.wgsl
@group(0) @binding(5) var<storage, read_write> carry: array<f32>; // (B, N, K) between segments

@compute @workgroup_size(64)
fn givens_scan_grad(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.lanes {
        return;
    }
    let b = lane / p.n;
    let n = lane % p.n;
    let d = p.n * K;
    var w: array<f32, KMAX>; // lambda_{t+1} G_{t+1}^T g_{t+1}
    if p.t_end < p.t_len {
        for (var i = 0u; i < K; i++) {
            w[i] = carry[lane * K + i];
        }
    }
    for (var t = p.t_end; t > p.t_begin; t--) {
        let row = b * p.t_len + t - 1u;
        var st = load_step(row, n, p.n);
        var u: array<f32, KMAX>;
        if t > 1u {
            for (var i = 0u; i < K; i++) {
                u[i] = h[(row - 1u) * d + n * K + i];
            }
        }
        givens_apply(&u, &st);
        var dv: array<f32, KMAX>;
        var dlambda = 0.0;
        for (var i = 0u; i < K; i++) {
            let g = dh[row * d + n * K + i] + w[i];
            dv[i] = (1.0 - st.lambda) * g;
            dlambda += g * (u[i] - st.v[i]);
            w[i] = st.lambda * g;
        }
        var dtheta: array<f32, KMAX>;
        givens_vjp(&u, &w, &st, &dtheta);
        store_step_grad(row, n, p.n, &st, &dv, dlambda, &dtheta);
    }
    for (var i = 0u; i < K; i++) {
        carry[lane * K + i] = w[i];
    }
}
