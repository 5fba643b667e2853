// The dA pass of the affine scans' backwards, prelude of scan/matrix_affine_scan_backward.wgsl
// and its k = 8 and (k, v) = (2, 1) forms, scan/affine8_backward.wgsl and
// scan/matrix2_backward.wgsl: after the reverse scan has produced G = dB,
// dA_t = G_t H_{t-1}^T with H_{-1} = h0 (zero when absent). Their uniform (written by
// engine/scan/affine_gpu.rs, `backward_da_gpu`) and their entry point `scan_backward_da` are
// written once here; each kernel defines `fn backward_da(e: u32)`, the work of invocation
// e < total (what one invocation covers, each kernel says).

struct Params {
    total: u32,  // invocations
    n: u32,      // N
    t_len: u32,  // T
    has_h0: u32, // 1 when h0 is bound
}

@group(0) @binding(0) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn scan_backward_da(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let e = invocation(wid, nwg, lid);
    if e < p.total {
        backward_da(e);
    }
}
