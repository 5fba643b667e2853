
// prelude: ops/gelu.wgsl
// prelude: ops/matmul/common.wgsl
// dtype: a vec4
// dtype: b vec4
// The fast path: a 64x64 block tile per workgroup of 256 invocations, each accumulating a 4x4
// register tile, walking K in steps of 16. The shared tiles are loaded once per step (four
// elements or one vec4 per invocation) and each shared value loaded into a register feeds
// four FMAs, so shared-memory traffic per FMA is a quarter of the 16x16 kernel's.
// Invocation (tx, ty) owns rows 4 ty .. 4 ty + 3 and columns 4 tx .. 4 tx + 3, read from the
// shared tiles as one vec4 each per k step.
// VEC_A / VEC_B: the host proved the operand's K (resp. N) axis dense with every row and batch
// start a multiple of 4 and K (resp. N) a multiple of 4, so whole vec4s load at once.
// VEC_A_T / VEC_B_T: the same along the other axis (a dense along M, b along K: a transpose
// read as it lies, such as a weight gradient's x^T or a backward's w^T), so a transpose
// loads whole vec4s too, with no dense copy first. At most one of each pair is set.
// Grid: (ceil(N/64), ceil(M/64), batch).

override VEC_A: bool = false;
override VEC_B: bool = false;
override VEC_A_T: bool = false;
override VEC_B_T: bool = false;

// Whether a (resp. b) loads as whole vec4s, in either orientation.
fn vec_a() -> bool {
    return VEC_A || VEC_A_T;
}

fn vec_b() -> bool {
    return VEC_B || VEC_B_T;
}

// a and b are F32, F16 or BF16 (dtype slots: a_at(i) reads element i, a_at4(q) elements
// 4q .. 4q + 3, widened to f32), four elements per array element either way.
@group(0) @binding(1) var<storage, read> a: array<a_vec4>; // (..., M, K) view
@group(0) @binding(2) var<storage, read> b: array<b_vec4>; // (..., K, N) view

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 16u;

// Shared tiles as vec4 rows: element (kk, r) of the A tile sits at sa[kk * 16 + r / 4][r % 4],
// so an invocation reads its four rows (or columns) with one vec4 load.
var<workgroup> sa: array<vec4<f32>, 256>; // BK x BM
var<workgroup> sb: array<vec4<f32>, 256>; // BK x BN

fn put_a(kk: u32, r: u32, v: f32) {
    sa[kk * 16u + r / 4u][r % 4u] = v;
}

fn put_b(kk: u32, c: u32, v: f32) {
    sb[kk * 16u + c / 4u][c % 4u] = v;
}

fn load_a_tile(base: u32, row0: u32, k0: u32, lid: u32) {
    if vec_a() {
        put_a4(lid, fetch_a(base, row0, k0, lid));
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
        put_a(kk, r, v);
    }
}

// vec_a() and vec_b(): this invocation's vec4 of the A (resp. B) tile of the step at k0, zero
// past the edges, and where it goes in the shared tile.
fn fetch_a(base: u32, row0: u32, k0: u32, lid: u32) -> vec4<f32> {
    if VEC_A_T {
        // Rows rq .. rq + 3 at step kk: the shared tile's own vec4 (slot lid).
        let kk = lid / 16u;
        let rq = (lid % 16u) * 4u;
        if k0 + kk < p.k && row0 + rq < p.m {
            return a_at4((base + (k0 + kk) * p.a_cs + row0 + rq) >> 2u);
        }
        return vec4<f32>(0.0);
    }
    let r = lid / 4u;
    let kq = (lid % 4u) * 4u;
    if row0 + r < p.m && k0 + kq < p.k {
        return a_at4((base + (row0 + r) * p.a_rs + k0 + kq) >> 2u);
    }
    return vec4<f32>(0.0);
}

fn put_a4(lid: u32, v: vec4<f32>) {
    if VEC_A_T {
        sa[lid] = v;
        return;
    }
    let r = lid / 4u;
    let kq = (lid % 4u) * 4u;
    put_a(kq, r, v.x);
    put_a(kq + 1u, r, v.y);
    put_a(kq + 2u, r, v.z);
    put_a(kq + 3u, r, v.w);
}

fn fetch_b(base: u32, col0: u32, k0: u32, lid: u32) -> vec4<f32> {
    if VEC_B_T {
        // Steps kq .. kq + 3 of column c.
        let c = lid / 4u;
        let kq = (lid % 4u) * 4u;
        if k0 + kq < p.k && col0 + c < p.n {
            return b_at4((base + (col0 + c) * p.b_cs + k0 + kq) >> 2u);
        }
        return vec4<f32>(0.0);
    }
    let kk = lid / 16u;
    let cq = (lid % 16u) * 4u;
    if k0 + kk < p.k && col0 + cq < p.n {
        return b_at4((base + (k0 + kk) * p.b_rs + col0 + cq) >> 2u);
    }
    return vec4<f32>(0.0);
}

fn put_b4(lid: u32, v: vec4<f32>) {
    if VEC_B_T {
        let c = lid / 4u;
        let kq = (lid % 4u) * 4u;
        put_b(kq, c, v.x);
        put_b(kq + 1u, c, v.y);
        put_b(kq + 2u, c, v.z);
        put_b(kq + 3u, c, v.w);
        return;
    }
    sb[lid] = v; // (kk, cq) = (lid / 16, 4 (lid % 16)): slot lid
}

fn load_b_tile(base: u32, col0: u32, k0: u32, lid: u32) {
    if vec_b() {
        put_b4(lid, fetch_b(base, col0, k0, lid));
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
        put_b(kk, c, v);
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
    // The 4x4 register tile as four vec4 rows, written out by hand: an array indexed in loops
    // stays in slow local memory on some drivers, named vec4 values become registers.
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    // Both operands vec4: the next step's tiles are fetched into registers before this step's
    // FMAs, so their global-memory latency overlaps the arithmetic instead of following it
    // (short K walks, such as split-K slices of 96, were bound by that latency).
    var next_a = vec4<f32>(0.0);
    var next_b = vec4<f32>(0.0);
    if vec_a() && vec_b() {
        next_a = fetch_a(base.x, row0, 0u, lid);
        next_b = fetch_b(base.y, col0, 0u, lid);
    }
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        if vec_a() && vec_b() {
            put_a4(lid, next_a);
            put_b4(lid, next_b);
        } else {
            load_a_tile(base.x, row0, k0, lid);
            load_b_tile(base.y, col0, k0, lid);
        }
        workgroupBarrier();
        if vec_a() && vec_b() {
            next_a = fetch_a(base.x, row0, k0 + BK, lid);
            next_b = fetch_b(base.y, col0, k0 + BK, lid);
        }
        for (var kk = 0u; kk < BK; kk++) {
            let av = sa[kk * 16u + ty]; // rows 4 ty .. 4 ty + 3
            let bv = sb[kk * 16u + tx]; // columns 4 tx .. 4 tx + 3
            acc0 = fma(vec4<f32>(av.x), bv, acc0);
            acc1 = fma(vec4<f32>(av.y), bv, acc1);
            acc2 = fma(vec4<f32>(av.z), bv, acc2);
            acc3 = fma(vec4<f32>(av.w), bv, acc3);
        }
        // The next step overwrites the tiles: wait until everyone has read them.
        workgroupBarrier();
    }
    let row = row0 + 4u * ty;
    let col = col0 + 4u * tx;
    store4(z, row, col, acc0);
    store4(z, row + 1u, col, acc1);
    store4(z, row + 2u, col, acc2);
    store4(z, row + 3u, col, acc3);
}
