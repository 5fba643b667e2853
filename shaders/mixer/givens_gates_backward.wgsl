// prelude: recurrence/launch.wgsl
// prelude: mixer/math.wgsl
// prelude: mixer/givens.wgsl
// prelude: mixer/givens_backward.wgsl
// prelude: mixer/gate_params.wgsl
// Backward of givens_gates.wgsl: dA (B, T, N, K, K), dB (B, T, N, K, 1) -> d pre (B, T, 2D).
//   dlambda = sum(dA * G) - dB . v,  dv = (1 - lambda) dB,
//   dtheta = sum over columns c of givens_vjp(G e_c, lambda dA[:, c]).
// One invocation per (b, t, n); the uniform: mixer/gate_params.wgsl.

// binding 1: pre (B, T, 2D), declared in givens.wgsl
@group(0) @binding(2) var<storage, read> da: array<f32>;         // (B, T, N, K, K)
@group(0) @binding(3) var<storage, read> db: array<f32>;         // (B, T, N, K, 1)
// binding 4: dpre (B, T, 2D), declared in givens_backward.wgsl

@compute @workgroup_size(WG)
fn givens_gates_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
    let i = invocation(wid, nwg, lid);
    if i >= p.total {
        return;
    }
    var st = load_step(i / p.n, i % p.n, p.n);
    var dlambda = 0.0;
    var dtheta: array<f32, KMAX>;
    zero(&dtheta);
    for (var c = 0u; c < K; c++) {
        var u = givens_column(&st, c);
        var w: array<f32, KMAX>;
        for (var r = 0u; r < K; r++) {
            let g = da[(i * K + r) * K + c];
            dlambda += g * u[r];
            w[r] = st.lambda * g;
        }
        givens_vjp(&u, &w, &st, &dtheta);
    }
    var dv: array<f32, KMAX>;
    for (var r = 0u; r < K; r++) {
        dlambda -= db[i * K + r] * st.v[r];
        dv[r] = (1.0 - st.lambda) * db[i * K + r];
    }
    store_step_backward(i / p.n, i % p.n, p.n, &st, &dv, dlambda, &dtheta);
}
