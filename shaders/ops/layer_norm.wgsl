
// prelude: ops/reduce/tree.wgsl
// prelude: ops/row_norm.wgsl
// dtype: gamma scalar
// dtype: beta scalar
// Layer norm over each row, one workgroup per row (biased variance; the moments, two passes
// over the row scaled by a power of two so finite inputs up to f32::MAX cannot overflow:
// `row_moments` in ops/row_norm.wgsl):
//   out[r, c] = (x[r, c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c].
// gamma and beta are F32, F16 or BF16 (dtype slots, widened to f32); x and out are F32.
// The uniform and x: ops/row_norm.wgsl.

@group(0) @binding(2) var<storage, read> gamma: array<gamma_word>; // (cols,)
@group(0) @binding(3) var<storage, read> beta: array<beta_word>;   // (cols,)
@group(0) @binding(4) var<storage, read_write> out: array<f32>; // (rows, cols)

@compute @workgroup_size(256)
fn layer_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if row >= p.rows {
        return;
    }
    let base = row * p.cols;
    let m = row_moments(lid, base); // (scale, mean, rstd, var): ops/row_norm.wgsl
    for (var c = lid; c < p.cols; c += 256u) {
        out[base + c] = (x[base + c] * m.x - m.y) * m.z * gamma_at(c) + beta_at(c);
    }
}
