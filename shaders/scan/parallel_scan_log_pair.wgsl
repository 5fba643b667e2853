// prelude: recurrence/launch.wgsl
// prelude: scan/log_bindings.wgsl
// prelude: recurrence/chunk_walk.wgsl
// prelude: scan/log_walk.wgsl
// prelude: recurrence/channel_entries.wgsl
// parallel_scan_log, two adjacent channels per invocation: the path of half storage with
// D % 2 == 0 (engine/scan/parallel_scan_log.rs), each step's pair of halves one whole packed
// word that only this invocation writes. The walks and bindings are scan/log_walk.wgsl's and scan/log_bindings.wgsl's,
// over F values; the entry points recurrence/channel_entries.wgsl's.
// dtype: lc pair
// dtype: lv pair
// dtype: g pair
// dtype: h pair
// dtype: out pair store
// dtype: out2 pair store

alias F = vec2<f32>;
