// Gate functions shared by the mixer kernels (prepended), all stable for any finite input.

fn sigmoid(x: f32) -> f32 {
    if x >= 0.0 {
        return 1.0 / (1.0 + exp(-x));
    }
    let e = exp(x);
    return e / (1.0 + e);
}

// log(1 + exp(x)) without overflow.
fn softplus(x: f32) -> f32 {
    return max(x, 0.0) + log(1.0 + exp(-abs(x)));
}

// minGRU's value map g(x) = x + 0.5 (x >= 0), sigmoid(x) (x < 0), in log space.
fn log_g(x: f32) -> f32 {
    if x >= 0.0 {
        return log(x + 0.5);
    }
    return -softplus(-x);
}

// d log_g / dx.
fn log_g_grad(x: f32) -> f32 {
    if x >= 0.0 {
        return 1.0 / (x + 0.5);
    }
    return sigmoid(-x);
}

// (sin x, cos x) to about f32 precision for |x| up to a few hundred. Why not the builtins:
// WGSL only promises 2^-11 absolute error for sin and cos (on [-pi, pi]), and SwiftShader's
// WebGPU is that coarse; a rotation mixer compounds the error over every step.
// x = q pi/2 + r with |r| <= pi/4 (pi/2 split in two for an exact product), then Taylor
// polynomials to r^9 / r^8 (truncation below 3e-8), then the quadrant.
fn sin_cos(x: f32) -> vec2<f32> {
    let q = round(x * 0.636619772);
    let r = (x - q * 1.57079625) - q * 7.54978995e-8;
    let r2 = r * r;
    let s = r + r * r2 * (-1.66666667e-1 + r2 * (8.33333333e-3 + r2 * (-1.98412698e-4 + r2 * 2.75573192e-6)));
    let c = 1.0 + r2 * (-0.5 + r2 * (4.16666667e-2 + r2 * (-1.38888889e-3 + r2 * 2.48015873e-5)));
    switch i32(q) & 3 {
        case 0: { return vec2<f32>(s, c); }
        case 1: { return vec2<f32>(c, -s); }
        case 2: { return vec2<f32>(-s, -c); }
        default: { return vec2<f32>(-c, s); }
    }
}
