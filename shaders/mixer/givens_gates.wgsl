// prelude: recurrence/launch.wgsl
// prelude: mixer/math.wgsl
// prelude: mixer/givens.wgsl
// prelude: mixer/gate_params.wgsl
// The materialising path of the rotation-family mixers: each step's A = lambda G (K x K) and
// B = (1 - lambda) v (K, 1), as inputs of matrix_affine_scan (or matrix_scan when K = 2).
// Column c of G is G e_c. One invocation per (b, t, n); the uniform: mixer/gate_params.wgsl.

// binding 1: pre (B, T, 2D), declared in givens.wgsl
@group(0) @binding(2) var<storage, read_write> am: array<f32>;  // (B, T, N, K, K)
@group(0) @binding(3) var<storage, read_write> bm: array<f32>;  // (B, T, N, K, 1)

@compute @workgroup_size(WG)
fn givens_gates(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let i = invocation(wid, nwg, lid);
    if i >= p.total {
        return;
    }
    var st = load_step(i / p.n, i % p.n, p.n);
    for (var c = 0u; c < K; c++) {
        var u = givens_column(&st, c);
        for (var r = 0u; r < K; r++) {
            am[(i * K + r) * K + c] = st.lambda * u[r];
        }
    }
    for (var r = 0u; r < K; r++) {
        bm[i * K + r] = (1.0 - st.lambda) * st.v[r];
    }
}
