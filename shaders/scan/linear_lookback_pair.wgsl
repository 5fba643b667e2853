// prelude: scan/launch.wgsl
// prelude: scan/lookback.wgsl
// prelude: scan/linear_lookback.wgsl
// The one-pass linear scan (scan/linear_lookback.wgsl), two adjacent channels an invocation
// (N % 2 == 0): the path of half storage whose N does not divide into fours, each step's
// pair of halves one whole packed word that only this invocation writes.
// dtype: a pair
// dtype: x pair
// dtype: h0 pair
// dtype: h pair
// dtype: out pair store
// dtype: da pair store
// dtype: dh0 pair store

alias F = vec2<f32>;
const W: u32 = 2u;

fn wide(v: F) -> vec4<f32> {
    return vec4(v, 0.0, 0.0);
}

fn narrow(v: vec4<f32>) -> F {
    return v.xy;
}
