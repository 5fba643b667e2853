// Sum of short rows, one invocation per row (a broadcast parameter's gradient, where many
// rows of a few values each would leave most of a one-workgroup-per-row kernel idle):
//   out[r] = sum_c x[r * cols + c]   for r in 0..rows, accumulated in f32 in order.

struct Params {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (rows, cols)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (rows,)

@compute @workgroup_size(64)
fn sum_short_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let r = (wid.x + wid.y * nwg.x) * 64u + lid;
    if r >= p.rows {
        return;
    }
    var acc = 0.0;
    for (var c = 0u; c < p.cols; c++) {
        acc += x[r * p.cols + c];
    }
    out[r] = acc;
}
