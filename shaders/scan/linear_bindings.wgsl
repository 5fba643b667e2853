// The K = V = 1 affine scan's uniform and bindings (prelude of the width kernels of
// scan/linear.widths, both the
// walks of scan/linear_walk.wgsl and the one pass of scan/linear_lookback.wgsl: the engine
// binds the same buffers to both, engine/scan/linear_gpu.rs). Each brings its own `side` at
// binding 7, whose layout is its own. Every index counts F values (W channels each).

struct Params {
    launch: Launch, // lanes = B * N / W, W channels an invocation (recurrence/launch.wgsl)
    n: u32,         // F values per time step: N / W
    has_h0: u32,    // 1 when h0 is bound, 0 for a zero initial state
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<a_t>;           // (B, T, N) transitions
@group(0) @binding(2) var<storage, read> x: array<x_t>;           // (B, T, N): b, or dL/dh when REVERSE
@group(0) @binding(3) var<storage, read> h0: array<h0_t>;         // (B, N), read when has_h0
@group(0) @binding(4) var<storage, read> h: array<h_t>;           // (B, T, N) forward output, read when REVERSE
@group(0) @binding(5) var<storage, read_write> out: array<out_t>; // (B, T, N): h, or G = dB when REVERSE
@group(0) @binding(6) var<storage, read_write> da: array<da_t>;   // (B, T, N) dA, written when REVERSE
@group(0) @binding(8) var<storage, read_write> dh0: array<dh0_t>; // (B, N), written when REVERSE
