// prelude: scan/launch.wgsl
// prelude: scan/lookback.wgsl
// prelude: scan/linear_lookback.wgsl
// The one-pass linear scan (scan/linear_lookback.wgsl), one channel an invocation (any N).
// Inputs of any dtype (scalar slots); outputs always f32: a half output here would put two
// invocations' channels in one packed word (odd N), so engine/scan/linear_gpu.rs narrows
// these f32 outputs afterwards with the word-owning conversion.
// dtype: a scalar
// dtype: x scalar
// dtype: h0 scalar
// dtype: h scalar

alias F = f32;
const W: u32 = 1u;
alias out_t = f32;
alias da_t = f32;
alias dh0_t = f32;

fn out_st(i: u32, v: f32) {
    out[i] = v;
}

fn da_st(i: u32, v: f32) {
    da[i] = v;
}

fn dh0_st(i: u32, v: f32) {
    dh0[i] = v;
}

fn wide(v: F) -> vec4<f32> {
    return vec4(v, 0.0, 0.0, 0.0);
}

fn narrow(v: vec4<f32>) -> F {
    return v.x;
}
