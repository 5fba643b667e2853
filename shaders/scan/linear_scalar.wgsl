// prelude: recurrence/launch.wgsl
// prelude: scan/linear_bindings.wgsl
// prelude: scan/linear_f32_outputs.wgsl
// prelude: recurrence/chunk_walk.wgsl
// prelude: scan/linear_walk.wgsl
// prelude: recurrence/channel_entries.wgsl
// The K = V = 1 affine scan, one channel per invocation (any N): the walks and bindings are
// scan/linear_walk.wgsl's and scan/linear_bindings.wgsl's, over F values; the entry points recurrence/channel_entries.wgsl's.
// Inputs of any dtype (scalar slots); outputs always f32: a half output here would put two
// invocations' channels in one packed word (odd N), so engine/scan/linear_gpu.rs narrows
// these f32 outputs afterwards with the word-owning conversion (tensor/convert.wgsl).
// dtype: a scalar
// dtype: x scalar
// dtype: h0 scalar
// dtype: h scalar

alias F = f32;
