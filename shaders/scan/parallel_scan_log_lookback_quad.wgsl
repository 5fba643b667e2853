// prelude: recurrence/launch.wgsl
// prelude: scan/log_bindings.wgsl
// prelude: recurrence/width_quad.wgsl
// prelude: recurrence/lookback.wgsl
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
