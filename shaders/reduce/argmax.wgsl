// prelude: reduce/rows.wgsl
// Index of the largest element of each row (the first one on ties), one workgroup per row,
// written as f32 (exact below 2^24):
//   out[r] = min { c : x[r, c] = max_c' x[r, c'] }.

var<workgroup> best_v: array<f32, 256>;
var<workgroup> best_i: array<u32, 256>;

@compute @workgroup_size(256)
fn argmax(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let row = wid.x + wid.y * nwg.x;
    if row >= p.rows {
        return;
    }
    let base = row * p.cols;
    // Each invocation scans its columns in increasing order, so `>` keeps the first maximum.
    var v = -3.0e38;
    var i = 0xffffffffu;
    for (var c = lid; c < p.cols; c += 256u) {
        let e = x[base + c];
        if e > v || i == 0xffffffffu {
            v = e;
            i = c;
        }
    }
    best_v[lid] = v;
    best_i[lid] = i;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {
        if lid < s {
            let ov = best_v[lid + s];
            let oi = best_i[lid + s];
            if ov > best_v[lid] || (ov == best_v[lid] && oi < best_i[lid]) {
                best_v[lid] = ov;
                best_i[lid] = oi;
            }
        }
        workgroupBarrier();
    }
    if lid == 0u {
        out[row] = f32(best_i[0]);
    }
}
