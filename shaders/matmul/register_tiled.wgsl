
// prelude: matmul/common.wgsl
// The fast path: a 64x64 block tile per workgroup of 256 invocations, each accumulating a 4x4
// register tile, walking K in steps of 16. The shared tiles are loaded once per step (four
// elements or one vec4 per invocation) and each shared value loaded into a register feeds
// four FMAs, so shared-memory traffic per FMA is a quarter of the 16x16 kernel's.
// Invocation (tx, ty) owns rows ty + 16 i and columns tx + 16 j (i, j < 4): neighbours read
// neighbouring shared words, which spreads the reads over banks.
// VEC_A / VEC_B: the host proved the operand's K (resp. N) axis dense with every row and batch
// start a multiple of 4 and K (resp. N) a multiple of 4, so whole vec4s load at once.
// Grid: (ceil(N/64), ceil(M/64), batch).

override VEC_A: bool = false;
override VEC_B: bool = false;

@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>; // (..., M, K) view, element i at [i / 4][i % 4]
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>; // (..., K, N) view

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 16u;

var<workgroup> sa: array<f32, 1024>; // BK x BM, [kk * BM + r] so a k-step reads a row of M
var<workgroup> sb: array<f32, 1024>; // BK x BN, [kk * BN + c]

fn a_at(i: u32) -> f32 {
    return a[i >> 2u][i & 3u];
}

fn b_at(i: u32) -> f32 {
    return b[i >> 2u][i & 3u];
}

fn load_a_tile(base: u32, row0: u32, k0: u32, lid: u32) {
    if VEC_A {
        let r = lid / 4u;
        let kq = (lid % 4u) * 4u;
        var v = vec4<f32>(0.0);
        if row0 + r < p.m && k0 + kq < p.k {
            v = a[(base + (row0 + r) * p.a_rs + k0 + kq) >> 2u];
        }
        for (var c = 0u; c < 4u; c++) {
            sa[(kq + c) * BM + r] = v[c];
        }
        return;
    }
    for (var t = 0u; t < 4u; t++) {
        let e = lid + 256u * t;
        // Consecutive invocations walk the operand's dense axis, so loads coalesce.
        var r = e / BK;
        var kk = e % BK;
        if p.a_cs != 1u {
            r = e % BM;
            kk = e / BM;
        }
        var v = 0.0;
        if row0 + r < p.m && k0 + kk < p.k {
            v = a_at(base + (row0 + r) * p.a_rs + (k0 + kk) * p.a_cs);
        }
        sa[kk * BM + r] = v;
    }
}

fn load_b_tile(base: u32, col0: u32, k0: u32, lid: u32) {
    if VEC_B {
        let kk = lid / 16u;
        let cq = (lid % 16u) * 4u;
        var v = vec4<f32>(0.0);
        if k0 + kk < p.k && col0 + cq < p.n {
            v = b[(base + (k0 + kk) * p.b_rs + col0 + cq) >> 2u];
        }
        for (var c = 0u; c < 4u; c++) {
            sb[kk * BN + cq + c] = v[c];
        }
        return;
    }
    for (var t = 0u; t < 4u; t++) {
        let e = lid + 256u * t;
        var kk = e / BN;
        var c = e % BN;
        if p.b_cs != 1u {
            kk = e % BK;
            c = e / BK;
        }
        var v = 0.0;
        if k0 + kk < p.k && col0 + c < p.n {
            v = b_at(base + (k0 + kk) * p.b_rs + (col0 + c) * p.b_cs);
        }
        sb[kk * BN + c] = v;
    }
}

@compute @workgroup_size(256)
fn register_tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tx = lid % 16u;
    let ty = lid / 16u;
    let row0 = wid.y * BM;
    let col0 = wid.x * BN;
    let z = wid.z;
    let base = batch_offsets(z);
    var acc: array<array<f32, 4>, 4>;
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        load_a_tile(base.x, row0, k0, lid);
        load_b_tile(base.y, col0, k0, lid);
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk++) {
            var ar: array<f32, 4>;
            var br: array<f32, 4>;
            for (var i = 0u; i < 4u; i++) {
                ar[i] = sa[kk * BM + ty + 16u * i];
                br[i] = sb[kk * BN + tx + 16u * i];
            }
            for (var i = 0u; i < 4u; i++) {
                for (var j = 0u; j < 4u; j++) {
                    acc[i][j] = fma(ar[i], br[j], acc[i][j]);
                }
            }
        }
        // The next step overwrites the tiles: wait until everyone has read them.
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        for (var j = 0u; j < 4u; j++) {
            let row = row0 + ty + 16u * i;
            let col = col0 + tx + 16u * j;
            if row < p.m && col < p.n {
                store(z, row, col, acc[i][j]);
            }
        }
    }
}
