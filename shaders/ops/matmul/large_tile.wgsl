// prelude: ops/gelu.wgsl
// prelude: ops/matmul/common.wgsl
// dtype: a vec4
// dtype: b vec4
// The large-product path: a 128x128 block tile per workgroup of 256 invocations, each
// accumulating an 8x8 register tile, walking K in steps of 16. Per k step an invocation reads
// two vec4s of A and two of B from the shared tiles and does 64 FMAs (the 64x64 kernel: two
// and 16), so shared-memory traffic per FMA halves again.
// Invocation (tx, ty) owns rows 4 ty .. 4 ty + 3 and 64 + 4 ty .. 64 + 4 ty + 3 and the
// columns 4 tx .. and 64 + 4 tx .. likewise: the two halves keep the 16 invocations of a row
// reading consecutive vec4s of the shared tile (no bank conflicts), and the stores coalesce.
// Both operands are vec4-aligned (the host checks, as VEC_A and VEC_B of register_tiled.wgsl):
// each invocation fetches two vec4s of each operand per step, the next step's into registers
// before this step's FMAs, so global latency overlaps the arithmetic. The shared tiles are
// single-buffered: double buffering (one barrier a step) measured slower on the H200 (4096:
// 29.3 vs 32.9 TFLOP/s), twice the workgroup memory costing more occupancy than it saves.
// The accumulators are 16 named vec4s, never an array: NVIDIA's compiler keeps an indexed
// array in local memory (0.38 vs 22.5 TFLOP/s for the 64x64 kernel).
// Six more variants were measured on the H200 against this kernel's 32.9 TFLOP/s at 4096^3
// (2026-12-01, branch `mm`, one bench run each) and dropped: warp tiles, each subgroup owning
// a 32x64 region (32.7); BK = 8 (29.8); A transposed by warps 0-3 with vec4 stores, B loaded
// by warps 4-7 (29.5); BK = 32 with those stores (26.5); warp tiles with those stores (32.3);
// the same without register prefetch, loads straight into the shared tiles (29.9).
// Grid: (ceil(N/128), ceil(M/128), batch).

// a and b are F32, F16 or BF16 (dtype slots: a_at4(q) reads elements 4q .. 4q + 3 widened to
// f32), four elements per array element either way.
@group(0) @binding(1) var<storage, read> a: array<a_vec4>; // (..., M, K) view, K dense
@group(0) @binding(2) var<storage, read> b: array<b_vec4>; // (..., K, N) view, N dense

const BM: u32 = 128u;
const BN: u32 = 128u;
const BK: u32 = 16u;

// Shared tiles as vec4s: element (kk, r) of the A tile sits at sa[kk * 32 + r / 4][r % 4].
var<workgroup> sa: array<vec4<f32>, 512>; // BK x BM
var<workgroup> sb: array<vec4<f32>, 512>; // BK x BN

// Invocation lid's vec4 number `half` (0, 1) of the A tile at k0: row lid / 4 + 64 half,
// K vec4 lid % 4; zero past the edges.
fn fetch_a(base: u32, row0: u32, k0: u32, lid: u32, half: u32) -> vec4<f32> {
    let r = lid / 4u + 64u * half;
    let kq = (lid % 4u) * 4u;
    if row0 + r < p.m && k0 + kq < p.k {
        return a_at4((base + (row0 + r) * p.a_rs + k0 + kq) >> 2u);
    }
    return vec4<f32>(0.0);
}

fn put_a(lid: u32, half: u32, v: vec4<f32>) {
    let r = lid / 4u + 64u * half;
    let kq = (lid % 4u) * 4u;
    let slot = r / 4u;
    let lane = r % 4u;
    sa[kq * 32u + slot][lane] = v.x;
    sa[(kq + 1u) * 32u + slot][lane] = v.y;
    sa[(kq + 2u) * 32u + slot][lane] = v.z;
    sa[(kq + 3u) * 32u + slot][lane] = v.w;
}

// Invocation lid's vec4 number `half` of the B tile at k0: K row lid / 32 + 8 half, column
// vec4 lid % 32, which is also its slot in sb.
fn fetch_b(base: u32, col0: u32, k0: u32, lid: u32, half: u32) -> vec4<f32> {
    let kk = lid / 32u + 8u * half;
    let cq = (lid % 32u) * 4u;
    if k0 + kk < p.k && col0 + cq < p.n {
        return b_at4((base + (k0 + kk) * p.b_rs + col0 + cq) >> 2u);
    }
    return vec4<f32>(0.0);
}

