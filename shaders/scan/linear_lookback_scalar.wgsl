// prelude: recurrence/launch.wgsl
// prelude: scan/linear_bindings.wgsl
// prelude: scan/linear_f32_outputs.wgsl
// prelude: recurrence/width_scalar.wgsl
// prelude: recurrence/lookback.wgsl
// prelude: scan/linear_lookback.wgsl
// The one-pass linear scan (scan/linear_lookback.wgsl), one channel an invocation (any N).
// Inputs of any dtype (scalar slots); outputs always f32: a half output here would put two
// invocations' channels in one packed word (odd N), so engine/scan/linear_gpu.rs narrows
// these f32 outputs afterwards with the word-owning conversion.
// dtype: a scalar
// dtype: x scalar
// dtype: h0 scalar
// dtype: h scalar
