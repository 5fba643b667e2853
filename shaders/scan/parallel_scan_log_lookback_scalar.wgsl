// prelude: scan/launch.wgsl
// prelude: scan/width_scalar.wgsl
// prelude: scan/lookback.wgsl
// prelude: scan/parallel_scan_log_lookback.wgsl
// The one-pass log scan (scan/parallel_scan_log_lookback.wgsl), one channel an invocation
// (any D).
// Inputs of any dtype (scalar slots); outputs always f32 (engine/scan/parallel_scan_log.rs
// narrows them afterwards with the word-owning conversion).
// dtype: lc scalar
// dtype: lv scalar
// dtype: g scalar
// dtype: h scalar

alias out_t = f32;
alias out2_t = f32;

fn out_st(i: u32, v: f32) {
    out[i] = v;
}

fn out2_st(i: u32, v: f32) {
    out2[i] = v;
}
