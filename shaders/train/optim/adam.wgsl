// prelude: kernel/grid.wgsl
// One Adam / AdamW step in place, one invocation per parameter element:
//   g' = g + l2 w                                    (Adam's L2 decay; 0 for AdamW)
//   m = b1 m + (1 - b1) g',  v = b2 v + (1 - b2) g'^2,
//   w = w (1 - wd) - lr (m / c1) / (sqrt(v / c2) + eps)
//     (c1 = 1 - b1^t, c2 = 1 - b2^t from the powers the device holds, advanced by
//     adam_tick.wgsl before the step, so that a replayed plan steps on; wd = lr * decay for
//     AdamW, else 0)
// With l2 = wd = 0 this is plain Adam exactly (x + 0 w = x, x (1 - 0) = x for finite w).
// A step whose gate[gate_at] is not 0 changes nothing (a loss-scaled step whose gradients
// overflowed, train/loss_scale.rs; ungated steps bind a zero).

struct Params {
    n: u32,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    l2: f32,
    wd: f32,
    gate_at: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> grad: array<f32>;     // (n,)
@group(0) @binding(2) var<storage, read_write> w: array<f32>;  // (n,) the parameter
@group(0) @binding(3) var<storage, read_write> m: array<f32>;  // (n,) first moment
@group(0) @binding(4) var<storage, read_write> v: array<f32>;  // (n,) second moment
@group(0) @binding(5) var<storage, read> powers: array<f32>;   // (2,) b1^t, b2^t, this step's
@group(0) @binding(6) var<storage, read> gate: array<f32>;     // (gate_at + 1,) 0: step

// One invocation per element (kernel/grid.wgsl).
const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn adam(grid: Grid) {
    let i = grid_index(grid, WG);
    if i >= p.n || gate[p.gate_at] != 0.0 {
        return;
    }
    let c1 = 1.0 - powers[0];
    let c2 = 1.0 - powers[1];
    let wi = w[i];
    let g = grad[i] + p.l2 * wi;
    let mi = p.beta1 * m[i] + (1.0 - p.beta1) * g;
    let vi = p.beta2 * v[i] + (1.0 - p.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    w[i] = wi * (1.0 - p.wd) - p.lr * (mi / c1) / (sqrt(vi / c2) + p.eps);
}
