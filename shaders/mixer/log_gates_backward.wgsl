// prelude: recurrence/launch.wgsl
// prelude: mixer/math.wgsl
// Backward of log_gates.wgsl: d lc (B, T, D), d lv (B, T + 1, D) -> d pre (B, T, 2D).
//   dk = -sigmoid(k) d lc_t + sigmoid(-k) d lv_t+1,   dv = log_g'(v) d lv_t+1
// (d lv_0 belongs to the constant h0 and is dropped). One invocation per (b, t, c).

struct Params {
    total: u32, // B * T * D
    d: u32,     // D
    t_len: u32, // T
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> pre: array<f32>;        // (B, T, 2D)
@group(0) @binding(2) var<storage, read> dlc: array<f32>;        // (B, T, D)
@group(0) @binding(3) var<storage, read> dlv: array<f32>;        // (B, T + 1, D)
@group(0) @binding(4) var<storage, read_write> dpre: array<f32>; // (B, T, 2D)

@compute @workgroup_size(WG)
fn log_gates_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
    let i = invocation(wid, nwg, lid);
    if i >= p.total {
        return;
    }
    let c = i % p.d;
    let row = i / p.d;
    let b = row / p.t_len;
    let k = pre[row * 2u * p.d + c];
    let v = pre[row * 2u * p.d + p.d + c];
    let g_lv = dlv[i + (b + 1u) * p.d]; // lv index (b * (T + 1) + t + 1) * D + c
    dpre[row * 2u * p.d + c] = -sigmoid(k) * dlc[i] + sigmoid(-k) * g_lv;
    dpre[row * 2u * p.d + p.d + c] = log_g_grad(v) * g_lv;
}
