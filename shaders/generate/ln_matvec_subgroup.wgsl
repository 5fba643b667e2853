// prelude: ops/reduce/tree.wgsl
// prelude: ops/gelu.wgsl
// prelude: generate/state.wgsl
// prelude: generate/ln_matvec_body.wgsl
// The decode projection (generate/ln_matvec_body.wgsl) with workgroup sums through subgroups (the
// shared-memory ones of ops/reduce/tree.wgsl unused; its row_scale and norm helpers used): each
// sum is a subgroup reduction and one barrier, where the shared-memory trees take three to
// eight. The host uses it where the adapter's subgroups hold at least max(C4, 4) invocations
// (so one subgroup holds every column of the workgroup and at most 64 subgroups make a
// workgroup) and are runs of consecutive invocation indices of the 1-D workgroup.

var<private> sid: u32;   // subgroup_invocation_id
var<private> ssz: u32;   // subgroup_size

var<workgroup> sums: array<f32, 128>;            // (2 slots, 64 subgroups)
var<workgroup> maxes: array<f32, 64>;            // (64 subgroups)
var<workgroup> folds: array<vec4<f32>, 256>;     // (256 / ssz subgroups, C4 columns)

fn group_sum(lid: u32, v: f32, slot: u32) -> f32 {
    let s = subgroupAdd(v);
    if sid == 0u {
        sums[slot * 64u + lid / ssz] = s;
    }
    workgroupBarrier();
    var t = 0.0;
    for (var g = 0u; g < 256u / ssz; g++) {
        t += sums[slot * 64u + g];
    }
    return t;
}

// (sum of s, max of m) over the workgroup, in one barrier (slot 0 of `sums`).
fn group_sum_max(lid: u32, s: f32, m: f32) -> vec2<f32> {
    let a = subgroupAdd(s);
    let b = subgroupMax(m);
    if sid == 0u {
        sums[lid / ssz] = a;
        maxes[lid / ssz] = b;
    }
    workgroupBarrier();
    var t = vec2<f32>(0.0);
    for (var g = 0u; g < 256u / ssz; g++) {
        t = vec2<f32>(t.x + sums[g], max(t.y, maxes[g]));
    }
    return t;
}

// The sum over the 256 / C4 slices of lid's column, valid at lid < C4: lanes C4 apart hold
// the same column, so an xor butterfly over the strides C4 .. ssz / 2 sums a subgroup's
// slices, then invocation c < C4 adds the subgroups' sums of column c.
fn fold_slices(lid: u32, acc: vec4<f32>) -> vec4<f32> {
    var a = acc;
    for (var o = C4; o < ssz; o <<= 1u) {
        a += subgroupShuffleXor(a, o);
    }
    if sid < C4 {
        folds[(lid / ssz) * C4 + sid] = a;
    }
    workgroupBarrier();
    var t = vec4<f32>(0.0);
    if lid < C4 {
        for (var g = 0u; g < 256u / ssz; g++) {
            t += folds[g * C4 + lid];
        }
    }
    return t;
}

@compute @workgroup_size(256)
fn ln_matvec_subgroup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32,
                      @builtin(subgroup_invocation_id) s_id: u32, @builtin(subgroup_size) s_size: u32) {
    sid = s_id;
    ssz = s_size;
    project(wid.x + wid.y * nwg.x, lid);
}
