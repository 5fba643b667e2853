// The uniform of the gate kernels (mixer/givens_gates.wgsl, mixer/signed_gates.wgsl and their
// backwards): one invocation per element of a (B, T, n) step grid, `total` of them, with `n`
// elements to a time step's row: the blocks N (givens) or the channels D (signed).

struct Params {
    total: u32, // B * T * n
    n: u32,     // N (givens) or D (signed)
}

@group(0) @binding(0) var<uniform> p: Params;
