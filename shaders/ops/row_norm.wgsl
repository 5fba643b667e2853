// The row norms' shared head (ops/layer_norm.wgsl, ops/rms_norm.wgsl; after
// ops/reduce/tree.wgsl): one workgroup of 256 per row of x (rows, cols), its uniform and
// input, the power of two each scales its row by first, and the layer norm's moments
// (`row_moments`, shared by the forward and ops/layer_norm_backward.wgsl).

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

// The layer norm moments of the row at `base`, as (scale, mean, rstd, var) in scaled units: the
// row is scaled by a power of two that brings its largest magnitude below 2^21 (`row_scale`;
// the variance of a row like [1e30, -1e30] would overflow f32 unscaled), its mean taken, then
// its variance in a second pass so that it never cancels catastrophically. The normalised
// value is (x * scale - mean) * rstd, equal to (x - mean(x)) / sqrt(var(x) + eps) (see
// `norm_rstd`). var is the scaled variance (0 for a constant row, where eps * scale^2 may
// have underflowed and rstd * scale no longer equals 1 / sqrt(eps): the backward needs it).
// Call from uniform control flow (it holds the workgroup's barriers).
fn row_moments(lid: u32, base: u32) -> vec4<f32> {
    let scale = row_max_scale(lid, base);
    var s = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        s += x[base + c] * scale;
    }
    let mean = tree_sum(lid, s) / f32(p.cols);
    var q = 0.0;
    for (var c = lid; c < p.cols; c += 256u) {
        let d = x[base + c] * scale - mean;
        q += d * d;
    }
    let squares = tree_sum(lid, q);
    return vec4<f32>(scale, mean, norm_rstd(squares, p.cols, p.eps, scale), squares / f32(p.cols));
}
