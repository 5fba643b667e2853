// prelude: ops/reduce/tree.wgsl
// prelude: ops/gelu.wgsl
// prelude: generate/state.wgsl
// prelude: generate/ln_matvec_body.wgsl
// The decode projection (generate/ln_matvec_body.wgsl) with workgroup sums through shared memory,
// for adapters without subgroups.

var<workgroup> part: array<vec4<f32>, 256>;

fn group_sum(lid: u32, v: f32, slot: u32) -> f32 {
    return tree_sum(lid, v);
}

// (sum of s, max of m) over the workgroup.
fn group_sum_max(lid: u32, s: f32, m: f32) -> vec2<f32> {
    return vec2<f32>(tree_sum(lid, s), tree_max(lid, m));
}

// The sum over the 256 / C4 slices of lid's column, valid at lid < C4: a halving tree.
fn fold_slices(lid: u32, acc: vec4<f32>) -> vec4<f32> {
    part[lid] = acc;
    workgroupBarrier();
    for (var s = 128u; s >= C4; s >>= 1u) {
        if lid < s {
            part[lid] += part[lid + s];
        }
        workgroupBarrier();
    }
    return part[lid];
}

@compute @workgroup_size(256)
fn ln_matvec(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    project(wid.x + wid.y * nwg.x, lid);
}
