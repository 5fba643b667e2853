
// prelude: ops/gelu.wgsl
// prelude: ops/matmul/common.wgsl
// dtype: a scalar
// dtype: b scalar
// One row times a matrix (M = 1, the decode step): out[z, 0, j] = sum_k a[z, 0, k] b[z, k, j].
// DOT = false (b's N axis is the dense one, HF Conv1D weights): a workgroup owns 32 columns
//   and splits K into 8 interleaved slices; neighbouring invocations read neighbouring
//   columns, so each k reads one contiguous 128-byte run of b. Grid: ceil(N/32) workgroups.
// DOT = true (b's K axis is dense, e.g. x @ wte^T): 32 invocations share one column and
//   read consecutive k, so each column is one coalesced dot product. Grid: ceil(N/8).
// Both fold their partial sums in shared memory. The batch index is workgroup_id.z.

override DOT: bool = false;

// a and b are F32, F16 or BF16 (dtype slots, read through a_at / b_at and widened to f32).
@group(0) @binding(1) var<storage, read> a: array<a_word>; // (..., 1, K) view
@group(0) @binding(2) var<storage, read> b: array<b_word>; // (..., K, N) view

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn matvec(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let wg = wid.x + wid.y * nwg.x;
    let z = wid.z;
    let base = batch_offsets(z);
    var col: u32;
    var lane: u32;   // position within the invocations sharing a column
    var lanes: u32;  // how many invocations share a column
    var step: u32;   // distance in `partial` between two of them
    if DOT {
        col = wg * 8u + lid / 32u;
        lane = lid % 32u;
        lanes = 32u;
        step = 1u;
    } else {
        col = wg * 32u + lid % 32u;
        lane = lid / 32u;
        lanes = 8u;
        step = 32u;
    }
    var acc = 0.0;
    if col < p.n {
        for (var k = lane; k < p.k; k += lanes) {
            acc = fma(a_at(base.x + k * p.a_cs), b_at(base.y + k * p.b_rs + col * p.b_cs), acc);
        }
    }
    partial[lid] = acc;
    workgroupBarrier();
    // Tree over the invocations of one column; `lanes` is the same for the whole workgroup.
    for (var s = lanes / 2u; s > 0u; s >>= 1u) {
        if lane < s {
            partial[lid] += partial[lid + s * step];
        }
        workgroupBarrier();
    }
    if lane == 0u && col < p.n {
        store(z, 0u, col, partial[lid]);
    }
}
