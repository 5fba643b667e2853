// prelude: scan/launch.wgsl
// prelude: scan/lookback.wgsl
// prelude: scan/linear_lookback.wgsl
// The one-pass linear scan (scan/linear_lookback.wgsl), four adjacent channels an invocation
// (N % 4 == 0): one vec4 load per input and step, a warp's loads one contiguous run of a row.
// dtype: a quad
// dtype: x quad
// dtype: h0 quad
// dtype: h quad
// dtype: out quad store
// dtype: da quad store
// dtype: dh0 quad store

alias F = vec4<f32>;
const W: u32 = 4u;

fn wide(v: F) -> vec4<f32> {
    return v;
}

fn narrow(v: vec4<f32>) -> F {
    return v;
}
