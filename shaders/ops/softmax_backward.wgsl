// The softmax's backward over each row, one subgroup per row (ops/softmax_subgroup.wgsl's
// shape), from the softmax's output y and the gradient g of y:
//   dx[r, c] = y[r, c] (g[r, c] - sum_c' g[r, c'] y[r, c'])
// (masked entries have y = 0, so their dx is 0). One launch reading y and g once where the
// tape's composition took four (a product, a row sum, a difference, a product) and wrote
// three intermediates of the matrix's size. The host uses it where the adapter's subgroups
// have one fixed size LANES (a power of two, 4 to 256) and are runs of consecutive
// invocation indices of the 1-D workgroup.
// Grid: ceil(rows / (256 / LANES)) workgroups (x + y * nwg.x); row = group * 256 / LANES + lid / LANES.

override LANES: u32 = 32u;

struct Params {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> y: array<f32>;         // (rows, cols), the softmax
@group(0) @binding(2) var<storage, read> g: array<f32>;         // (rows, cols), dL/dy
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;  // (rows, cols)

@compute @workgroup_size(256)
fn softmax_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let row = (wid.x + wid.y * nwg.x) * (256u / LANES) + lid / LANES;
    let lane = lid % LANES;
    // No early return: a row past the end walks no columns, and the reduction stays in the
    // subgroup's uniform control flow.
    let cols = select(0u, p.cols, row < p.rows);
    let base = row * p.cols;
    var s = 0.0;
    for (var c = lane; c < cols; c += LANES) {
        s = fma(g[base + c], y[base + c], s);
    }
    let t = subgroupAdd(s);
    for (var c = lane; c < cols; c += LANES) {
        dx[base + c] = y[base + c] * (g[base + c] - t);
    }
}
