// prelude: recurrence/launch.wgsl
// prelude: mixer/math.wgsl
// MinGRU's gates into parallel_scan_log's inputs. pre (B, T, 2D) holds [k (D) | v (D)] per
// step; z = sigmoid(k), h~ = g(v):
//   lc_t  = log(1 - z_t)       = -softplus(k_t)
//   lv_t+1 = log(z_t) + log h~_t = -softplus(-k_t) + log_g(v_t)
//   lv_0  = H0_LOG, a finite stand-in for log 0 (h0 = 0): exp(-1e4) is exactly 0 in f32.
// One invocation per element of lv (B, T + 1, D).

const H0_LOG: f32 = -1e4;

struct Params {
    total: u32, // B * (T + 1) * D
    d: u32,     // D
    t_len: u32, // T
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> pre: array<f32>;      // (B, T, 2D)
@group(0) @binding(2) var<storage, read_write> lc: array<f32>; // (B, T, D)
@group(0) @binding(3) var<storage, read_write> lv: array<f32>; // (B, T + 1, D)

@compute @workgroup_size(WG)
fn log_gates(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let i = invocation(wid, nwg, lid);
    if i >= p.total {
        return;
    }
    let c = i % p.d;
    let s = (i / p.d) % (p.t_len + 1u);
    let b = i / (p.d * (p.t_len + 1u));
    if s == 0u {
        lv[i] = H0_LOG;
        return;
    }
    let row = b * p.t_len + s - 1u;
    let k = pre[row * 2u * p.d + c];
    let v = pre[row * 2u * p.d + p.d + c];
    lc[row * p.d + c] = -softplus(k);
    lv[i] = -softplus(-k) + log_g(v);
}
