// prelude: scan/launch.wgsl
// prelude: scan/linear_walk.wgsl
// prelude: scan/channel_entries.wgsl
// The K = V = 1 affine scan, one channel per invocation (any N): the walks and
// bindings are scan/linear_walk.wgsl's, over F values; the entry points scan/channel_entries.wgsl's.

alias F = f32;
