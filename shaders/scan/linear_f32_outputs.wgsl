// The f32 outputs of the K = V = 1 affine scan's one-channel width (prelude of scan/linear_scalar.wgsl and scan/linear_lookback_scalar.wgsl, generated from scan/linear.widths):
// a half output there would put two invocations' channels in one packed word, so the kernels
// write f32 and the engine narrows afterwards with the word-owning conversion
// (tensor/convert.wgsl). Stands in for the dtype slots' NAME_st of the wider widths.

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
