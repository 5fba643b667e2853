// prelude: ops/softmax_rows.wgsl
// ops/softmax.wgsl's softmax with one subgroup per row instead of one workgroup: each row's
// max and sum are one subgroup reduction each, no
// barrier, where the workgroup's shared-memory trees take eight barriers apiece. Why: GPT-2's
// training attention softmaxes rows of 256 columns, and at one row a workgroup the barriers,
// not the bytes, set the time. The host uses it where the adapter's subgroups have one fixed
// size LANES (a power of two, 4 to 256) and are runs of consecutive invocation indices of the
// 1-D workgroup, so subgroup i of a workgroup is invocations LANES i .. LANES (i + 1).
// Grid: ceil(rows / (256 / LANES)) workgroups (x + y * nwg.x); row = group * 256 / LANES + lid / LANES.

override LANES: u32 = 32u;

@compute @workgroup_size(256)
fn softmax_subgroup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    let row = (wid.x + wid.y * nwg.x) * (256u / LANES) + lid / LANES;
    let lane = lid % LANES;
    // No early return: a row past the end walks no columns, and the reductions stay in the
    // subgroup's uniform control flow.
    let live = row < p.rows;
    let visible = select(0u, visible_of(row), live);
    let base = row * p.cols;
    var m = MAX_SENTINEL;
    for (var c = lane; c < visible; c += LANES) {
        m = max(m, x[base + c]);
    }
    let mx = subgroupMax(m);
    var s = 0.0;
    for (var c = lane; c < visible; c += LANES) {
        s += exp(x[base + c] - mx);
    }
    let inv = 1.0 / subgroupAdd(s);
    let cols = select(0u, p.cols, live);
    for (var c = lane; c < cols; c += LANES) {
        var v = 0.0;
        if c < visible {
            v = exp(x[base + c] - mx) * inv;
        }
        out[base + c] = v;
    }
}
