// prelude: recurrence/launch.wgsl
// prelude: mixer/math.wgsl
// prelude: mixer/gate_params.wgsl
// SignedMinGRU's gates into linear_scan's inputs. pre (B, T, 2D) holds [r (D) | v (D)] per
// step: a signed coefficient a = tanh(r) in (-1, 1) and the injection b = (1 - a^2) v, so a
// strongly kept state (|a| near 1) takes in little. One invocation per (b, t, c); the uniform
// (n = D): mixer/gate_params.wgsl.

@group(0) @binding(1) var<storage, read> pre: array<f32>;     // (B, T, 2D)
@group(0) @binding(2) var<storage, read_write> a: array<f32>; // (B, T, D)
@group(0) @binding(3) var<storage, read_write> b: array<f32>; // (B, T, D)

@compute @workgroup_size(WG)
fn signed_gates(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let i = invocation(wid, nwg, lid);
    if i >= p.total {
        return;
    }
    let base = (i / p.n) * 2u * p.n + i % p.n;
    let t = tanh(pre[base]);
    a[i] = t;
    b[i] = (1.0 - t * t) * pre[base + p.n];
}
