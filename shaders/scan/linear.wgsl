// prelude: recurrence/launch.wgsl
// prelude: scan/linear_bindings.wgsl
// prelude: recurrence/chunk_walk.wgsl
// prelude: scan/linear_walk.wgsl
// prelude: recurrence/channel_entries.wgsl
// The K = V = 1 affine scan, four adjacent channels per invocation (N % 4 == 0; f32 when B x N
// is at least VEC4_WALKS, halves whenever N % 4 == 0: engine/scan/linear_gpu.rs): the walks and
// bindings are scan/linear_walk.wgsl's and scan/linear_bindings.wgsl's, over F values; the entry points
// recurrence/channel_entries.wgsl's. Every input and output is a quad slot: a half output is two whole
// words per step and invocation.
// dtype: a quad
// dtype: x quad
// dtype: h0 quad
// dtype: h quad
// dtype: out quad store
// dtype: da quad store
// dtype: dh0 quad store

alias F = vec4<f32>;
