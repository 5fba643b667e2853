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

fn invocation(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wid.x + wid.y * nwg.x) * 64u + lid;
}
