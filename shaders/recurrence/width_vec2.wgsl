// Two adjacent channels an invocation (prelude of the look-back width kernels that build.rs generates from scan/*.widths, scan/*_lookback_vec2.wgsl): the
// value type F, its channel count W, and F to and from vec4<f32> (recurrence/lookback.wgsl
// publishes and polls a value's W channels as flag words through vec4<f32>).

alias F = vec2<f32>;
const W: u32 = 2u;

fn wide(v: F) -> vec4<f32> {
    return vec4(v, 0.0, 0.0);
}

fn narrow(v: vec4<f32>) -> F {
    return v.xy;
}
