// A workgroup-wide sum (and max, below) over 256 invocations in three barriers (prepended to
// the decode kernels): 16 partial sums of 16, then every invocation adds the 16.
// Why not a halving tree: its 9 barriers cost more than the adds on CPU adapters (llvmpipe
// runs every barrier as a pass over all 256 invocations), and the order here is fixed too.
// Call from uniform control flow only; every invocation gets the same result.

var<workgroup> sum_part: array<f32, 256>;
var<workgroup> sum_16: array<f32, 16>;

fn wg_sum(lid: u32, v: f32) -> f32 {
    sum_part[lid] = v;
    workgroupBarrier();
    if lid < 16u {
        var s = 0.0;
        for (var i = 0u; i < 16u; i++) {
            s += sum_part[16u * lid + i];
        }
        sum_16[lid] = s;
    }
    workgroupBarrier();
    var t = 0.0;
    for (var i = 0u; i < 16u; i++) {
        t += sum_16[i];
    }
    // The next call overwrites the partial sums: wait until everyone has read them.
    workgroupBarrier();
    return t;
}

// The workgroup-wide max, in the same three barriers and with the same contract.
fn wg_max(lid: u32, v: f32) -> f32 {
    sum_part[lid] = v;
    workgroupBarrier();
    if lid < 16u {
        var s = sum_part[16u * lid];
        for (var i = 1u; i < 16u; i++) {
            s = max(s, sum_part[16u * lid + i]);
        }
        sum_16[lid] = s;
    }
    workgroupBarrier();
    var t = sum_16[0];
    for (var i = 1u; i < 16u; i++) {
        t = max(t, sum_16[i]);
    }
    workgroupBarrier();
    return t;
}
