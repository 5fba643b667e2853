// prelude: recurrence/launch.wgsl
// prelude: scan/log_bindings.wgsl
// prelude: recurrence/chunk_walk.wgsl
// prelude: scan/log_walk.wgsl
// prelude: recurrence/channel_entries.wgsl
// parallel_scan_log, four adjacent channels per invocation (D % 4 == 0; f32 when B x D is at
// least VEC4_WALKS, halves whenever D % 4 == 0: engine/scan/parallel_scan_log.rs): the walks and
// bindings are scan/log_walk.wgsl's and scan/log_bindings.wgsl's, over F values; the entry points
// recurrence/channel_entries.wgsl's. Quad slots: a half output is two whole words per step.
// dtype: lc quad
// dtype: lv quad
// dtype: g quad
// dtype: h quad
// dtype: out quad store
// dtype: out2 quad store

alias F = vec4<f32>;
