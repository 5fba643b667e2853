// prelude: kernel/grid.wgsl
// Fills a dense f32 tensor with one value: `Tensor::full` inside a plan capture, where an
// upload could not be replayed and a clear is not a dispatch. The value is a uniform, so a
// replay writes it again, and every value shares this one pipeline.
//   out[i] = value   for i < n
// Grid: ceil(n / WG) workgroups (x + y * nwg.x).

struct Params {
    n: u32,
    value: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<f32>; // (n,) dense

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn fill(grid: Grid) {
    let i = grid_index(grid, WG);
    if i >= p.n {
        return;
    }
    out[i] = p.value;
}
