// prelude: ops/reduce/rows.wgsl
// Index of the largest element of each row, one workgroup per row, written as f32 (exact
// below 2^24). The rule is torch's and the CPU context's (`reference::nn::argmax_index`):
// NaN is larger than every number (the first NaN wins), -0.0 equals +0.0, and the first
// index wins a tie. The result is always an index inside the row (cols >= 1).
//
// Why keys: WGSL lets an implementation assume no NaN or infinity, so float comparisons
// cannot be trusted with them (llvmpipe and lavapipe fold them differently). Each element
// becomes an order-preserving u32 key, compared as integers: NaN -> 0xffffffff, -0.0 -> +0.0,
// then negatives -> ~bits and non-negatives -> bits | 0x80000000. Valid keys are >= 0x007fffff
// (the key of -inf), so an invocation that saw no column keeps key 0 and loses to every column.

var<workgroup> best_k: array<u32, 256>;
var<workgroup> best_i: array<u32, 256>;

const NONE: u32 = 0xffffffffu;

fn argmax_key(v: f32) -> u32 {
    var b = bitcast<u32>(v);
    if (b & 0x7fffffffu) > 0x7f800000u {
        return 0xffffffffu; // NaN, either sign, any payload
    }
    if b == 0x80000000u {
        b = 0u; // -0.0 ties with +0.0
    }
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

@compute @workgroup_size(256)
fn argmax(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if row >= p.rows {
        return;
    }
    let base = row * p.cols;
    // Each invocation scans its columns in increasing order, so `>` keeps the first maximum.
    var k = 0u;
    var i = NONE;
    for (var c = lid; c < p.cols; c += 256u) {
        let e = argmax_key(x[base + c]);
        if e > k || i == NONE {
            k = e;
            i = c;
        }
    }
    best_k[lid] = k;
    best_i[lid] = i;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {
        if lid < s {
            let ok = best_k[lid + s];
            let oi = best_i[lid + s];
            // NONE is the largest index, so an empty invocation also loses a tie at key 0.
            if ok > best_k[lid] || (ok == best_k[lid] && oi < best_i[lid]) {
                best_k[lid] = ok;
                best_i[lid] = oi;
            }
        }
        workgroupBarrier();
    }
    if lid == 0u {
        out[row] = f32(best_i[0]);
    }
}
