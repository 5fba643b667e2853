// prelude: recurrence/launch.wgsl
// prelude: mixer/math.wgsl
// prelude: mixer/gate_params.wgsl
// Backward of signed_gates.wgsl: da, db (B, T, D) -> d pre (B, T, 2D), with a = tanh(r):
//   dr = (da - 2 a v db) (1 - a^2),   dv = (1 - a^2) db.
// One invocation per (b, t, c); the uniform (n = D): mixer/gate_params.wgsl.

@group(0) @binding(1) var<storage, read> pre: array<f32>;        // (B, T, 2D)
@group(0) @binding(2) var<storage, read> da: array<f32>;         // (B, T, D)
@group(0) @binding(3) var<storage, read> db: array<f32>;         // (B, T, D)
@group(0) @binding(4) var<storage, read_write> dpre: array<f32>; // (B, T, 2D)

@compute @workgroup_size(WG)
fn signed_gates_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
    let i = invocation(wid, nwg, lid);
    if i >= p.total {
        return;
    }
    let base = (i / p.n) * 2u * p.n + i % p.n;
    let a = tanh(pre[base]);
    let v = pre[base + p.n];
    let keep = 1.0 - a * a;
    dpre[base] = (da[i] - 2.0 * a * v * db[i]) * keep;
    dpre[base + p.n] = keep * db[i];
}
