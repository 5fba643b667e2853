// prelude: scan/launch.wgsl
// prelude: scan/linear_walk.wgsl
// prelude: scan/channel_entries.wgsl
// The K = V = 1 affine scan, four adjacent channels per invocation (N % 4 == 0, and B x N at
// least VEC4_WALKS: engine/scan/launch.rs's vector_width): the walks and bindings are
// scan/linear_walk.wgsl's, over F values; the entry points scan/channel_entries.wgsl's.

alias F = vec4<f32>;
