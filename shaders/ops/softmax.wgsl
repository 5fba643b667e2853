
// prelude: ops/reduce/tree.wgsl
// prelude: ops/softmax_rows.wgsl
// Numerically stable softmax over each row, one workgroup per row:
//   out[r, c] = exp(x[r, c] - max_r) / sum_{c' < visible} exp(x[r, c'] - max_r)  for c < visible,
//   out[r, c] = 0                                                                 otherwise,
// with visible as ops/softmax_rows.wgsl says.

@compute @workgroup_size(256)
fn softmax(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    // The whole workgroup leaves together, so the barriers below stay uniform.
    if row >= p.rows {
        return;
    }
    let visible = visible_of(row);
    let base = row * p.cols;
    var m = MAX_SENTINEL;
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
