// prelude: ops/reduce/tree.wgsl
// A projection's residual add and the next layer norm, one workgroup per row: the projection
// arrives as its S partial products over K-slices (S = 1 when it was not split), so the
// slice sum, the bias, the residual and the norm are one dispatch:
//   y[r, c] = (sum_s parts[s, r, c] + bias[c]) + residual[r, c]
//   h[r, c] = (y[r, c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c]
// (biased variance, two passes over the row, scaled by a power of two, as in
// `layer_norm.wgsl`). Everything is read as vec4 (the host checks C % 4 == 0 and
// offsets % 4 == 0), and the slices are summed eight at a time into eight accumulators: with only M workgroups (64 rows of a prefill), one
// dependent load after another made this kernel latency-bound at S = 32 slices.

struct Params {
    rows: u32,
    cols: u32,
    slices: u32,
    eps: f32,
    bias_off: u32,   // in vec4s, like every offset here
    res_off: u32,
    gamma_off: u32,
    beta_off: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> parts: array<vec4<f32>>;     // (S, rows, cols) dense
@group(0) @binding(2) var<storage, read> bias: array<vec4<f32>>;      // (cols,) at bias_off
@group(0) @binding(3) var<storage, read> residual: array<vec4<f32>>;  // (rows, cols) dense at res_off
@group(0) @binding(4) var<storage, read> gamma: array<vec4<f32>>;     // (cols,) at gamma_off
@group(0) @binding(5) var<storage, read> beta: array<vec4<f32>>;      // (cols,) at beta_off
@group(0) @binding(6) var<storage, read_write> y: array<vec4<f32>>;   // (rows, cols) dense
@group(0) @binding(7) var<storage, read_write> h: array<vec4<f32>>;   // (rows, cols) dense

// sum_s parts[s, i] (i a vec4 index within one (rows, cols) plane of plane vec4s).
fn slice_sum(i: u32, plane: u32) -> vec4<f32> {
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    var a4 = vec4<f32>(0.0);
    var a5 = vec4<f32>(0.0);
    var a6 = vec4<f32>(0.0);
    var a7 = vec4<f32>(0.0);
    var k = 0u;
    for (; k + 8u <= p.slices; k += 8u) {
        let at = k * plane + i;
        a0 += parts[at];
        a1 += parts[at + plane];
        a2 += parts[at + 2u * plane];
        a3 += parts[at + 3u * plane];
        a4 += parts[at + 4u * plane];
        a5 += parts[at + 5u * plane];
        a6 += parts[at + 6u * plane];
        a7 += parts[at + 7u * plane];
    }
    for (; k < p.slices; k++) {
        a0 += parts[k * plane + i];
    }
    return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
}

@compute @workgroup_size(256)
fn residual_layer_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if row >= p.rows {
        return;
    }
    let c4 = p.cols / 4u;
    let base = row * c4;
    let plane = p.rows * c4;
    let n = f32(p.cols);
    // Each invocation reads back only the y it wrote itself, so no barrier is needed.
    var a = vec4<f32>(0.0);
    for (var c = lid; c < c4; c += 256u) {
        let v = (slice_sum(base + c, plane) + bias[p.bias_off + c]) + residual[p.res_off + base + c];
        y[base + c] = v;
        a = max(a, abs(v));
    }
    // Scaled by a power of two as in `layer_norm.wgsl`, so the variance cannot overflow.
    let scale = row_scale(tree_max(lid, max(max(a.x, a.y), max(a.z, a.w))));
    var s = 0.0;
    for (var c = lid; c < c4; c += 256u) {
        let v = y[base + c] * scale;
        s += (v.x + v.y) + (v.z + v.w);
    }
    let mean = tree_sum(lid, s) / n;
    var q = 0.0;
    for (var c = lid; c < c4; c += 256u) {
        let d = y[base + c] * scale - mean;
        q += dot(d, d);
    }
    let rstd = norm_rstd(tree_sum(lid, q), p.cols, p.eps, scale);
    for (var c = lid; c < c4; c += 256u) {
        h[base + c] = (y[base + c] * scale - mean) * rstd * gamma[p.gamma_off + c] + beta[p.beta_off + c];
    }
}
