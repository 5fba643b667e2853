// prelude: kernel/grid.wgsl
// One SGD step in place, one invocation per parameter element (PyTorch's SGD, no dampening):
//   g' = g + wd w,  b = mu b + g'  (b starts at 0),
//   w -= lr (g' + mu b) with Nesterov, else w -= lr b.

struct Params {
    n: u32,
    lr: f32,
    momentum: f32,
    wd: f32,
    nesterov: u32, // 1: Nesterov momentum
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> grad: array<f32>;     // (n,)
@group(0) @binding(2) var<storage, read_write> w: array<f32>;  // (n,) the parameter
@group(0) @binding(3) var<storage, read_write> b: array<f32>;  // (n,) the velocity

// One invocation per element (kernel/grid.wgsl).
const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn sgd(grid: Grid) {
    let i = grid_index(grid, WG);
    if i >= p.n {
        return;
    }
    let wi = w[i];
    let g = grad[i] + p.wd * wi;
    let bi = p.momentum * b[i] + g;
    b[i] = bi;
    var d = bi;
    if p.nesterov == 1u {
        d = g + p.momentum * bi;
    }
    w[i] = wi - p.lr * d;
}
