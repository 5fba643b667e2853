// prelude: scan/launch.wgsl
// prelude: scan/width_scalar.wgsl
// prelude: scan/lookback.wgsl
// prelude: scan/linear_lookback.wgsl
// The one-pass linear scan (scan/linear_lookback.wgsl), one channel an invocation (any N).
// Inputs of any dtype (scalar slots); outputs always f32: a half output here would put two
// invocations' channels in one packed word (odd N), so engine/scan/linear_gpu.rs narrows
// these f32 outputs afterwards with the word-owning conversion.
// dtype: a scalar
// dtype: x scalar
// dtype: h0 scalar
// dtype: h scalar

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
