
// prelude: ops/gelu.wgsl
// prelude: ops/matmul/common.wgsl
// dtype: a scalar
// dtype: b scalar
// The DOT mode of matvec.wgsl (b's K axis dense) with the partial sums folded by
// subgroupAdd instead of a shared-memory tree. 32 consecutive invocations share a column;
// the host uses this variant only when the adapter's subgroups hold at most 32 invocations,
// so (subgroups being runs of consecutive invocation indices in a 1-D workgroup) a subgroup
// never straddles two columns. Grid: ceil(N/8) workgroups, batch in workgroup_id.z.

// a and b are F32, F16 or BF16 (dtype slots, read through a_at / b_at and widened to f32).
@group(0) @binding(1) var<storage, read> a: array<a_word>; // (..., 1, K) view
@group(0) @binding(2) var<storage, read> b: array<b_word>; // (..., K, N) view, dense along K

var<workgroup> partial: array<f32, 256>; // one sum per subgroup, at lid / subgroup_size

@compute @workgroup_size(256)
fn matvec_subgroup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32,
                   @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) ssz: u32) {
    let wg = wid.x + wid.y * nwg.x;
    let z = wid.z;
    let base = batch_offsets(z);
    let col = wg * 8u + lid / 32u;
    let lane = lid % 32u;
    var acc = 0.0;
    if col < p.n {
        for (var k = lane; k < p.k; k += 32u) {
            acc = fma(a_at(base.x + k * p.a_cs), b_at(base.y + k * p.b_rs + col * p.b_cs), acc);
        }
    }
    // Every invocation reaches this point, so the whole subgroup takes part.
    let s = subgroupAdd(acc);
    if sid == 0u {
        partial[lid / ssz] = s;
    }
    workgroupBarrier();
    if lane == 0u && col < p.n {
        var t = 0.0;
        for (var i = 0u; i < 32u / ssz; i++) {
            t += partial[lid / ssz + i];
        }
        store(z, 0u, col, t);
    }
}
