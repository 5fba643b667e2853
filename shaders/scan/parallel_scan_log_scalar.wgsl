// prelude: scan/launch.wgsl
// prelude: scan/log_walk.wgsl
// prelude: scan/channel_entries.wgsl
// parallel_scan_log, one channel per invocation (any D): the walks and
// bindings are scan/log_walk.wgsl's, over F values; the entry points scan/channel_entries.wgsl's.

alias F = f32;
