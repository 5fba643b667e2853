// The bindings of the affine scan's kernels that keep their outputs f32 (prelude of
// scan/matrix_affine_scan.wgsl, any K, and scan/affine8.wgsl, K = 8): the including kernel
// defines K and V and its dtype slots a_t, x_t, h0_t (affine8 reads a as vec4s: a step's 8 x 8
// transition is 16 of them, row i in vec4s 2i and 2i + 1). engine/scan/affine_gpu.rs binds
// both the same way. Indices: lane = b * N + n, step(b, t, n) = (b * T + t) * N + n.

struct Params {
    launch: Launch, // lanes = B * N (recurrence/launch.wgsl)
    n: u32,         // N
    has_h0: u32,    // 1 when h0 is bound, 0 for a zero initial state
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<a_t>;          // (B, T, N, K, K)
@group(0) @binding(2) var<storage, read> x: array<x_t>;          // (B, T, N, K, V): B, or dH when REVERSE
@group(0) @binding(3) var<storage, read> h0: array<h0_t>;        // (B, N, K, V), read when has_h0 and not REVERSE
@group(0) @binding(4) var<storage, read_write> out: array<f32>;  // (B, T, N, K, V): H, or G = dB when REVERSE
@group(0) @binding(5) var<storage, read_write> side: array<f32>; // chunked: (lanes, chunks, K, V + K) scratch
@group(0) @binding(6) var<storage, read_write> dh0: array<f32>;  // (B, N, K, V), written when REVERSE
