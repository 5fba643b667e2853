// prelude: recurrence/launch.wgsl
// prelude: scan/log_bindings.wgsl
// prelude: scan/log_f32_outputs.wgsl
// prelude: recurrence/chunk_walk.wgsl
// prelude: scan/log_walk.wgsl
// prelude: recurrence/channel_entries.wgsl
// parallel_scan_log, one channel per invocation (any D): the walks and bindings are
// scan/log_walk.wgsl's and scan/log_bindings.wgsl's, over F values; the entry points recurrence/channel_entries.wgsl's. Inputs
// of any dtype (scalar slots); outputs always f32: at odd D a half output would put two
// invocations' channels in one packed word, so engine/scan/parallel_scan_log.rs narrows these
// f32 outputs afterwards with the word-owning conversion (tensor/convert.wgsl).
// dtype: lc scalar
// dtype: lv scalar
// dtype: g scalar
// dtype: h scalar

alias F = f32;
