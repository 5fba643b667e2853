// prelude: scan/launch.wgsl
// prelude: scan/lookback.wgsl
// prelude: scan/parallel_scan_log_lookback.wgsl
// The one-pass log scan (scan/parallel_scan_log_lookback.wgsl), four adjacent channels an
// invocation (D % 4 == 0): one vec4 load per input and step, a warp's loads one contiguous
// run of a row.
// dtype: lc quad
// dtype: lv quad
// dtype: g quad
// dtype: h quad
// dtype: out quad store
// dtype: out2 quad store

alias F = vec4<f32>;
const W: u32 = 4u;

fn wide(v: F) -> vec4<f32> {
    return v;
}

fn narrow(v: vec4<f32>) -> F {
    return v;
}
