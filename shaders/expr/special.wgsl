// Special-value helpers of the generated elementwise code (`expr::codegen::helpers` appends
// them to fused and element-scan kernels whose body uses them). WGSL lets an implementation
// assume that no NaN or infinity ever occurs, so these decide on bit patterns (integer
// tests on bitcast<u32>) and build special results as bit patterns, never by comparing
// floats with NaN or by writing an inf literal (a const-expression may not be inf).

// True where x is a NaN (any sign, any payload).
fn is_nan_bits(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn is_nan_bits4(x: vec4<f32>) -> vec4<bool> {
    return (bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u);
}

// x^y with the special values of IEEE 754 / C99 Annex F `pow` (Rust's `powf`):
//   pow(x, +-0) = 1 and pow(+1, y) = 1 for every x, y (NaN included); otherwise a NaN in
//   gives NaN; pow(-1, +-inf) = 1; pow(x, +inf) = inf for |x| > 1, +0 for |x| < 1 (and the
//   reverse for -inf); pow(+-0, y) and pow(+-inf, y) are 0 or inf by y's sign, negative when
//   x is negative and y an odd integer; a finite x < 0 with a non-integer y gives NaN; else
//   |x|^y (WGSL's pow, defined for x > 0) with the sign (-1)^y.
fn pow_ieee(x: f32, y: f32) -> f32 {
    let xb = bitcast<u32>(x);
    let yb = bitcast<u32>(y);
    let xa = xb & 0x7fffffffu;
    let ya = yb & 0x7fffffffu;
    let x_neg = xb >= 0x80000000u;
    let y_neg = yb >= 0x80000000u;
    if ya == 0u || xb == 0x3f800000u {
        return 1.0;
    }
    if xa > 0x7f800000u {
        return x; // NaN: keep its bits
    }
    if ya > 0x7f800000u {
        return y;
    }
    const INF: u32 = 0x7f800000u;
    const ONE: u32 = 0x3f800000u;
    if ya == INF {
        if xa == ONE {
            return 1.0;
        }
        // (|x| > 1) == (y = +inf): inf, else +0.
        return bitcast<f32>(select(0u, INF, (xa > ONE) != y_neg));
    }
    // y finite and nonzero: is it an integer, and odd? Read from its exponent e: |y| >= 2^24
    // is an even integer, |y| < 1 no integer, else the bits below 2^0 must be zero.
    let e = i32(ya >> 23u) - 127;
    var y_int = e >= 24;
    var y_odd = false;
    if e >= 0 && e < 24 {
        let m = (ya & 0x7fffffu) | 0x800000u;
        let sh = u32(23 - e);
        y_int = (m & ((1u << sh) - 1u)) == 0u;
        y_odd = y_int && ((m >> sh) & 1u) == 1u;
    }
    let sign = select(0u, 0x80000000u, x_neg && y_odd);
    if xa == 0u {
        return bitcast<f32>(select(0u, INF, y_neg) | sign);
    }
    if xa == INF {
        return bitcast<f32>(select(INF, 0u, y_neg) | sign);
    }
    if x_neg && !y_int {
        return bitcast<f32>(0x7fc00000u | xb); // a quiet NaN
    }
    return bitcast<f32>(bitcast<u32>(pow(bitcast<f32>(xa), y)) | sign);
}

fn pow_ieee4(x: vec4<f32>, y: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(pow_ieee(x.x, y.x), pow_ieee(x.y, y.y), pow_ieee(x.z, y.z), pow_ieee(x.w, y.w));
}

// max and min that give NaN when an operand is NaN (the first NaN operand, bits kept), where
// WGSL's own leave the choice to the implementation: torch's `maximum`, `minimum`, `relu`,
// and the max reduction of a body.
fn max_nan(a: f32, b: f32) -> f32 {
    return select(select(max(a, b), b, is_nan_bits(b)), a, is_nan_bits(a));
}

fn max_nan4(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return select(select(max(a, b), b, is_nan_bits4(b)), a, is_nan_bits4(a));
}

fn min_nan(a: f32, b: f32) -> f32 {
    return select(select(min(a, b), b, is_nan_bits(b)), a, is_nan_bits(a));
}

fn min_nan4(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return select(select(min(a, b), b, is_nan_bits4(b)), a, is_nan_bits4(a));
}

// softplus(x) = log(1 + e^x) = max(x, 0) + log1p(e^-|x|): e^-|x| <= 1, so nothing overflows
// (softplus(1000) = 1000, softplus(-1000) = 0). WGSL has no log1p: below u = 0.1 it is the
// series u - u^2/2 + ... - u^8/8 (truncation under u^9/9, 1e-9 relative), so softplus(-50)
// is e^-50, not 0; from 0.1 on, log(1 + u), whose rounding of 1 + u costs at most 6e-7
// relative there. (Goldberg's u log(w) / (w - 1), w = 1 + u, is exact in IEEE arithmetic,
// but a shader compiler may fold (1 + u) - 1 to u, as lavapipe's does.) A NaN passes max_nan.
fn log1p_small(u: f32) -> f32 {
    return u * (1.0 - u * (0.5 - u * (0.33333334 - u * (0.25 - u * (0.2 - u * (0.16666667 - u * (0.14285715 - u * 0.125)))))));
}

fn softplus_stable(x: f32) -> f32 {
    let u = exp(-abs(x));
    return max_nan(x, 0.0) + select(log(1.0 + u), log1p_small(u), u < 0.1);
}

fn log1p_small4(u: vec4<f32>) -> vec4<f32> {
    let one = vec4<f32>(1.0);
    let t = vec4<f32>(0.16666667) - u * (vec4<f32>(0.14285715) - u * vec4<f32>(0.125));
    let t2 = vec4<f32>(0.25) - u * (vec4<f32>(0.2) - u * t);
    return u * (one - u * (vec4<f32>(0.5) - u * (vec4<f32>(0.33333334) - u * t2)));
}

fn softplus_stable4(x: vec4<f32>) -> vec4<f32> {
    let u = exp(-abs(x));
    return max_nan4(x, vec4<f32>(0.0)) + select(log(vec4<f32>(1.0) + u), log1p_small4(u), u < vec4<f32>(0.1));
}
