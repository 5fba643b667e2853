// Shared by the row kernels (prepended): workgroup-wide sum and max over 256 invocations.
// Call from uniform control flow only (they hold barriers); every invocation gets the result.

var<workgroup> red: array<f32, 256>;

fn tree_sum(lid: u32, v: f32) -> f32 {
    red[lid] = v;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {
        if lid < s {
            red[lid] += red[lid + s];
        }
        workgroupBarrier();
    }
    let r = red[0];
    // The next call overwrites `red`: wait until everyone has read the result.
    workgroupBarrier();
    return r;
}

fn tree_max(lid: u32, v: f32) -> f32 {
    red[lid] = v;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {
        if lid < s {
            red[lid] = max(red[lid], red[lid + s]);
        }
        workgroupBarrier();
    }
    let r = red[0];
    workgroupBarrier();
    return r;
}
