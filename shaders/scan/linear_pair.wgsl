// prelude: recurrence/launch.wgsl
// prelude: scan/linear_bindings.wgsl
// prelude: recurrence/chunk_walk.wgsl
// prelude: scan/linear_walk.wgsl
// prelude: recurrence/channel_entries.wgsl
// The K = V = 1 affine scan, two adjacent channels per invocation: the path of half storage
// with N % 2 == 0 (engine/scan/linear_gpu.rs), where each step's pair of halves is one whole
// packed word that only this invocation writes. The walks and bindings are
// scan/linear_walk.wgsl's and scan/linear_bindings.wgsl's, over F values; the entry points recurrence/channel_entries.wgsl's.
// dtype: a pair
// dtype: x pair
// dtype: h0 pair
// dtype: h pair
// dtype: out pair store
// dtype: da pair store
// dtype: dh0 pair store

alias F = vec2<f32>;
