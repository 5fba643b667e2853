// prelude: recurrence/launch.wgsl
// prelude: scan/linear_bindings.wgsl
// prelude: recurrence/width_quad.wgsl
// prelude: recurrence/lookback.wgsl
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
