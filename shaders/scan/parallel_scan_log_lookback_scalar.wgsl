// prelude: recurrence/launch.wgsl
// prelude: scan/log_bindings.wgsl
// prelude: scan/log_f32_outputs.wgsl
// prelude: recurrence/width_scalar.wgsl
// prelude: recurrence/lookback.wgsl
// prelude: scan/parallel_scan_log_lookback.wgsl
// The one-pass log scan (scan/parallel_scan_log_lookback.wgsl), one channel an invocation
// (any D).
// Inputs of any dtype (scalar slots); outputs always f32 (engine/scan/parallel_scan_log.rs
// narrows them afterwards with the word-owning conversion).
// dtype: lc scalar
// dtype: lv scalar
// dtype: g scalar
// dtype: h scalar
