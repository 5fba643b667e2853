
// prelude: ops/gelu.wgsl
// prelude: ops/matmul/common.wgsl
// dtype: a scalar
// dtype: b scalar
// The readable baseline (seed 004): a 16x16 shared-memory tile. Each workgroup owns a 16x16
// tile of out[z]; it walks K in steps of 16, each invocation staging one element of the A
// tile and one of the B tile (zero outside the matrix), then accumulating 16 products from
// shared memory. Every global element is read once per workgroup instead of once per
// invocation. Grid: (ceil(N/16), ceil(M/16), batch).

// a and b are F32, F16 or BF16 (dtype slots, read through a_at / b_at and widened to f32).
@group(0) @binding(1) var<storage, read> a: array<a_word>; // (..., M, K) view
@group(0) @binding(2) var<storage, read> b: array<b_word>; // (..., K, N) view

var<workgroup> sa: array<array<f32, 16>, 16>; // [row][k]
var<workgroup> sb: array<array<f32, 16>, 16>; // [k][col]

@compute @workgroup_size(16, 16)
fn tiled16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.y * 16u + lid.y;
    let col = wid.x * 16u + lid.x;
    let z = wid.z;
    let base = batch_offsets(z);
    var acc = 0.0;
    // p.k is uniform, so every invocation runs the same trips and the barriers stay uniform.
    for (var k0 = 0u; k0 < p.k; k0 += 16u) {
        let ka = k0 + lid.x;
        var av = 0.0;
        if row < p.m && ka < p.k {
            av = a_at(base.x + row * p.a_rs + ka * p.a_cs);
        }
        sa[lid.y][lid.x] = av;
        let kb = k0 + lid.y;
        var bv = 0.0;
        if kb < p.k && col < p.n {
            bv = b_at(base.y + kb * p.b_rs + col * p.b_cs);
        }
        sb[lid.y][lid.x] = bv;
        workgroupBarrier();
        for (var kk = 0u; kk < 16u; kk++) {
            acc = fma(sa[lid.y][kk], sb[kk][lid.x], acc);
        }
        // Keeps the next trip's stores from overwriting a tile still being read.
        workgroupBarrier();
    }
    if row < p.m && col < p.n {
        store(z, row, col, acc);
    }
}
