// prelude: ops/matmul/cooperative_enable.wgsl
// prelude: ops/gelu.wgsl
// prelude: ops/matmul/common.wgsl
// MatmulPath::Cooperative on large products: the kernel of cooperative.wgsl with its tiles
// staged in workgroup memory. Eight subgroups of 32 (256 invocations) compute a 256 x 128
// block of the output, each subgroup a 64 x 64 part of it as 4 x 4 accumulators of 16 x 16.
// Per 16-wide K slice the workgroup loads the slice of a (256 x 16 halves) and of b
// (16 x 128) once, along whichever axis each operand is dense (TRANS_A, TRANS_B), with each
// invocation issuing the next slice's six 8-byte loads before the multiply-adds of the current
// one (double-buffered tiles, one barrier a slice); the
// subgroups then read their fragments from workgroup memory, so each global element is read
// once per workgroup, not once per subgroup.
// Why the tiles are vec4<f16> words: NVIDIA's compiler (driver 580) rejects a cooperative load
// from workgroup memory through a pointer whose element type is not f16 (u32 words fail with
// "NVVM compilation failed"). Why the rows carry 8 halves of padding: without it the 16
// rows of a fragment sit in the same memory banks (4096^3 on an H100: 64.6 TFLOP/s unpadded
// against 116.4 padded, 120.7 for this 256 x 128 form; dev/src/bin/coop_probe.rs).
// The host (engine/ops/matmul/launch.rs) takes this kernel for M a multiple of 256, N of 128,
// K of 16, subgroups exactly 32 wide and enough tiles to fill the GPU, with cooperative.wgsl's
// alignment rules (offsets, row and batch strides multiples of 8 elements: every vec4 load
// below is aligned). The epilogue is cooperative.wgsl's.
// Grid: (N / 128, M / 256, batch).

alias TileA = coop_mat16x16<f16, A>;
alias TileB = coop_mat16x16<f16, B>;
alias TileC = coop_mat16x16<f32, C>;

// F16 tensors are packed two halves a u32 word: four halves are one vec4<f16>.
@group(0) @binding(1) var<storage, read> a: array<vec4<f16>>; // (..., M, K / 4) view, K dense (M: TRANS_A)
@group(0) @binding(2) var<storage, read> b: array<vec4<f16>>; // (..., K, N / 4) view, N dense (K: TRANS_B)
@group(0) @binding(6) var<storage, read> zero: array<f32>;    // (256,) zeros: the accumulators' start

// 1: a's view is transposed (M dense), b's (K dense): cooperative.wgsl's flags. A transposed
// operand's slice is staged along its dense axis and its fragments load column-major.
override TRANS_A: u32 = 0u;
override TRANS_B: u32 = 0u;

// Two slices each. a's: 256 rows of 4 words (+ 2 of padding), or with TRANS_A 16 rows (k) of
// 64 words (+ 2). b's: 16 rows of 32 words (+ 2), or with TRANS_B 128 rows (n) of 4 (+ 2).
var<workgroup> tile_a: array<vec4<f16>, 3072>; // (2, 256, 6) or (2, 16, 66)
var<workgroup> tile_b: array<vec4<f16>, 1536>; // (2, 16, 34) or (2, 128, 6)

// Rows r .. r + 16 of a's tile (r a multiple of 16) at slice word t.
fn frag_a(t: u32, r: u32) -> TileA {
    if TRANS_A != 0u {
        let i = t + r / 4u;
        return coopLoad<TileA>(&tile_a[i], 66u);
    }
    let i = t + r * 6u;
    return coopLoadT<TileA>(&tile_a[i], 6u);
}

// Columns c .. c + 16 of b's tile (c a multiple of 16) at slice word t.
fn frag_b(t: u32, c: u32) -> TileB {
    if TRANS_B != 0u {
        let i = t + c * 6u;
        return coopLoad<TileB>(&tile_b[i], 6u);
    }
    let i = t + c / 4u;
    return coopLoadT<TileB>(&tile_b[i], 34u);
}

