// prelude: recurrence/launch.wgsl
// prelude: scan/backward_da.wgsl
// dtype: h scalar
// dtype: h0 scalar
// The inputs h, h0 are dtype slots (engine/kernel/dtype.rs): F32, F16 or BF16, read as f32;
// the outputs stay f32 (the engine narrows a half call's outputs afterwards, one word each).
// affine8 gradient of the transitions (the k = 8 case of matrix_affine_scan_backward.wgsl),
// after the reverse scan has produced G = dB: dA_t = G_t H_{t-1}^T with H_{-1} = h0 (zero
// when absent). One invocation per (step, row i) accumulates row i of dA_t, two vec4s, over
// the V columns: per column one G value and one column of H_{t-1} (the 8 invocations of a
// step read the same H_{t-1}, from cache), then two vec4 stores. The sum is in f32.

override V: u32 = 8u;

const K: u32 = 8u;

// binding 0: the uniform p, declared in scan/backward_da.wgsl
@group(0) @binding(1) var<storage, read> g: array<f32>;              // (B, T, N, 8, V): G = dB
@group(0) @binding(2) var<storage, read> h: array<h_t>;              // (B, T, N, 8, V): forward output H
@group(0) @binding(3) var<storage, read> h0: array<h0_t>;            // (B, N, 8, V), read when has_h0
@group(0) @binding(4) var<storage, read_write> da: array<vec4<f32>>; // (B, T, N, 8, 8) as 16 vec4s a step

// Invocation e of the B * T * N * 8 invocations, one a (step, row) pair (scan/backward_da.wgsl).
fn backward_da(e: u32) {
    let i = e % K;
    let step = e / K;
    let t = (step / p.n) % p.t_len;
    var lo = vec4<f32>(0.0);
    var hi = vec4<f32>(0.0);
    let gb = step * K * V + i * V;
    if t > 0u || p.has_h0 == 1u {
        // H_{t-1}, or h0 at t = 0.
        var hb = ((step / (p.n * p.t_len)) * p.n + step % p.n) * K * V;
        if t > 0u {
            hb = (step - p.n) * K * V;
        }
        for (var j = 0u; j < V; j++) {
            let gv = g[gb + j];
            let o = hb + j;
            var c0: vec4<f32>;
            var c1: vec4<f32>;
            if t > 0u {
                c0 = vec4<f32>(h_ld(o), h_ld(o + V), h_ld(o + 2u * V), h_ld(o + 3u * V));
                c1 = vec4<f32>(h_ld(o + 4u * V), h_ld(o + 5u * V), h_ld(o + 6u * V), h_ld(o + 7u * V));
            } else {
                c0 = vec4<f32>(h0_ld(o), h0_ld(o + V), h0_ld(o + 2u * V), h0_ld(o + 3u * V));
                c1 = vec4<f32>(h0_ld(o + 4u * V), h0_ld(o + 5u * V), h0_ld(o + 6u * V), h0_ld(o + 7u * V));
            }
            lo += gv * c0;
            hi += gv * c1;
        }
    }
    da[step * 16u + 2u * i] = lo;
    da[step * 16u + 2u * i + 1u] = hi;
}
