// parallel_scan_log's uniform and bindings (prelude of the width kernels of
// scan/parallel_scan_log.widths, both the
// walks of scan/log_walk.wgsl and the one pass of scan/parallel_scan_log_lookback.wgsl: the
// engine binds the same buffers to both, engine/scan/parallel_scan_log.rs). Each brings its
// own `side` at binding 7, whose layout is its own. Every index counts F values (W channels
// each).

struct Params {
    launch: Launch, // lanes = B * D / W, W channels an invocation (recurrence/launch.wgsl)
    d: u32,         // F values per time step: D / W
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> lc: array<lc_t>;          // (B, T, D) log coefficients
@group(0) @binding(2) var<storage, read> lv: array<lv_t>;          // (B, T + 1, D) log values, lv_0 = log h0
@group(0) @binding(3) var<storage, read> g: array<g_t>;            // (B, T, D) dL/dh, read when REVERSE
@group(0) @binding(4) var<storage, read> h: array<h_t>;            // (B, T, D) forward output, read when REVERSE
@group(0) @binding(5) var<storage, read_write> out: array<out_t>;  // (B, T, D): h, or d lc when REVERSE
@group(0) @binding(6) var<storage, read_write> out2: array<out2_t>; // (B, T + 1, D): d lv when REVERSE