@compute @workgroup_size(256)
fn cooperative_staged(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let z = wid.z;
    let base = batch_offsets(z) / 4u;
    let r0 = wid.y * 256u;
    let q0 = wid.x * 128u;
    // This invocation's share of a slice: its loads i = 0 .. 3 of a read global word
    // ga + i ga_step and write tile word sa + i sa_step, the next slice ga_next words on;
    // b's two likewise.
    var ga = base.x + (r0 + lid / 4u) * (p.a_rs / 4u) + lid % 4u;
    var ga_step = 64u * (p.a_rs / 4u);
    var ga_next = 4u;
    var sa = (lid / 4u) * 6u + lid % 4u;
    var sa_step = 384u;
    var slice_a = 1536u;
    if TRANS_A != 0u {
        ga = base.x + (lid / 64u) * (p.a_cs / 4u) + r0 / 4u + lid % 64u;
        ga_step = 4u * (p.a_cs / 4u);
        ga_next = 4u * p.a_cs;
        sa = (lid / 64u) * 66u + lid % 64u;
        sa_step = 264u;
        slice_a = 1056u;
    }
    var gb = base.y + (lid / 32u) * (p.b_rs / 4u) + q0 / 4u + lid % 32u;
    var gb_step = 8u * (p.b_rs / 4u);
    var gb_next = 4u * p.b_rs;
    var sb = (lid / 32u) * 34u + lid % 32u;
    var sb_step = 272u;
    var slice_b = 544u;
    if TRANS_B != 0u {
        gb = base.y + (q0 + lid / 4u) * (p.b_cs / 4u) + lid % 4u;
        gb_step = 64u * (p.b_cs / 4u);
        gb_next = 4u;
        sb = (lid / 4u) * 6u + lid % 4u;
        sb_step = 384u;
        slice_b = 768u;
    }
    var va0 = a[ga];
    var va1 = a[ga + ga_step];
    var va2 = a[ga + 2u * ga_step];
    var va3 = a[ga + 3u * ga_step];
    var vb0 = b[gb];
    var vb1 = b[gb + gb_step];
    // The subgroup's 64 x 64 part: rows r0 + sr, columns q0 + sq.
    let s = lid / 32u;
    let sr = (s / 2u) * 64u;
    let sq = (s % 2u) * 64u;
    var c00 = coopLoadT<TileC>(&zero[0], 16u);
    var c01 = c00;
    var c02 = c00;
    var c03 = c00;
    var c10 = c00;
    var c11 = c00;
    var c12 = c00;
    var c13 = c00;
    var c20 = c00;
    var c21 = c00;
    var c22 = c00;
    var c23 = c00;
    var c30 = c00;
    var c31 = c00;
    var c32 = c00;
    var c33 = c00;
    for (var k = 0u; k < p.k; k += 16u) {
        let cur = (k / 16u) % 2u;
        let ta = cur * slice_a;
        let tb = cur * slice_b;
        tile_a[ta + sa] = va0;
        tile_a[ta + sa + sa_step] = va1;
        tile_a[ta + sa + 2u * sa_step] = va2;
        tile_a[ta + sa + 3u * sa_step] = va3;
        tile_b[tb + sb] = vb0;
        tile_b[tb + sb + sb_step] = vb1;
        workgroupBarrier();
        // The next slice's loads are in flight during this slice's multiply-adds.
        if k + 16u < p.k {
            ga += ga_next;
            gb += gb_next;
            va0 = a[ga];
            va1 = a[ga + ga_step];
            va2 = a[ga + 2u * ga_step];
            va3 = a[ga + 3u * ga_step];
            vb0 = b[gb];
            vb1 = b[gb + gb_step];
        }
        let x0 = frag_a(ta, sr);
        let x1 = frag_a(ta, sr + 16u);
        let x2 = frag_a(ta, sr + 32u);
        let x3 = frag_a(ta, sr + 48u);
        let y0 = frag_b(tb, sq);
        let y1 = frag_b(tb, sq + 16u);
        let y2 = frag_b(tb, sq + 32u);
        let y3 = frag_b(tb, sq + 48u);
        c00 = coopMultiplyAdd(x0, y0, c00);
        c01 = coopMultiplyAdd(x0, y1, c01);
        c02 = coopMultiplyAdd(x0, y2, c02);
        c03 = coopMultiplyAdd(x0, y3, c03);
        c10 = coopMultiplyAdd(x1, y0, c10);
        c11 = coopMultiplyAdd(x1, y1, c11);
        c12 = coopMultiplyAdd(x1, y2, c12);
        c13 = coopMultiplyAdd(x1, y3, c13);
        c20 = coopMultiplyAdd(x2, y0, c20);
        c21 = coopMultiplyAdd(x2, y1, c21);
        c22 = coopMultiplyAdd(x2, y2, c22);
        c23 = coopMultiplyAdd(x2, y3, c23);
        c30 = coopMultiplyAdd(x3, y0, c30);
        c31 = coopMultiplyAdd(x3, y1, c31);
        c32 = coopMultiplyAdd(x3, y2, c32);
        c33 = coopMultiplyAdd(x3, y3, c33);
    }
    let n = p.n;
    // Offsets as named `let`s, as in cooperative.wgsl (naga 30's SPIR-V writer).
    let o = (z * p.m + r0 + sr) * n + q0 + sq;
    let o00 = o + 0u * n + 0u;
    coopStoreT(c00, &out[o00], n);
    let o01 = o + 0u * n + 16u;
    coopStoreT(c01, &out[o01], n);
    let o02 = o + 0u * n + 32u;
    coopStoreT(c02, &out[o02], n);
    let o03 = o + 0u * n + 48u;
    coopStoreT(c03, &out[o03], n);
    let o10 = o + 16u * n + 0u;
    coopStoreT(c10, &out[o10], n);
    let o11 = o + 16u * n + 16u;
    coopStoreT(c11, &out[o11], n);
    let o12 = o + 16u * n + 32u;
    coopStoreT(c12, &out[o12], n);
    let o13 = o + 16u * n + 48u;
    coopStoreT(c13, &out[o13], n);
    let o20 = o + 32u * n + 0u;
    coopStoreT(c20, &out[o20], n);
    let o21 = o + 32u * n + 16u;
    coopStoreT(c21, &out[o21], n);
    let o22 = o + 32u * n + 32u;
    coopStoreT(c22, &out[o22], n);
    let o23 = o + 32u * n + 48u;
    coopStoreT(c23, &out[o23], n);
    let o30 = o + 48u * n + 0u;
    coopStoreT(c30, &out[o30], n);
    let o31 = o + 48u * n + 16u;
    coopStoreT(c31, &out[o31], n);
    let o32 = o + 48u * n + 32u;
    coopStoreT(c32, &out[o32], n);
    let o33 = o + 48u * n + 48u;
    coopStoreT(c33, &out[o33], n);
    if EPILOGUE != 0u || p.alpha != 1.0 {
        // Every subgroup's stores are visible to the workgroup after the barrier.
        storageBarrier();
        for (var e = lid; e < 32768u; e += 256u) {
            let row = r0 + e / 128u;
            let col = q0 + e % 128u;
            store(z, row, col, out[(z * p.m + row) * n + col]);
        }
    }
}
