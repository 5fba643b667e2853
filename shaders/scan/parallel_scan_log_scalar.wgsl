// prelude: scan/launch.wgsl
// prelude: scan/log_walk.wgsl
// prelude: scan/channel_entries.wgsl
// parallel_scan_log, one channel per invocation (any D): the walks and bindings are
// scan/log_walk.wgsl's, over F values; the entry points scan/channel_entries.wgsl's. Inputs
// of any dtype (scalar slots); outputs always f32: at odd D a half output would put two
// invocations' channels in one packed word, so engine/scan/parallel_scan_log.rs narrows these
// f32 outputs afterwards with the word-owning conversion (tensor/convert.wgsl).
// dtype: lc scalar
// dtype: lv scalar
// dtype: g scalar
// dtype: h scalar

alias F = f32;
alias out_t = f32;
alias out2_t = f32;

fn out_st(i: u32, v: f32) {
    out[i] = v;
}

fn out2_st(i: u32, v: f32) {
    out2[i] = v;
}
