
// prelude: ops/reduce/tree.wgsl
// prelude: ops/row_norm.wgsl
// dtype: gamma scalar
// dtype: beta scalar
// Layer norm over each row, one workgroup per row (biased variance, two passes over the row
// so the variance never cancels catastrophically, the row scaled by a power of two first so
// it cannot overflow on finite inputs up to f32::MAX):
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
    let n = f32(p.cols);
    // Scale by a power of two that brings the largest magnitude below 2^21 (`row_scale`): the
    // variance of a row like [1e30, -1e30] would overflow f32 unscaled. The result is unchanged:
    // (x - mean) * rstd = (xs - mean_s) * rstd_s with xs = x * scale, eps_s = eps * scale^2.
    let scale = row_max_scale(lid, base);
    var s = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        s += x[base + c] * scale;
    }
    let mean = tree_sum(lid, s) / n;
    var q = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        let d = x[base + c] * scale - mean;
        q += d * d;
    }
    let rstd = norm_rstd(tree_sum(lid, q), p.cols, p.eps, scale);
    for (var c = lid; c < p.cols; c += 256u) {
        out[base + c] = (x[base + c] * scale - mean) * rstd * gamma_at(c) + beta_at(c);
    }
}
