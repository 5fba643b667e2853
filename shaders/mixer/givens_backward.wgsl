// prelude: mixer/math.wgsl
// prelude: mixer/givens.wgsl
// Shared by the rotation-family backward kernels (prepended after givens.wgsl).

@group(0) @binding(4) var<storage, read_write> dpre: array<f32>; // (B, T, 2D)

// Where dL/dpre of block n of step row `row` goes: v grads, the decay grad, angle grads.
fn store_step_backward(row: u32, n: u32, nblocks: u32, st: ptr<function, Step>, dv: ptr<function, array<f32, KMAX>>,
                   dlambda: f32, dtheta: ptr<function, array<f32, KMAX>>) {
    let d = nblocks * K;
    let base = row * 2u * d;
    for (var i = 0u; i < K; i++) {
        dpre[base + n * K + i] = (*dv)[i];
    }
    let l = (*st).lambda;
    dpre[base + d + n] = dlambda * l * (1.0 - l);
    for (var j = 0u; j + 1u < K; j++) {
        dpre[base + d + nblocks + n * (K - 1u) + j] = (*dtheta)[j];
    }
}
