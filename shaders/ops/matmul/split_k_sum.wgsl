// prelude: ops/gelu.wgsl
// prelude: ops/matmul/common.wgsl
// prelude: ops/matmul/slice_sum.wgsl
// The second half of a split-K product: the S partial products over K-slices, (S, M, N) dense,
// summed per element in slice order and passed through the product's epilogue (scale, bias,
// GELU, residual), so a split product gives what the unsplit kernel's epilogue would:
//   out[i, j] = epilogue(sum_s parts[s, i, j], j)
// p.k holds S here; p.m, p.n, alpha and the bias view are the product's. One invocation per
// output element. Grid: ceil(M N / 256) workgroups (x + y * nwg.x).

@group(0) @binding(1) var<storage, read> parts: array<f32>; // (S, M, N)
@group(0) @binding(2) var<storage, read> unused: array<f32>; // the kernels' b slot; unread

// One invocation per element; the engine sizes the grid from this workgroup size.
const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn split_k_sum(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * WG + lid;
    let mn = p.m * p.n;
    if i >= mn {
        return;
    }
    store(0u, i / p.n, i % p.n, slice_sum(i, mn, p.k));
}
