// prelude: recurrence/launch.wgsl
// prelude: scan/backward_da.wgsl
// dtype: h scalar
// dtype: h0 scalar
// The inputs h, h0 are dtype slots (engine/kernel/dtype.rs): F32, F16 or BF16, read as f32;
// the outputs stay f32 (the engine narrows a half call's outputs afterwards, one word each).
// matrix_affine_scan gradient of the transitions, after the reverse scan has produced
// G = dB: dA_t = G_t H_{t-1}^T, with H_{-1} = h0 (zero when absent). Fully parallel over
// (b, t, n, i, l), one invocation per element of dA; the sum over the V columns is in f32.

override K: u32 = 2u;
override V: u32 = 1u;

// binding 0: the uniform p, declared in scan/backward_da.wgsl
@group(0) @binding(1) var<storage, read> g: array<f32>;        // (B, T, N, K, V): G = dB
@group(0) @binding(2) var<storage, read> h: array<h_t>;        // (B, T, N, K, V): forward output H
@group(0) @binding(3) var<storage, read> h0: array<h0_t>;      // (B, N, K, V), read when has_h0
@group(0) @binding(4) var<storage, read_write> da: array<f32>; // (B, T, N, K, K)

// Invocation e of the B * T * N * K * K invocations, one an element of dA (scan/backward_da.wgsl).
fn backward_da(e: u32) {
    let l = e % K;
    let i = (e / K) % K;
    let step = e / (K * K);
    let t = (step / p.n) % p.t_len;
    let gb = step * K * V + i * V;
    var acc = 0.0;
    if t > 0u {
        let hb = (step - p.n) * K * V + l * V;
        for (var j = 0u; j < V; j++) {
            acc += g[gb + j] * h_ld(hb + j);
        }
    } else if p.has_h0 == 1u {
        let b = step / (p.n * p.t_len);
        let hb = (b * p.n + step % p.n) * K * V + l * V;
        for (var j = 0u; j < V; j++) {
            acc += g[gb + j] * h0_ld(hb + j);
        }
    }
    da[e] = acc;
}