@compute @workgroup_size(256)
fn large_tile(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tx = lid % 16u;
    let ty = lid / 16u;
    let row0 = wid.y * BM;
    let col0 = wid.x * BN;
    let z = wid.z;
    let base = batch_offsets(z);
    // c<i><h>: row i of the 8 (i < 4: row 4 ty + i; else 64 + 4 ty + i - 4), column half h.
    var c00 = vec4<f32>(0.0);
    var c01 = vec4<f32>(0.0);
    var c10 = vec4<f32>(0.0);
    var c11 = vec4<f32>(0.0);
    var c20 = vec4<f32>(0.0);
    var c21 = vec4<f32>(0.0);
    var c30 = vec4<f32>(0.0);
    var c31 = vec4<f32>(0.0);
    var c40 = vec4<f32>(0.0);
    var c41 = vec4<f32>(0.0);
    var c50 = vec4<f32>(0.0);
    var c51 = vec4<f32>(0.0);
    var c60 = vec4<f32>(0.0);
    var c61 = vec4<f32>(0.0);
    var c70 = vec4<f32>(0.0);
    var c71 = vec4<f32>(0.0);
    var na0 = fetch_a(base.x, row0, 0u, lid, 0u);
    var na1 = fetch_a(base.x, row0, 0u, lid, 1u);
    var nb0 = fetch_b(base.y, col0, 0u, lid, 0u);
    var nb1 = fetch_b(base.y, col0, 0u, lid, 1u);
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        put_a(lid, 0u, na0);
        put_a(lid, 1u, na1);
        sb[lid] = nb0;
        sb[lid + 256u] = nb1;
        workgroupBarrier();
        na0 = fetch_a(base.x, row0, k0 + BK, lid, 0u);
        na1 = fetch_a(base.x, row0, k0 + BK, lid, 1u);
        nb0 = fetch_b(base.y, col0, k0 + BK, lid, 0u);
        nb1 = fetch_b(base.y, col0, k0 + BK, lid, 1u);
        for (var kk = 0u; kk < BK; kk++) {
            let a0 = sa[kk * 32u + ty];
            let a1 = sa[kk * 32u + 16u + ty];
            let b0 = sb[kk * 32u + tx];
            let b1 = sb[kk * 32u + 16u + tx];
            c00 = fma(vec4<f32>(a0.x), b0, c00);
            c01 = fma(vec4<f32>(a0.x), b1, c01);
            c10 = fma(vec4<f32>(a0.y), b0, c10);
            c11 = fma(vec4<f32>(a0.y), b1, c11);
            c20 = fma(vec4<f32>(a0.z), b0, c20);
            c21 = fma(vec4<f32>(a0.z), b1, c21);
            c30 = fma(vec4<f32>(a0.w), b0, c30);
            c31 = fma(vec4<f32>(a0.w), b1, c31);
            c40 = fma(vec4<f32>(a1.x), b0, c40);
            c41 = fma(vec4<f32>(a1.x), b1, c41);
            c50 = fma(vec4<f32>(a1.y), b0, c50);
            c51 = fma(vec4<f32>(a1.y), b1, c51);
            c60 = fma(vec4<f32>(a1.z), b0, c60);
            c61 = fma(vec4<f32>(a1.z), b1, c61);
            c70 = fma(vec4<f32>(a1.w), b0, c70);
            c71 = fma(vec4<f32>(a1.w), b1, c71);
        }
        // The next step overwrites the tiles: wait until everyone has read them.
        workgroupBarrier();
    }
    let r = row0 + 4u * ty;
    let c = col0 + 4u * tx;
    store4(z, r, c, c00);
    store4(z, r, c + 64u, c01);
    store4(z, r + 1u, c, c10);
    store4(z, r + 1u, c + 64u, c11);
    store4(z, r + 2u, c, c20);
    store4(z, r + 2u, c + 64u, c21);
    store4(z, r + 3u, c, c30);
    store4(z, r + 3u, c + 64u, c31);
    store4(z, r + 64u, c, c40);
    store4(z, r + 64u, c + 64u, c41);
    store4(z, r + 65u, c, c50);
    store4(z, r + 65u, c + 64u, c51);
    store4(z, r + 66u, c, c60);
    store4(z, r + 66u, c + 64u, c61);
    store4(z, r + 67u, c, c70);
    store4(z, r + 67u, c + 64u, c71);
}
