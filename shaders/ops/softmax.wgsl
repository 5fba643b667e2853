
// prelude: ops/reduce/tree.wgsl
// Numerically stable softmax over each row, one workgroup per row:
//   out[r, c] = exp(x[r, c] - max_r) / sum_{c' < visible} exp(x[r, c'] - max_r)  for c < visible,
//   out[r, c] = 0                                                                 otherwise,
// where visible = cols, or with the causal mask min(cols, past + (r % per_matrix) + 1):
// row i of each (per_matrix, cols) matrix sees columns 0..=past + i. The max starts from a
// finite sentinel (WGSL may assume no infinities).

struct Params {
    rows: u32,
    cols: u32,
    per_matrix: u32, // rows per matrix (the last-but-one axis)
    causal: u32,     // 1: apply the mask
    past: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (rows, cols)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (rows, cols)

@compute @workgroup_size(256)
fn softmax(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    // The whole workgroup leaves together, so the barriers below stay uniform.
    if row >= p.rows {
        return;
    }
    var visible = p.cols;
    if p.causal != 0u {
        visible = min(p.cols, p.past + row % p.per_matrix + 1u);
    }
    let base = row * p.cols;
    var m = -3.0e38;
    for (var c = lid; c < visible; c += 256u) {
        m = max(m, x[base + c]);
    }
    let mx = tree_max(lid, m);
    var s = 0.0;
    for (var c = lid; c < visible; c += 256u) {
        s += exp(x[base + c] - mx);
    }
    let inv = 1.0 / tree_sum(lid, s);
    for (var c = lid; c < p.cols; c += 256u) {
        var v = 0.0;
        if c < visible {
            v = exp(x[base + c] - mx) * inv;
        }
        out[base + c] = v;
    }
}
