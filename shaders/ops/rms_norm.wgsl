// prelude: ops/reduce/tree.wgsl
// prelude: ops/row_norm.wgsl
// dtype: weight scalar
// RMS norm over each row, one workgroup per row (Llama's RMSNorm), the row scaled by a power
// of two first so its squares cannot overflow on finite inputs up to f32::MAX:
//   out[r, c] = x[r, c] / sqrt(mean_c(x[r, c]^2) + eps) * weight[c].
// weight is F32, F16 or BF16 (a dtype slot, widened to f32); x and out are F32. The uniform
// and x: ops/row_norm.wgsl.

@group(0) @binding(2) var<storage, read> weight: array<weight_word>; // (cols,)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;      // (rows, cols)

@compute @workgroup_size(256)
fn rms_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if row >= p.rows {
        return;
    }
    let base = row * p.cols;
    // x * rstd = xs * rstd_s with xs = x * scale and eps_s = eps * scale^2 (`norm_rstd`), the
    // scale a power of two that brings the largest magnitude below 2^21 (`row_scale`).
    let scale = row_max_scale(lid, base);
    var q = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        let xs = x[base + c] * scale;
        q += xs * xs;
    }
    let rstd = norm_rstd(tree_sum(lid, q), p.cols, p.eps, scale);
    for (var c = lid; c < p.cols; c += 256u) {
        out[base + c] = x[base + c] * scale * rstd * weight_at(c);
    }
}
