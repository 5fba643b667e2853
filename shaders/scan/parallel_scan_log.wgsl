// prelude: scan/launch.wgsl
// prelude: scan/log_walk.wgsl
// prelude: scan/channel_entries.wgsl
// parallel_scan_log, four adjacent channels per invocation (D % 4 == 0, and B x D at least
// VEC4_WALKS: engine/scan/launch.rs's vector_width): the walks and bindings are
// scan/log_walk.wgsl's, over F values; the entry points scan/channel_entries.wgsl's.

alias F = vec4<f32>;
