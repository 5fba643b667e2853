// prelude: ops/reduce/tree.wgsl
// prelude: ops/row_norm.wgsl
// dtype: gamma scalar
// The backward of ops/layer_norm.wgsl (or with RMS of ops/rms_norm.wgsl) in one launch, one
// workgroup per row: the row's moments recomputed as the forward computes them (scaled by
// row_scale's power of two, so finite rows up to f32::MAX do not overflow), then with
// xhat = (x - mean) rstd and dxhat = g gamma:
//   dx[r, c] = rstd (dxhat - mean_r(dxhat) - xhat mean_r(dxhat xhat)),
//   gxhat[r, c] = g xhat   (its column sums are dL/dgamma; the engine sums them, and g's
//                            for dL/dbeta).
// RMS: mean = 0, rstd = 1 / sqrt(mean(x^2) + eps) and no mean_r(dxhat) term, which is the
// RMS norm's dx = rstd (dxhat - xhat mean_r(dxhat xhat)); gamma is its weight.
// In the scaled units the forward uses, xhat = (x scale - mean_s) rstd_s, so d xhat / dx is
// rstd_s scale. gamma is F32, F16 or BF16 (a dtype slot); x, g and the outputs are F32.
// The uniform and x: ops/row_norm.wgsl.

override RMS: bool = false;

@group(0) @binding(2) var<storage, read> gamma: array<gamma_word>; // (cols,)
@group(0) @binding(3) var<storage, read> g: array<f32>;            // (rows, cols) dL/dy
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;     // (rows, cols)
@group(0) @binding(5) var<storage, read_write> gxhat: array<f32>;  // (rows, cols)

@compute @workgroup_size(256)
fn layer_norm_backward(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if row >= p.rows {
        return;
    }
    let base = row * p.cols;
    let n = f32(p.cols);
    var m: vec4<f32>; // (scale, mean, rstd, var) as the forward computes them
    if RMS {
        let scale = row_max_scale(lid, base);
        var q = 0.0;
        for (var c = lid; c < p.cols; c += 256u) {
            let xs = x[base + c] * scale;
            q += xs * xs;
        }
        let squares = tree_sum(lid, q);
        m = vec4<f32>(scale, 0.0, norm_rstd(squares, p.cols, p.eps, scale), squares / n);
    } else {
        m = row_moments(lid, base); // ops/row_norm.wgsl
    }
    let scale = m.x;
    let mean = m.y;
    let rstd = m.z;
    var s1 = 0.0;
    var s2 = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        let xhat = (x[base + c] * scale - mean) * rstd;
        let dxhat = g[base + c] * gamma_at(c);
        s1 += dxhat;
        s2 += dxhat * xhat;
    }
    let m1 = select(tree_sum(lid, s1) / n, 0.0, RMS);
    let m2 = tree_sum(lid, s2) / n;
    // d xhat / dx = rstd * scale, except for a constant row (var 0), where eps * scale^2 may
    // have underflowed (a row of 1e30s) and norm_rstd's floor stands in: there it is
    // 1 / sqrt(eps) exactly.
    let k = select(rstd * scale, inverseSqrt(p.eps), m.w == 0.0 && p.eps > 0.0);
    for (var c = lid; c < p.cols; c += 256u) {
        let xhat = (x[base + c] * scale - mean) * rstd;
        let gc = g[base + c];
        dx[base + c] = k * (gc * gamma_at(c) - m1 - xhat * m2);
        gxhat[base + c] = gc * xhat;
    }
}
