// The row norms' shared head (ops/layer_norm.wgsl, ops/rms_norm.wgsl; after
// ops/reduce/tree.wgsl): one workgroup of 256 per row of x (rows, cols), its uniform and
// input, and the power of two each scales its row by first.

struct Params {
    rows: u32,
    cols: u32,
    eps: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>; // (rows, cols)

// `row_scale` of the largest magnitude of the row at `base`, reduced over the workgroup: the
// power of two that brings it below 2^21, so the row's squares cannot overflow on finite
// inputs up to f32::MAX (see `norm_rstd` for why the result is unchanged).
fn row_max_scale(lid: u32, base: u32) -> f32 {
    var a = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        a = max(a, abs(x[base + c]));
    }
    return row_scale(tree_max(lid, a));
}
