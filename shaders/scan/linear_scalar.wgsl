// prelude: scan/launch.wgsl
// prelude: scan/linear_walk.wgsl
// prelude: scan/channel_entries.wgsl
// The K = V = 1 affine scan, one channel per invocation (any N): the walks and bindings are
// scan/linear_walk.wgsl's, over F values; the entry points scan/channel_entries.wgsl's.
// Inputs of any dtype (scalar slots); outputs always f32: a half output here would put two
// invocations' channels in one packed word (odd N), so engine/scan/linear_gpu.rs narrows
// these f32 outputs afterwards with the word-owning conversion (tensor/convert.wgsl).
// dtype: a scalar
// dtype: x scalar
// dtype: h0 scalar
// dtype: h scalar

alias F = f32;
alias out_t = f32;
alias da_t = f32;
alias dh0_t = f32;

fn out_st(i: u32, v: f32) {
    out[i] = v;
}

fn da_st(i: u32, v: f32) {
    da[i] = v;
}

fn dh0_st(i: u32, v: f32) {
    dh0[i] = v;
}
