// prelude: reduce/tree.wgsl
// A projection's residual add and the next layer norm, one workgroup per row: the projection
// arrives as its S partial products over K-slices (S = 1 when it was not split), so the
// slice sum, the bias, the residual and the norm are one dispatch:
//   y[r, c] = (sum_s parts[s, r, c] + bias[c]) + residual[r, c]
//   h[r, c] = (y[r, c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c]
// The sums run in the orders of `matmul/split_k_sum.wgsl` and `reduce/layer_norm.wgsl`, so y
// and h are what the split product's epilogue and `layer_norm` would give.

struct Params {
    rows: u32,
    cols: u32,
    slices: u32,
    eps: f32,
    bias_off: u32,
    res_off: u32,
    gamma_off: u32,
    beta_off: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> parts: array<f32>;     // (S, rows, cols) dense
@group(0) @binding(2) var<storage, read> bias: array<f32>;      // (cols,) at bias_off
@group(0) @binding(3) var<storage, read> residual: array<f32>;  // (rows, cols) dense at res_off
@group(0) @binding(4) var<storage, read> gamma: array<f32>;     // (cols,) at gamma_off
@group(0) @binding(5) var<storage, read> beta: array<f32>;      // (cols,) at beta_off
@group(0) @binding(6) var<storage, read_write> y: array<f32>;   // (rows, cols) dense
@group(0) @binding(7) var<storage, read_write> h: array<f32>;   // (rows, cols) dense

@compute @workgroup_size(256)
fn residual_layer_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if row >= p.rows {
        return;
    }
    let base = row * p.cols;
    let plane = p.rows * p.cols;
    let n = f32(p.cols);
    var s = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        var acc = 0.0;
        for (var k = 0u; k < p.slices; k++) {
            acc += parts[k * plane + base + c];
        }
        let v = (acc + bias[p.bias_off + c]) + residual[p.res_off + base + c];
        y[base + c] = v;
        s += v;
    }
    let mean = tree_sum(lid, s) / n;
    var q = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        let d = y[base + c] - mean;
        q += d * d;
    }
    let rstd = inverseSqrt(tree_sum(lid, q) / n + p.eps);
    for (var c = lid; c < p.cols; c += 256u) {
        h[base + c] = (y[base + c] - mean) * rstd * gamma[p.gamma_off + c] + beta[p.beta_off + c];
    }
}
