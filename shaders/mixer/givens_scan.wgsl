// prelude: mixer/math.wgsl
// prelude: mixer/givens.wgsl
// The angle-fused scan (forward): h_t = lambda_t G_t h_{t-1} + (1 - lambda_t) v_t per block,
// h_{-1} = 0, each step's transition built from its angles in registers (givens.wgsl): reads
// pre once, writes h once, no K x K matrix anywhere. One invocation per lane (b, n) walks
// [t_begin, t_end) of T; a later segment resumes from the h it stored at t_begin - 1.

struct Params {
    lanes: u32,   // B * N
    n: u32,       // N
    t_len: u32,   // T
    t_begin: u32,
    t_end: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
// binding 1: pre (B, T, 2D), declared in givens.wgsl
@group(0) @binding(2) var<storage, read_write> h: array<f32>; // (B, T, D)

@compute @workgroup_size(64)
fn givens_scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let lane = invocation(wid, nwg, lid);
    if lane >= p.lanes {
        return;
    }
    let b = lane / p.n;
    let n = lane % p.n;
    let d = p.n * K;
    var s: array<f32, KMAX>;
    if p.t_begin > 0u {
        let prev = (b * p.t_len + p.t_begin - 1u) * d + n * K;
        for (var i = 0u; i < K; i++) {
            s[i] = h[prev + i];
        }
    }
    for (var t = p.t_begin; t < p.t_end; t++) {
        let row = b * p.t_len + t;
        var st = load_step(row, n, p.n);
        givens_apply(&s, &st);
        for (var i = 0u; i < K; i++) {
            s[i] = st.lambda * s[i] + (1.0 - st.lambda) * st.v[i];
            h[row * d + n * K + i] = s[i];
        }
    }
}
