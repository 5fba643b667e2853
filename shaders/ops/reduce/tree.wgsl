// Shared by the row kernels (prepended): workgroup-wide sum and max over 256 invocations in
// three barriers: 16 invocations each combine a run of 16 values, then every invocation
// combines the 16 run results itself. Why not a halving tree: its nine barriers cost more
// than the extra adds, on GPUs (the row kernels run few workgroups, so barrier latency is
// their time) and on CPU adapters (llvmpipe runs every barrier as a pass over all 256
// invocations). The order of the adds is fixed, so results repeat exactly.
// Call from uniform control flow only (they hold barriers); every invocation gets the result.

var<workgroup> red: array<f32, 256>;
var<workgroup> red_16: array<f32, 16>;

fn tree_sum(lid: u32, v: f32) -> f32 {
    red[lid] = v;
    workgroupBarrier();
    if lid < 16u {
        var s = 0.0;
        for (var i = 16u * lid; i < 16u * lid + 16u; i++) {
            s += red[i];
        }
        red_16[lid] = s;
    }
    workgroupBarrier();
    var t = 0.0;
    for (var i = 0u; i < 16u; i++) {
        t += red_16[i];
    }
    // The next call overwrites the partial results: wait until everyone has read them.
    workgroupBarrier();
    return t;
}

fn tree_max(lid: u32, v: f32) -> f32 {
    red[lid] = v;
    workgroupBarrier();
    if lid < 16u {
        var s = red[16u * lid];
        for (var i = 16u * lid + 1u; i < 16u * lid + 16u; i++) {
            s = max(s, red[i]);
        }
        red_16[lid] = s;
    }
    workgroupBarrier();
    var t = red_16[0];
    for (var i = 1u; i < 16u; i++) {
        t = max(t, red_16[i]);
    }
    workgroupBarrier();
    return t;
}

// A power of two that brings a row's largest magnitude `m` below 2^21 when it is larger, else
// 1: the row kernels that square their inputs (layer norm's variance) multiply by it first,
// so rows up to f32::MAX do not overflow (2^24 columns of squares below 2^42 stay finite), and
// a power of two scales exactly. Read from the exponent bits e: 2^(147 - e) for e > 147, a
// normal number for every finite m (bringing m into [1, 2) instead would need the subnormal
// 2^-127 at f32::MAX). m = inf or NaN (e = 255) gives 1 (the row's result is NaN anyway).
fn row_scale(m: f32) -> f32 {
    let e = (bitcast<u32>(m) >> 23u) & 0xffu;
    if e <= 147u || e == 255u {
        return 1.0;
    }
    return bitcast<f32>((274u - e) << 23u); // 2^(147 - e): biased exponent 274 - e in 20..=126
}

// Layer norm moments that cannot overflow on finite rows, in three steps around the caller's
// workgroup reductions: each invocation adds x * norm_prescale(n) (a power of two at most
// 1 / n, so the sum of n values up to f32::MAX stays finite) and takes max |x|; then
// scale = row_scale(max) and norm_mean(sum, n, scale) is the mean of the row scaled by
// `scale`; then the sum of squares of x * scale - mean gives norm_rstd. The normalised value
// is (x * scale - mean) * rstd, equal to (x - mean(x)) / sqrt(var(x) + eps) (powers of two
// scale exactly; eps scales by scale^2).
fn norm_prescale(n: u32) -> f32 {
    return exp2(-ceil(log2(f32(n))));
}

fn norm_mean(sum: f32, n: u32, scale: f32) -> f32 {
    return sum * scale / norm_prescale(n) / f32(n);
}

// eps * scale^2 can underflow to 0 for a large constant row (variance 0): with eps > 0 the
// floor at the smallest normal keeps rstd finite, so its zero deviations give beta as on the
// CPU, not 0 * inf.
// A NaN moment (a NaN in the row) stays NaN: `max` may drop a NaN operand, which made the
// floor's huge rstd out of it and finite garbage of the row; the test is on the bits, since
// WGSL lets a compiler assume float comparisons never see NaN.
fn norm_rstd(squares: f32, n: u32, eps: f32, scale: f32) -> f32 {
    let lo = select(0.0, 1.17549435e-38, eps > 0.0);
    let v = squares / f32(n) + (eps * scale) * scale;
    let nan = (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
    return select(inverseSqrt(max(v, lo)), v, nan);
}

