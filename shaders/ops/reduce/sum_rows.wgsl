// prelude: ops/reduce/rows.wgsl
// prelude: ops/reduce/tree.wgsl
// Sum along the last axis, one workgroup per row:
//   out[r] = sum_c x[r * cols + c]   for r in 0..rows.
// Each of the 256 invocations strides over the row accumulating in f32, then the shared tree
// (tree_sum) folds the 256 partial sums.

@compute @workgroup_size(256)
fn sum_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    // The whole workgroup leaves together, so the barriers in tree_sum stay uniform.
    if row >= p.rows {
        return;
    }
    let base = row * p.cols;
    var acc = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        acc += x[base + c];
    }
    let total = tree_sum(lid, acc);
    if lid == 0u {
        out[row] = total;
    }
}
