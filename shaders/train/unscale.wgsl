// prelude: kernel/grid.wgsl
// A loss-scaled gradient divided by the scale, and whether it overflowed (engine/train/
// loss_scale.rs, PyTorch's GradScaler): out = grad / state[0], and state[2] = 1 where an
// element of grad or of out is an inf or a NaN. The test is on the bits (exponent all ones):
// WGSL lets a compiler assume no float is inf or NaN, and one did fold inf * 0 to 0. Every
// invocation that finds one writes the same 1, so the unsynchronised stores agree.

struct Params {
    n: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> grad: array<f32>;        // (n,) the scaled gradient
@group(0) @binding(2) var<storage, read_write> out: array<f32>;   // (n,) grad / scale
@group(0) @binding(3) var<storage, read_write> state: array<f32>; // (5,) the scaler's (loss_scale_update.wgsl)

const WG: u32 = 256u;
const EXPONENT: u32 = 0x7f800000u;

@compute @workgroup_size(WG)
fn unscale(grid: Grid) {
    let i = grid_index(grid, WG);
    if i >= p.n {
        return;
    }
    let g = grad[i];
    // 1 / S rounded once, as the host's reference divides (S is a power of two: exact).
    let v = g * (1.0 / state[0]);
    out[i] = v;
    if (bitcast<u32>(g) & EXPONENT) == EXPONENT || (bitcast<u32>(v) & EXPONENT) == EXPONENT {
        state[2] = 1.0;
    }
}
