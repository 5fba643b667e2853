// The f32 outputs of parallel_scan_log's one-channel width (prelude of scan/parallel_scan_log_scalar.wgsl and scan/parallel_scan_log_lookback_scalar.wgsl, generated from scan/parallel_scan_log.widths):
// a half output there would put two invocations' channels in one packed word, so the kernels
// write f32 and the engine narrows afterwards with the word-owning conversion
// (tensor/convert.wgsl). Stands in for the dtype slots' NAME_st of the wider widths.

alias out_t = f32;
alias out2_t = f32;

fn out_st(i: u32, v: f32) {
    out[i] = v;
}

fn out2_st(i: u32, v: f32) {
    out2[i] = v;
}
