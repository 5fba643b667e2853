// The cooperative-matrix probe of `dev/src/bin/coop_probe.rs` (outside `shaders/`: it needs the
// native-only `wgpu_cooperative_matrix` extension and f16, which the engine's kernels do not).
//   c (M, N) f32 = a (M, K) f16 @ b (K, N) f16, all row-major, M, N multiples of 64, K of 16.
// One subgroup (32 invocations) a workgroup computes a 64 x 64 block of c as 4 x 4 tiles of
// 16 x 16, accumulating in f32: per 16-wide K step it loads four A tiles and four B tiles
// straight from the storage buffers (no workgroup staging) and issues 16 multiply-adds. The
// accumulators are 16 named matrices, loaded from c (cleared by the host) to start. Each
// store's offset is a `let` of its own: naga 30's SPIR-V writer panics ("expression is not
// cached") on a coopStore whose pointer index is computed inline.
//
// The staged variants (after `block_k32`) share one shape: a workgroup of 32-wide subgroups, each
// computing a 64 x 64 block as 16 named f32 accumulators, the workgroup's A and B slices
// staged in workgroup memory. Each invocation loads whole 16-byte words of 8 halves (`a8`,
// `b8`) and stores them as they came (one vec4<u32>, or four u32s in coop_staged_u32); the
// cooperative loads read f16 matrices through that pointer, the stride in its elements
// (naga checks only that a cooperative load's pointer is to a scalar or vector, and
// SPV_KHR_cooperative_matrix reinterprets the bytes; a workgroup array of f16 filled from
// vec4<u32> words would need bitcast<vec2<f16>>(u32), which naga 30 lowers as a bitcast
// to f32: it keeps the argument's width and shape, silently).
// Rows are padded by 8 halves (not in coop_staged_v4_nopad) so a 16 x 16 load's eight
// 16-byte rows fall in different bank groups. Two buffers: the next slice is loaded into
// registers before this slice's multiply-adds and stored into the other buffer after them, so
// one barrier a slice suffices (the buffer being written was last read before the previous
// barrier).

enable f16;
enable wgpu_cooperative_matrix;

struct Params {
    m: u32,
    n: u32,
    k: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f16>;        // (M, K)
@group(0) @binding(2) var<storage, read> b: array<f16>;        // (K, N)
@group(0) @binding(3) var<storage, read_write> c: array<f32>;  // (M, N), zero on entry
// The same a and b as words of 8 halves, for the staged variants' 16-byte loads.
@group(0) @binding(1) var<storage, read> a8: array<vec4<u32>>; // (M, K / 8)
@group(0) @binding(2) var<storage, read> b8: array<vec4<u32>>; // (K, N / 8)

alias TileA = coop_mat16x16<f16, A>;
alias TileB = coop_mat16x16<f16, B>;
alias TileC = coop_mat16x16<f32, C>;

// One subgroup a workgroup. Grid: (N / 64, M / 64).
@compute @workgroup_size(32)
fn coop_matmul(@builtin(workgroup_id) wid: vec3<u32>) {
    block(wid.y * 64u, wid.x * 64u);
}

// Four subgroups of 32 a workgroup, 2 x 2 blocks of a 128 x 128 tile: blocks that share rows
// of A or columns of B run on one multiprocessor, so their loads meet in its L1. Grid:
// (N / 128, M / 128); the adapter's subgroups must be 32 wide.
@compute @workgroup_size(128)
fn coop_matmul_2x2(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    block(wid.y * 128u + (s / 2u) * 64u, wid.x * 128u + (s % 2u) * 64u);
}

// The 64 x 64 block of c at row r, column q.
fn block(r: u32, q: u32) {
    let n = p.n;
    var c00 = coopLoadT<TileC>(&c[r * n + q], n);
    var c01 = coopLoadT<TileC>(&c[r * n + q + 16u], n);
    var c02 = coopLoadT<TileC>(&c[r * n + q + 32u], n);
    var c03 = coopLoadT<TileC>(&c[r * n + q + 48u], n);
    var c10 = coopLoadT<TileC>(&c[(r + 16u) * n + q], n);
    var c11 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c12 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c13 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c20 = coopLoadT<TileC>(&c[(r + 32u) * n + q], n);
    var c21 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c22 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c23 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c30 = coopLoadT<TileC>(&c[(r + 48u) * n + q], n);
    var c31 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c32 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c33 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    for (var k = 0u; k < p.k; k += 16u) {
        let a0 = coopLoadT<TileA>(&a[r * p.k + k], p.k);
        let a1 = coopLoadT<TileA>(&a[(r + 16u) * p.k + k], p.k);
        let a2 = coopLoadT<TileA>(&a[(r + 32u) * p.k + k], p.k);
        let a3 = coopLoadT<TileA>(&a[(r + 48u) * p.k + k], p.k);
        let b0 = coopLoadT<TileB>(&b[k * n + q], n);
        let b1 = coopLoadT<TileB>(&b[k * n + q + 16u], n);
        let b2 = coopLoadT<TileB>(&b[k * n + q + 32u], n);
        let b3 = coopLoadT<TileB>(&b[k * n + q + 48u], n);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c02 = coopMultiplyAdd(a0, b2, c02);
        c03 = coopMultiplyAdd(a0, b3, c03);
        c10 = coopMultiplyAdd(a1, b0, c10);
        c11 = coopMultiplyAdd(a1, b1, c11);
        c12 = coopMultiplyAdd(a1, b2, c12);
        c13 = coopMultiplyAdd(a1, b3, c13);
        c20 = coopMultiplyAdd(a2, b0, c20);
        c21 = coopMultiplyAdd(a2, b1, c21);
        c22 = coopMultiplyAdd(a2, b2, c22);
        c23 = coopMultiplyAdd(a2, b3, c23);
        c30 = coopMultiplyAdd(a3, b0, c30);
        c31 = coopMultiplyAdd(a3, b1, c31);
        c32 = coopMultiplyAdd(a3, b2, c32);
        c33 = coopMultiplyAdd(a3, b3, c33);
    }
    let o00 = r * n + q;
    coopStoreT(c00, &c[o00], n);
    let o01 = r * n + q + 16u;
    coopStoreT(c01, &c[o01], n);
    let o02 = r * n + q + 32u;
    coopStoreT(c02, &c[o02], n);
    let o03 = r * n + q + 48u;
    coopStoreT(c03, &c[o03], n);
    let o10 = (r + 16u) * n + q;
    coopStoreT(c10, &c[o10], n);
    let o11 = (r + 16u) * n + q + 16u;
    coopStoreT(c11, &c[o11], n);
    let o12 = (r + 16u) * n + q + 32u;
    coopStoreT(c12, &c[o12], n);
    let o13 = (r + 16u) * n + q + 48u;
    coopStoreT(c13, &c[o13], n);
    let o20 = (r + 32u) * n + q;
    coopStoreT(c20, &c[o20], n);
    let o21 = (r + 32u) * n + q + 16u;
    coopStoreT(c21, &c[o21], n);
    let o22 = (r + 32u) * n + q + 32u;
    coopStoreT(c22, &c[o22], n);
    let o23 = (r + 32u) * n + q + 48u;
    coopStoreT(c23, &c[o23], n);
    let o30 = (r + 48u) * n + q;
    coopStoreT(c30, &c[o30], n);
    let o31 = (r + 48u) * n + q + 16u;
    coopStoreT(c31, &c[o31], n);
    let o32 = (r + 48u) * n + q + 32u;
    coopStoreT(c32, &c[o32], n);
    let o33 = (r + 48u) * n + q + 48u;
    coopStoreT(c33, &c[o33], n);
}

// coop_matmul_2x2 with K unrolled by 2: all sixteen tiles of two K steps are loaded before
// their 32 multiply-adds, so twice the loads are in flight per wait. Grid: (N / 128, M / 128);
// K a multiple of 32.
@compute @workgroup_size(128)
fn coop_matmul_2x2_k32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    block_k32(wid.y * 128u + (s / 2u) * 64u, wid.x * 128u + (s % 2u) * 64u);
}

// The 64 x 64 block of c at row r, column q, 32 K a trip.
fn block_k32(r: u32, q: u32) {
    let n = p.n;
    var c00 = coopLoadT<TileC>(&c[r * n + q], n);
    var c01 = coopLoadT<TileC>(&c[r * n + q + 16u], n);
    var c02 = coopLoadT<TileC>(&c[r * n + q + 32u], n);
    var c03 = coopLoadT<TileC>(&c[r * n + q + 48u], n);
    var c10 = coopLoadT<TileC>(&c[(r + 16u) * n + q], n);
    var c11 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c12 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c13 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c20 = coopLoadT<TileC>(&c[(r + 32u) * n + q], n);
    var c21 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c22 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c23 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c30 = coopLoadT<TileC>(&c[(r + 48u) * n + q], n);
    var c31 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c32 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c33 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    for (var k = 0u; k < p.k; k += 32u) {
        let a0_0 = coopLoadT<TileA>(&a[r * p.k + k], p.k);
        let a1_0 = coopLoadT<TileA>(&a[(r + 16u) * p.k + k], p.k);
        let a2_0 = coopLoadT<TileA>(&a[(r + 32u) * p.k + k], p.k);
        let a3_0 = coopLoadT<TileA>(&a[(r + 48u) * p.k + k], p.k);
        let b0_0 = coopLoadT<TileB>(&b[k * n + q], n);
        let b1_0 = coopLoadT<TileB>(&b[k * n + q + 16u], n);
        let b2_0 = coopLoadT<TileB>(&b[k * n + q + 32u], n);
        let b3_0 = coopLoadT<TileB>(&b[k * n + q + 48u], n);
        let a0_16 = coopLoadT<TileA>(&a[r * p.k + k + 16u], p.k);
        let a1_16 = coopLoadT<TileA>(&a[(r + 16u) * p.k + k + 16u], p.k);
        let a2_16 = coopLoadT<TileA>(&a[(r + 32u) * p.k + k + 16u], p.k);
        let a3_16 = coopLoadT<TileA>(&a[(r + 48u) * p.k + k + 16u], p.k);
        let b0_16 = coopLoadT<TileB>(&b[(k + 16u) * n + q], n);
        let b1_16 = coopLoadT<TileB>(&b[(k + 16u) * n + q + 16u], n);
        let b2_16 = coopLoadT<TileB>(&b[(k + 16u) * n + q + 32u], n);
        let b3_16 = coopLoadT<TileB>(&b[(k + 16u) * n + q + 48u], n);
        c00 = coopMultiplyAdd(a0_0, b0_0, c00);
        c01 = coopMultiplyAdd(a0_0, b1_0, c01);
        c02 = coopMultiplyAdd(a0_0, b2_0, c02);
        c03 = coopMultiplyAdd(a0_0, b3_0, c03);
        c10 = coopMultiplyAdd(a1_0, b0_0, c10);
        c11 = coopMultiplyAdd(a1_0, b1_0, c11);
        c12 = coopMultiplyAdd(a1_0, b2_0, c12);
        c13 = coopMultiplyAdd(a1_0, b3_0, c13);
        c20 = coopMultiplyAdd(a2_0, b0_0, c20);
        c21 = coopMultiplyAdd(a2_0, b1_0, c21);
        c22 = coopMultiplyAdd(a2_0, b2_0, c22);
        c23 = coopMultiplyAdd(a2_0, b3_0, c23);
        c30 = coopMultiplyAdd(a3_0, b0_0, c30);
        c31 = coopMultiplyAdd(a3_0, b1_0, c31);
        c32 = coopMultiplyAdd(a3_0, b2_0, c32);
        c33 = coopMultiplyAdd(a3_0, b3_0, c33);
        c00 = coopMultiplyAdd(a0_16, b0_16, c00);
        c01 = coopMultiplyAdd(a0_16, b1_16, c01);
        c02 = coopMultiplyAdd(a0_16, b2_16, c02);
        c03 = coopMultiplyAdd(a0_16, b3_16, c03);
        c10 = coopMultiplyAdd(a1_16, b0_16, c10);
        c11 = coopMultiplyAdd(a1_16, b1_16, c11);
        c12 = coopMultiplyAdd(a1_16, b2_16, c12);
        c13 = coopMultiplyAdd(a1_16, b3_16, c13);
        c20 = coopMultiplyAdd(a2_16, b0_16, c20);
        c21 = coopMultiplyAdd(a2_16, b1_16, c21);
        c22 = coopMultiplyAdd(a2_16, b2_16, c22);
        c23 = coopMultiplyAdd(a2_16, b3_16, c23);
        c30 = coopMultiplyAdd(a3_16, b0_16, c30);
        c31 = coopMultiplyAdd(a3_16, b1_16, c31);
        c32 = coopMultiplyAdd(a3_16, b2_16, c32);
        c33 = coopMultiplyAdd(a3_16, b3_16, c33);
    }
    let o00 = r * n + q;
    coopStoreT(c00, &c[o00], n);
    let o01 = r * n + q + 16u;
    coopStoreT(c01, &c[o01], n);
    let o02 = r * n + q + 32u;
    coopStoreT(c02, &c[o02], n);
    let o03 = r * n + q + 48u;
    coopStoreT(c03, &c[o03], n);
    let o10 = (r + 16u) * n + q;
    coopStoreT(c10, &c[o10], n);
    let o11 = (r + 16u) * n + q + 16u;
    coopStoreT(c11, &c[o11], n);
    let o12 = (r + 16u) * n + q + 32u;
    coopStoreT(c12, &c[o12], n);
    let o13 = (r + 16u) * n + q + 48u;
    coopStoreT(c13, &c[o13], n);
    let o20 = (r + 32u) * n + q;
    coopStoreT(c20, &c[o20], n);
    let o21 = (r + 32u) * n + q + 16u;
    coopStoreT(c21, &c[o21], n);
    let o22 = (r + 32u) * n + q + 32u;
    coopStoreT(c22, &c[o22], n);
    let o23 = (r + 32u) * n + q + 48u;
    coopStoreT(c23, &c[o23], n);
    let o30 = (r + 48u) * n + q;
    coopStoreT(c30, &c[o30], n);
    let o31 = (r + 48u) * n + q + 16u;
    coopStoreT(c31, &c[o31], n);
    let o32 = (r + 48u) * n + q + 32u;
    coopStoreT(c32, &c[o32], n);
    let o33 = (r + 48u) * n + q + 48u;
    coopStoreT(c33, &c[o33], n);
}

// 128 x 128 tile, four subgroups of 64 x 64, 32-wide K slices staged as vec4<u32> words (16-byte stores; the cooperative loads read f16 through a vec4<u32> pointer, stride in words), double-buffered.
// Workgroup memory: two buffers of A (128 x 32) and B (32 x 128), 37888 bytes.
var<workgroup> staged_v4_a: array<vec4<u32>, 1280>; // 2 x 128 rows, stride 5 (32 halves + 8 of padding)
var<workgroup> staged_v4_b: array<vec4<u32>, 1088>; // 2 x 32 rows, stride 17 (128 halves + 8 of padding)

// Grid: (N / 128, M / 128); K a multiple of 32; subgroups 32 wide.
@compute @workgroup_size(128)
fn coop_staged_v4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u; // this subgroup's 64 x 64 block within the tile
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k8 = p.k / 8u; // vec4<u32> words in a row of a
    let n8 = n / 8u;   // and of b
    let r = r0 + br;
    let q = q0 + bq;
    var c00 = coopLoadT<TileC>(&c[r * n + q], n);
    var c01 = coopLoadT<TileC>(&c[r * n + q + 16u], n);
    var c02 = coopLoadT<TileC>(&c[r * n + q + 32u], n);
    var c03 = coopLoadT<TileC>(&c[r * n + q + 48u], n);
    var c10 = coopLoadT<TileC>(&c[(r + 16u) * n + q], n);
    var c11 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c12 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c13 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c20 = coopLoadT<TileC>(&c[(r + 32u) * n + q], n);
    var c21 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c22 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c23 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c30 = coopLoadT<TileC>(&c[(r + 48u) * n + q], n);
    var c31 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c32 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c33 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    // This invocation's words of each slice: A 128 rows x 4 words, B 32 rows x 16 words.
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 4u) * k8 + ea0 % 4u;
    let sa0 = (ea0 / 4u) * 5u + (ea0 % 4u) * 1u;
    let ea1 = lid + 128u;
    let ga1 = (r0 + ea1 / 4u) * k8 + ea1 % 4u;
    let sa1 = (ea1 / 4u) * 5u + (ea1 % 4u) * 1u;
    let ea2 = lid + 256u;
    let ga2 = (r0 + ea2 / 4u) * k8 + ea2 % 4u;
    let sa2 = (ea2 / 4u) * 5u + (ea2 % 4u) * 1u;
    let ea3 = lid + 384u;
    let ga3 = (r0 + ea3 / 4u) * k8 + ea3 % 4u;
    let sa3 = (ea3 / 4u) * 5u + (ea3 % 4u) * 1u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 16u) * n8 + q0 / 8u + eb0 % 16u;
    let sb0 = (eb0 / 16u) * 17u + (eb0 % 16u) * 1u;
    let eb1 = lid + 128u;
    let gb1 = (eb1 / 16u) * n8 + q0 / 8u + eb1 % 16u;
    let sb1 = (eb1 / 16u) * 17u + (eb1 % 16u) * 1u;
    let eb2 = lid + 256u;
    let gb2 = (eb2 / 16u) * n8 + q0 / 8u + eb2 % 16u;
    let sb2 = (eb2 / 16u) * 17u + (eb2 % 16u) * 1u;
    let eb3 = lid + 384u;
    let gb3 = (eb3 / 16u) * n8 + q0 / 8u + eb3 % 16u;
    let sb3 = (eb3 / 16u) * 17u + (eb3 % 16u) * 1u;
    // Slice 0 into buffer 0.
    var va0 = a8[ga0];
    var va1 = a8[ga1];
    var va2 = a8[ga2];
    var va3 = a8[ga3];
    var vb0 = b8[gb0];
    var vb1 = b8[gb1];
    var vb2 = b8[gb2];
    var vb3 = b8[gb3];
    staged_v4_a[sa0] = va0;
    staged_v4_a[sa1] = va1;
    staged_v4_a[sa2] = va2;
    staged_v4_a[sa3] = va3;
    staged_v4_b[sb0] = vb0;
    staged_v4_b[sb1] = vb1;
    staged_v4_b[sb2] = vb2;
    staged_v4_b[sb3] = vb3;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 32u) {
        let cur = (k0 / 32u) % 2u;
        let more = k0 + 32u < p.k;
        // The next slice's words are loaded into registers before this slice's multiply-adds
        // and stored into the other buffer after them: one barrier a slice.
        if more {
            va0 = a8[ga0 + (k0 + 32u) / 8u];
            va1 = a8[ga1 + (k0 + 32u) / 8u];
            va2 = a8[ga2 + (k0 + 32u) / 8u];
            va3 = a8[ga3 + (k0 + 32u) / 8u];
            vb0 = b8[gb0 + (k0 + 32u) * n8];
            vb1 = b8[gb1 + (k0 + 32u) * n8];
            vb2 = b8[gb2 + (k0 + 32u) * n8];
            vb3 = b8[gb3 + (k0 + 32u) * n8];
        }
        let ao = cur * 640u;
        let bo = cur * 544u;
        let ia0_0 = ao + (br + 0u) * 5u + 0u;
        let ia1_0 = ao + (br + 16u) * 5u + 0u;
        let ia2_0 = ao + (br + 32u) * 5u + 0u;
        let ia3_0 = ao + (br + 48u) * 5u + 0u;
        let ib0_0 = bo + 0u + (bq + 0u) / 8u;
        let ib1_0 = bo + 0u + (bq + 16u) / 8u;
        let ib2_0 = bo + 0u + (bq + 32u) / 8u;
        let ib3_0 = bo + 0u + (bq + 48u) / 8u;
        let a0 = coopLoadT<TileA>(&staged_v4_a[ia0_0], 5u);
        let a1 = coopLoadT<TileA>(&staged_v4_a[ia1_0], 5u);
        let a2 = coopLoadT<TileA>(&staged_v4_a[ia2_0], 5u);
        let a3 = coopLoadT<TileA>(&staged_v4_a[ia3_0], 5u);
        let b0 = coopLoadT<TileB>(&staged_v4_b[ib0_0], 17u);
        let b1 = coopLoadT<TileB>(&staged_v4_b[ib1_0], 17u);
        let b2 = coopLoadT<TileB>(&staged_v4_b[ib2_0], 17u);
        let b3 = coopLoadT<TileB>(&staged_v4_b[ib3_0], 17u);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c02 = coopMultiplyAdd(a0, b2, c02);
        c03 = coopMultiplyAdd(a0, b3, c03);
        c10 = coopMultiplyAdd(a1, b0, c10);
        c11 = coopMultiplyAdd(a1, b1, c11);
        c12 = coopMultiplyAdd(a1, b2, c12);
        c13 = coopMultiplyAdd(a1, b3, c13);
        c20 = coopMultiplyAdd(a2, b0, c20);
        c21 = coopMultiplyAdd(a2, b1, c21);
        c22 = coopMultiplyAdd(a2, b2, c22);
        c23 = coopMultiplyAdd(a2, b3, c23);
        c30 = coopMultiplyAdd(a3, b0, c30);
        c31 = coopMultiplyAdd(a3, b1, c31);
        c32 = coopMultiplyAdd(a3, b2, c32);
        c33 = coopMultiplyAdd(a3, b3, c33);
        let ia0_16 = ao + (br + 0u) * 5u + 2u;
        let ia1_16 = ao + (br + 16u) * 5u + 2u;
        let ia2_16 = ao + (br + 32u) * 5u + 2u;
        let ia3_16 = ao + (br + 48u) * 5u + 2u;
        let ib0_16 = bo + 272u + (bq + 0u) / 8u;
        let ib1_16 = bo + 272u + (bq + 16u) / 8u;
        let ib2_16 = bo + 272u + (bq + 32u) / 8u;
        let ib3_16 = bo + 272u + (bq + 48u) / 8u;
        let a0_16 = coopLoadT<TileA>(&staged_v4_a[ia0_16], 5u);
        let a1_16 = coopLoadT<TileA>(&staged_v4_a[ia1_16], 5u);
        let a2_16 = coopLoadT<TileA>(&staged_v4_a[ia2_16], 5u);
        let a3_16 = coopLoadT<TileA>(&staged_v4_a[ia3_16], 5u);
        let b0_16 = coopLoadT<TileB>(&staged_v4_b[ib0_16], 17u);
        let b1_16 = coopLoadT<TileB>(&staged_v4_b[ib1_16], 17u);
        let b2_16 = coopLoadT<TileB>(&staged_v4_b[ib2_16], 17u);
        let b3_16 = coopLoadT<TileB>(&staged_v4_b[ib3_16], 17u);
        c00 = coopMultiplyAdd(a0_16, b0_16, c00);
        c01 = coopMultiplyAdd(a0_16, b1_16, c01);
        c02 = coopMultiplyAdd(a0_16, b2_16, c02);
        c03 = coopMultiplyAdd(a0_16, b3_16, c03);
        c10 = coopMultiplyAdd(a1_16, b0_16, c10);
        c11 = coopMultiplyAdd(a1_16, b1_16, c11);
        c12 = coopMultiplyAdd(a1_16, b2_16, c12);
        c13 = coopMultiplyAdd(a1_16, b3_16, c13);
        c20 = coopMultiplyAdd(a2_16, b0_16, c20);
        c21 = coopMultiplyAdd(a2_16, b1_16, c21);
        c22 = coopMultiplyAdd(a2_16, b2_16, c22);
        c23 = coopMultiplyAdd(a2_16, b3_16, c23);
        c30 = coopMultiplyAdd(a3_16, b0_16, c30);
        c31 = coopMultiplyAdd(a3_16, b1_16, c31);
        c32 = coopMultiplyAdd(a3_16, b2_16, c32);
        c33 = coopMultiplyAdd(a3_16, b3_16, c33);
        if more {
            let nao = (1u - cur) * 640u;
            let nbo = (1u - cur) * 544u;
            staged_v4_a[nao + sa0] = va0;
            staged_v4_a[nao + sa1] = va1;
            staged_v4_a[nao + sa2] = va2;
            staged_v4_a[nao + sa3] = va3;
            staged_v4_b[nbo + sb0] = vb0;
            staged_v4_b[nbo + sb1] = vb1;
            staged_v4_b[nbo + sb2] = vb2;
            staged_v4_b[nbo + sb3] = vb3;
        }
        workgroupBarrier();
    }
    let o00 = r * n + q;
    coopStoreT(c00, &c[o00], n);
    let o01 = r * n + q + 16u;
    coopStoreT(c01, &c[o01], n);
    let o02 = r * n + q + 32u;
    coopStoreT(c02, &c[o02], n);
    let o03 = r * n + q + 48u;
    coopStoreT(c03, &c[o03], n);
    let o10 = (r + 16u) * n + q;
    coopStoreT(c10, &c[o10], n);
    let o11 = (r + 16u) * n + q + 16u;
    coopStoreT(c11, &c[o11], n);
    let o12 = (r + 16u) * n + q + 32u;
    coopStoreT(c12, &c[o12], n);
    let o13 = (r + 16u) * n + q + 48u;
    coopStoreT(c13, &c[o13], n);
    let o20 = (r + 32u) * n + q;
    coopStoreT(c20, &c[o20], n);
    let o21 = (r + 32u) * n + q + 16u;
    coopStoreT(c21, &c[o21], n);
    let o22 = (r + 32u) * n + q + 32u;
    coopStoreT(c22, &c[o22], n);
    let o23 = (r + 32u) * n + q + 48u;
    coopStoreT(c23, &c[o23], n);
    let o30 = (r + 48u) * n + q;
    coopStoreT(c30, &c[o30], n);
    let o31 = (r + 48u) * n + q + 16u;
    coopStoreT(c31, &c[o31], n);
    let o32 = (r + 48u) * n + q + 32u;
    coopStoreT(c32, &c[o32], n);
    let o33 = (r + 48u) * n + q + 48u;
    coopStoreT(c33, &c[o33], n);
}

// coop_staged_v4 with the workgroup tiles as u32 f16 pairs (four 4-byte stores a word of 8 halves): the fallback if a driver rejects vec4 pointers.
// Workgroup memory: two buffers of A (128 x 32) and B (32 x 128), 37888 bytes.
var<workgroup> staged_u32_a: array<u32, 5120>; // 2 x 128 rows, stride 20 (32 halves + 8 of padding)
var<workgroup> staged_u32_b: array<u32, 4352>; // 2 x 32 rows, stride 68 (128 halves + 8 of padding)

// Grid: (N / 128, M / 128); K a multiple of 32; subgroups 32 wide.
@compute @workgroup_size(128)
fn coop_staged_u32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u; // this subgroup's 64 x 64 block within the tile
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k8 = p.k / 8u; // vec4<u32> words in a row of a
    let n8 = n / 8u;   // and of b
    let r = r0 + br;
    let q = q0 + bq;
    var c00 = coopLoadT<TileC>(&c[r * n + q], n);
    var c01 = coopLoadT<TileC>(&c[r * n + q + 16u], n);
    var c02 = coopLoadT<TileC>(&c[r * n + q + 32u], n);
    var c03 = coopLoadT<TileC>(&c[r * n + q + 48u], n);
    var c10 = coopLoadT<TileC>(&c[(r + 16u) * n + q], n);
    var c11 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c12 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c13 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c20 = coopLoadT<TileC>(&c[(r + 32u) * n + q], n);
    var c21 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c22 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c23 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c30 = coopLoadT<TileC>(&c[(r + 48u) * n + q], n);
    var c31 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c32 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c33 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    // This invocation's words of each slice: A 128 rows x 4 words, B 32 rows x 16 words.
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 4u) * k8 + ea0 % 4u;
    let sa0 = (ea0 / 4u) * 20u + (ea0 % 4u) * 4u;
    let ea1 = lid + 128u;
    let ga1 = (r0 + ea1 / 4u) * k8 + ea1 % 4u;
    let sa1 = (ea1 / 4u) * 20u + (ea1 % 4u) * 4u;
    let ea2 = lid + 256u;
    let ga2 = (r0 + ea2 / 4u) * k8 + ea2 % 4u;
    let sa2 = (ea2 / 4u) * 20u + (ea2 % 4u) * 4u;
    let ea3 = lid + 384u;
    let ga3 = (r0 + ea3 / 4u) * k8 + ea3 % 4u;
    let sa3 = (ea3 / 4u) * 20u + (ea3 % 4u) * 4u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 16u) * n8 + q0 / 8u + eb0 % 16u;
    let sb0 = (eb0 / 16u) * 68u + (eb0 % 16u) * 4u;
    let eb1 = lid + 128u;
    let gb1 = (eb1 / 16u) * n8 + q0 / 8u + eb1 % 16u;
    let sb1 = (eb1 / 16u) * 68u + (eb1 % 16u) * 4u;
    let eb2 = lid + 256u;
    let gb2 = (eb2 / 16u) * n8 + q0 / 8u + eb2 % 16u;
    let sb2 = (eb2 / 16u) * 68u + (eb2 % 16u) * 4u;
    let eb3 = lid + 384u;
    let gb3 = (eb3 / 16u) * n8 + q0 / 8u + eb3 % 16u;
    let sb3 = (eb3 / 16u) * 68u + (eb3 % 16u) * 4u;
    // Slice 0 into buffer 0.
    var va0 = a8[ga0];
    var va1 = a8[ga1];
    var va2 = a8[ga2];
    var va3 = a8[ga3];
    var vb0 = b8[gb0];
    var vb1 = b8[gb1];
    var vb2 = b8[gb2];
    var vb3 = b8[gb3];
    staged_u32_a[sa0] = va0.x;
    staged_u32_a[sa0 + 1u] = va0.y;
    staged_u32_a[sa0 + 2u] = va0.z;
    staged_u32_a[sa0 + 3u] = va0.w;
    staged_u32_a[sa1] = va1.x;
    staged_u32_a[sa1 + 1u] = va1.y;
    staged_u32_a[sa1 + 2u] = va1.z;
    staged_u32_a[sa1 + 3u] = va1.w;
    staged_u32_a[sa2] = va2.x;
    staged_u32_a[sa2 + 1u] = va2.y;
    staged_u32_a[sa2 + 2u] = va2.z;
    staged_u32_a[sa2 + 3u] = va2.w;
    staged_u32_a[sa3] = va3.x;
    staged_u32_a[sa3 + 1u] = va3.y;
    staged_u32_a[sa3 + 2u] = va3.z;
    staged_u32_a[sa3 + 3u] = va3.w;
    staged_u32_b[sb0] = vb0.x;
    staged_u32_b[sb0 + 1u] = vb0.y;
    staged_u32_b[sb0 + 2u] = vb0.z;
    staged_u32_b[sb0 + 3u] = vb0.w;
    staged_u32_b[sb1] = vb1.x;
    staged_u32_b[sb1 + 1u] = vb1.y;
    staged_u32_b[sb1 + 2u] = vb1.z;
    staged_u32_b[sb1 + 3u] = vb1.w;
    staged_u32_b[sb2] = vb2.x;
    staged_u32_b[sb2 + 1u] = vb2.y;
    staged_u32_b[sb2 + 2u] = vb2.z;
    staged_u32_b[sb2 + 3u] = vb2.w;
    staged_u32_b[sb3] = vb3.x;
    staged_u32_b[sb3 + 1u] = vb3.y;
    staged_u32_b[sb3 + 2u] = vb3.z;
    staged_u32_b[sb3 + 3u] = vb3.w;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 32u) {
        let cur = (k0 / 32u) % 2u;
        let more = k0 + 32u < p.k;
        // The next slice's words are loaded into registers before this slice's multiply-adds
        // and stored into the other buffer after them: one barrier a slice.
        if more {
            va0 = a8[ga0 + (k0 + 32u) / 8u];
            va1 = a8[ga1 + (k0 + 32u) / 8u];
            va2 = a8[ga2 + (k0 + 32u) / 8u];
            va3 = a8[ga3 + (k0 + 32u) / 8u];
            vb0 = b8[gb0 + (k0 + 32u) * n8];
            vb1 = b8[gb1 + (k0 + 32u) * n8];
            vb2 = b8[gb2 + (k0 + 32u) * n8];
            vb3 = b8[gb3 + (k0 + 32u) * n8];
        }
        let ao = cur * 2560u;
        let bo = cur * 2176u;
        let ia0_0 = ao + (br + 0u) * 20u + 0u;
        let ia1_0 = ao + (br + 16u) * 20u + 0u;
        let ia2_0 = ao + (br + 32u) * 20u + 0u;
        let ia3_0 = ao + (br + 48u) * 20u + 0u;
        let ib0_0 = bo + 0u + (bq + 0u) / 2u;
        let ib1_0 = bo + 0u + (bq + 16u) / 2u;
        let ib2_0 = bo + 0u + (bq + 32u) / 2u;
        let ib3_0 = bo + 0u + (bq + 48u) / 2u;
        let a0 = coopLoadT<TileA>(&staged_u32_a[ia0_0], 20u);
        let a1 = coopLoadT<TileA>(&staged_u32_a[ia1_0], 20u);
        let a2 = coopLoadT<TileA>(&staged_u32_a[ia2_0], 20u);
        let a3 = coopLoadT<TileA>(&staged_u32_a[ia3_0], 20u);
        let b0 = coopLoadT<TileB>(&staged_u32_b[ib0_0], 68u);
        let b1 = coopLoadT<TileB>(&staged_u32_b[ib1_0], 68u);
        let b2 = coopLoadT<TileB>(&staged_u32_b[ib2_0], 68u);
        let b3 = coopLoadT<TileB>(&staged_u32_b[ib3_0], 68u);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c02 = coopMultiplyAdd(a0, b2, c02);
        c03 = coopMultiplyAdd(a0, b3, c03);
        c10 = coopMultiplyAdd(a1, b0, c10);
        c11 = coopMultiplyAdd(a1, b1, c11);
        c12 = coopMultiplyAdd(a1, b2, c12);
        c13 = coopMultiplyAdd(a1, b3, c13);
        c20 = coopMultiplyAdd(a2, b0, c20);
        c21 = coopMultiplyAdd(a2, b1, c21);
        c22 = coopMultiplyAdd(a2, b2, c22);
        c23 = coopMultiplyAdd(a2, b3, c23);
        c30 = coopMultiplyAdd(a3, b0, c30);
        c31 = coopMultiplyAdd(a3, b1, c31);
        c32 = coopMultiplyAdd(a3, b2, c32);
        c33 = coopMultiplyAdd(a3, b3, c33);
        let ia0_16 = ao + (br + 0u) * 20u + 8u;
        let ia1_16 = ao + (br + 16u) * 20u + 8u;
        let ia2_16 = ao + (br + 32u) * 20u + 8u;
        let ia3_16 = ao + (br + 48u) * 20u + 8u;
        let ib0_16 = bo + 1088u + (bq + 0u) / 2u;
        let ib1_16 = bo + 1088u + (bq + 16u) / 2u;
        let ib2_16 = bo + 1088u + (bq + 32u) / 2u;
        let ib3_16 = bo + 1088u + (bq + 48u) / 2u;
        let a0_16 = coopLoadT<TileA>(&staged_u32_a[ia0_16], 20u);
        let a1_16 = coopLoadT<TileA>(&staged_u32_a[ia1_16], 20u);
        let a2_16 = coopLoadT<TileA>(&staged_u32_a[ia2_16], 20u);
        let a3_16 = coopLoadT<TileA>(&staged_u32_a[ia3_16], 20u);
        let b0_16 = coopLoadT<TileB>(&staged_u32_b[ib0_16], 68u);
        let b1_16 = coopLoadT<TileB>(&staged_u32_b[ib1_16], 68u);
        let b2_16 = coopLoadT<TileB>(&staged_u32_b[ib2_16], 68u);
        let b3_16 = coopLoadT<TileB>(&staged_u32_b[ib3_16], 68u);
        c00 = coopMultiplyAdd(a0_16, b0_16, c00);
        c01 = coopMultiplyAdd(a0_16, b1_16, c01);
        c02 = coopMultiplyAdd(a0_16, b2_16, c02);
        c03 = coopMultiplyAdd(a0_16, b3_16, c03);
        c10 = coopMultiplyAdd(a1_16, b0_16, c10);
        c11 = coopMultiplyAdd(a1_16, b1_16, c11);
        c12 = coopMultiplyAdd(a1_16, b2_16, c12);
        c13 = coopMultiplyAdd(a1_16, b3_16, c13);
        c20 = coopMultiplyAdd(a2_16, b0_16, c20);
        c21 = coopMultiplyAdd(a2_16, b1_16, c21);
        c22 = coopMultiplyAdd(a2_16, b2_16, c22);
        c23 = coopMultiplyAdd(a2_16, b3_16, c23);
        c30 = coopMultiplyAdd(a3_16, b0_16, c30);
        c31 = coopMultiplyAdd(a3_16, b1_16, c31);
        c32 = coopMultiplyAdd(a3_16, b2_16, c32);
        c33 = coopMultiplyAdd(a3_16, b3_16, c33);
        if more {
            let nao = (1u - cur) * 2560u;
            let nbo = (1u - cur) * 2176u;
            staged_u32_a[nao + sa0] = va0.x;
            staged_u32_a[nao + sa0 + 1u] = va0.y;
            staged_u32_a[nao + sa0 + 2u] = va0.z;
            staged_u32_a[nao + sa0 + 3u] = va0.w;
            staged_u32_a[nao + sa1] = va1.x;
            staged_u32_a[nao + sa1 + 1u] = va1.y;
            staged_u32_a[nao + sa1 + 2u] = va1.z;
            staged_u32_a[nao + sa1 + 3u] = va1.w;
            staged_u32_a[nao + sa2] = va2.x;
            staged_u32_a[nao + sa2 + 1u] = va2.y;
            staged_u32_a[nao + sa2 + 2u] = va2.z;
            staged_u32_a[nao + sa2 + 3u] = va2.w;
            staged_u32_a[nao + sa3] = va3.x;
            staged_u32_a[nao + sa3 + 1u] = va3.y;
            staged_u32_a[nao + sa3 + 2u] = va3.z;
            staged_u32_a[nao + sa3 + 3u] = va3.w;
            staged_u32_b[nbo + sb0] = vb0.x;
            staged_u32_b[nbo + sb0 + 1u] = vb0.y;
            staged_u32_b[nbo + sb0 + 2u] = vb0.z;
            staged_u32_b[nbo + sb0 + 3u] = vb0.w;
            staged_u32_b[nbo + sb1] = vb1.x;
            staged_u32_b[nbo + sb1 + 1u] = vb1.y;
            staged_u32_b[nbo + sb1 + 2u] = vb1.z;
            staged_u32_b[nbo + sb1 + 3u] = vb1.w;
            staged_u32_b[nbo + sb2] = vb2.x;
            staged_u32_b[nbo + sb2 + 1u] = vb2.y;
            staged_u32_b[nbo + sb2 + 2u] = vb2.z;
            staged_u32_b[nbo + sb2 + 3u] = vb2.w;
            staged_u32_b[nbo + sb3] = vb3.x;
            staged_u32_b[nbo + sb3 + 1u] = vb3.y;
            staged_u32_b[nbo + sb3 + 2u] = vb3.z;
            staged_u32_b[nbo + sb3 + 3u] = vb3.w;
        }
        workgroupBarrier();
    }
    let o00 = r * n + q;
    coopStoreT(c00, &c[o00], n);
    let o01 = r * n + q + 16u;
    coopStoreT(c01, &c[o01], n);
    let o02 = r * n + q + 32u;
    coopStoreT(c02, &c[o02], n);
    let o03 = r * n + q + 48u;
    coopStoreT(c03, &c[o03], n);
    let o10 = (r + 16u) * n + q;
    coopStoreT(c10, &c[o10], n);
    let o11 = (r + 16u) * n + q + 16u;
    coopStoreT(c11, &c[o11], n);
    let o12 = (r + 16u) * n + q + 32u;
    coopStoreT(c12, &c[o12], n);
    let o13 = (r + 16u) * n + q + 48u;
    coopStoreT(c13, &c[o13], n);
    let o20 = (r + 32u) * n + q;
    coopStoreT(c20, &c[o20], n);
    let o21 = (r + 32u) * n + q + 16u;
    coopStoreT(c21, &c[o21], n);
    let o22 = (r + 32u) * n + q + 32u;
    coopStoreT(c22, &c[o22], n);
    let o23 = (r + 32u) * n + q + 48u;
    coopStoreT(c23, &c[o23], n);
    let o30 = (r + 48u) * n + q;
    coopStoreT(c30, &c[o30], n);
    let o31 = (r + 48u) * n + q + 16u;
    coopStoreT(c31, &c[o31], n);
    let o32 = (r + 48u) * n + q + 32u;
    coopStoreT(c32, &c[o32], n);
    let o33 = (r + 48u) * n + q + 48u;
    coopStoreT(c33, &c[o33], n);
}

// coop_staged_v4 without the rows' padding: what bank conflicts cost.
// Workgroup memory: two buffers of A (128 x 32) and B (32 x 128), 32768 bytes.
var<workgroup> staged_v4_nopad_a: array<vec4<u32>, 1024>; // 2 x 128 rows, stride 4 (32 halves + 0 of padding)
var<workgroup> staged_v4_nopad_b: array<vec4<u32>, 1024>; // 2 x 32 rows, stride 16 (128 halves + 0 of padding)

// Grid: (N / 128, M / 128); K a multiple of 32; subgroups 32 wide.
@compute @workgroup_size(128)
fn coop_staged_v4_nopad(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u; // this subgroup's 64 x 64 block within the tile
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k8 = p.k / 8u; // vec4<u32> words in a row of a
    let n8 = n / 8u;   // and of b
    let r = r0 + br;
    let q = q0 + bq;
    var c00 = coopLoadT<TileC>(&c[r * n + q], n);
    var c01 = coopLoadT<TileC>(&c[r * n + q + 16u], n);
    var c02 = coopLoadT<TileC>(&c[r * n + q + 32u], n);
    var c03 = coopLoadT<TileC>(&c[r * n + q + 48u], n);
    var c10 = coopLoadT<TileC>(&c[(r + 16u) * n + q], n);
    var c11 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c12 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c13 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c20 = coopLoadT<TileC>(&c[(r + 32u) * n + q], n);
    var c21 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c22 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c23 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c30 = coopLoadT<TileC>(&c[(r + 48u) * n + q], n);
    var c31 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c32 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c33 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    // This invocation's words of each slice: A 128 rows x 4 words, B 32 rows x 16 words.
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 4u) * k8 + ea0 % 4u;
    let sa0 = (ea0 / 4u) * 4u + (ea0 % 4u) * 1u;
    let ea1 = lid + 128u;
    let ga1 = (r0 + ea1 / 4u) * k8 + ea1 % 4u;
    let sa1 = (ea1 / 4u) * 4u + (ea1 % 4u) * 1u;
    let ea2 = lid + 256u;
    let ga2 = (r0 + ea2 / 4u) * k8 + ea2 % 4u;
    let sa2 = (ea2 / 4u) * 4u + (ea2 % 4u) * 1u;
    let ea3 = lid + 384u;
    let ga3 = (r0 + ea3 / 4u) * k8 + ea3 % 4u;
    let sa3 = (ea3 / 4u) * 4u + (ea3 % 4u) * 1u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 16u) * n8 + q0 / 8u + eb0 % 16u;
    let sb0 = (eb0 / 16u) * 16u + (eb0 % 16u) * 1u;
    let eb1 = lid + 128u;
    let gb1 = (eb1 / 16u) * n8 + q0 / 8u + eb1 % 16u;
    let sb1 = (eb1 / 16u) * 16u + (eb1 % 16u) * 1u;
    let eb2 = lid + 256u;
    let gb2 = (eb2 / 16u) * n8 + q0 / 8u + eb2 % 16u;
    let sb2 = (eb2 / 16u) * 16u + (eb2 % 16u) * 1u;
    let eb3 = lid + 384u;
    let gb3 = (eb3 / 16u) * n8 + q0 / 8u + eb3 % 16u;
    let sb3 = (eb3 / 16u) * 16u + (eb3 % 16u) * 1u;
    // Slice 0 into buffer 0.
    var va0 = a8[ga0];
    var va1 = a8[ga1];
    var va2 = a8[ga2];
    var va3 = a8[ga3];
    var vb0 = b8[gb0];
    var vb1 = b8[gb1];
    var vb2 = b8[gb2];
    var vb3 = b8[gb3];
    staged_v4_nopad_a[sa0] = va0;
    staged_v4_nopad_a[sa1] = va1;
    staged_v4_nopad_a[sa2] = va2;
    staged_v4_nopad_a[sa3] = va3;
    staged_v4_nopad_b[sb0] = vb0;
    staged_v4_nopad_b[sb1] = vb1;
    staged_v4_nopad_b[sb2] = vb2;
    staged_v4_nopad_b[sb3] = vb3;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 32u) {
        let cur = (k0 / 32u) % 2u;
        let more = k0 + 32u < p.k;
        // The next slice's words are loaded into registers before this slice's multiply-adds
        // and stored into the other buffer after them: one barrier a slice.
        if more {
            va0 = a8[ga0 + (k0 + 32u) / 8u];
            va1 = a8[ga1 + (k0 + 32u) / 8u];
            va2 = a8[ga2 + (k0 + 32u) / 8u];
            va3 = a8[ga3 + (k0 + 32u) / 8u];
            vb0 = b8[gb0 + (k0 + 32u) * n8];
            vb1 = b8[gb1 + (k0 + 32u) * n8];
            vb2 = b8[gb2 + (k0 + 32u) * n8];
            vb3 = b8[gb3 + (k0 + 32u) * n8];
        }
        let ao = cur * 512u;
        let bo = cur * 512u;
        let ia0_0 = ao + (br + 0u) * 4u + 0u;
        let ia1_0 = ao + (br + 16u) * 4u + 0u;
        let ia2_0 = ao + (br + 32u) * 4u + 0u;
        let ia3_0 = ao + (br + 48u) * 4u + 0u;
        let ib0_0 = bo + 0u + (bq + 0u) / 8u;
        let ib1_0 = bo + 0u + (bq + 16u) / 8u;
        let ib2_0 = bo + 0u + (bq + 32u) / 8u;
        let ib3_0 = bo + 0u + (bq + 48u) / 8u;
        let a0 = coopLoadT<TileA>(&staged_v4_nopad_a[ia0_0], 4u);
        let a1 = coopLoadT<TileA>(&staged_v4_nopad_a[ia1_0], 4u);
        let a2 = coopLoadT<TileA>(&staged_v4_nopad_a[ia2_0], 4u);
        let a3 = coopLoadT<TileA>(&staged_v4_nopad_a[ia3_0], 4u);
        let b0 = coopLoadT<TileB>(&staged_v4_nopad_b[ib0_0], 16u);
        let b1 = coopLoadT<TileB>(&staged_v4_nopad_b[ib1_0], 16u);
        let b2 = coopLoadT<TileB>(&staged_v4_nopad_b[ib2_0], 16u);
        let b3 = coopLoadT<TileB>(&staged_v4_nopad_b[ib3_0], 16u);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c02 = coopMultiplyAdd(a0, b2, c02);
        c03 = coopMultiplyAdd(a0, b3, c03);
        c10 = coopMultiplyAdd(a1, b0, c10);
        c11 = coopMultiplyAdd(a1, b1, c11);
        c12 = coopMultiplyAdd(a1, b2, c12);
        c13 = coopMultiplyAdd(a1, b3, c13);
        c20 = coopMultiplyAdd(a2, b0, c20);
        c21 = coopMultiplyAdd(a2, b1, c21);
        c22 = coopMultiplyAdd(a2, b2, c22);
        c23 = coopMultiplyAdd(a2, b3, c23);
        c30 = coopMultiplyAdd(a3, b0, c30);
        c31 = coopMultiplyAdd(a3, b1, c31);
        c32 = coopMultiplyAdd(a3, b2, c32);
        c33 = coopMultiplyAdd(a3, b3, c33);
        let ia0_16 = ao + (br + 0u) * 4u + 2u;
        let ia1_16 = ao + (br + 16u) * 4u + 2u;
        let ia2_16 = ao + (br + 32u) * 4u + 2u;
        let ia3_16 = ao + (br + 48u) * 4u + 2u;
        let ib0_16 = bo + 256u + (bq + 0u) / 8u;
        let ib1_16 = bo + 256u + (bq + 16u) / 8u;
        let ib2_16 = bo + 256u + (bq + 32u) / 8u;
        let ib3_16 = bo + 256u + (bq + 48u) / 8u;
        let a0_16 = coopLoadT<TileA>(&staged_v4_nopad_a[ia0_16], 4u);
        let a1_16 = coopLoadT<TileA>(&staged_v4_nopad_a[ia1_16], 4u);
        let a2_16 = coopLoadT<TileA>(&staged_v4_nopad_a[ia2_16], 4u);
        let a3_16 = coopLoadT<TileA>(&staged_v4_nopad_a[ia3_16], 4u);
        let b0_16 = coopLoadT<TileB>(&staged_v4_nopad_b[ib0_16], 16u);
        let b1_16 = coopLoadT<TileB>(&staged_v4_nopad_b[ib1_16], 16u);
        let b2_16 = coopLoadT<TileB>(&staged_v4_nopad_b[ib2_16], 16u);
        let b3_16 = coopLoadT<TileB>(&staged_v4_nopad_b[ib3_16], 16u);
        c00 = coopMultiplyAdd(a0_16, b0_16, c00);
        c01 = coopMultiplyAdd(a0_16, b1_16, c01);
        c02 = coopMultiplyAdd(a0_16, b2_16, c02);
        c03 = coopMultiplyAdd(a0_16, b3_16, c03);
        c10 = coopMultiplyAdd(a1_16, b0_16, c10);
        c11 = coopMultiplyAdd(a1_16, b1_16, c11);
        c12 = coopMultiplyAdd(a1_16, b2_16, c12);
        c13 = coopMultiplyAdd(a1_16, b3_16, c13);
        c20 = coopMultiplyAdd(a2_16, b0_16, c20);
        c21 = coopMultiplyAdd(a2_16, b1_16, c21);
        c22 = coopMultiplyAdd(a2_16, b2_16, c22);
        c23 = coopMultiplyAdd(a2_16, b3_16, c23);
        c30 = coopMultiplyAdd(a3_16, b0_16, c30);
        c31 = coopMultiplyAdd(a3_16, b1_16, c31);
        c32 = coopMultiplyAdd(a3_16, b2_16, c32);
        c33 = coopMultiplyAdd(a3_16, b3_16, c33);
        if more {
            let nao = (1u - cur) * 512u;
            let nbo = (1u - cur) * 512u;
            staged_v4_nopad_a[nao + sa0] = va0;
            staged_v4_nopad_a[nao + sa1] = va1;
            staged_v4_nopad_a[nao + sa2] = va2;
            staged_v4_nopad_a[nao + sa3] = va3;
            staged_v4_nopad_b[nbo + sb0] = vb0;
            staged_v4_nopad_b[nbo + sb1] = vb1;
            staged_v4_nopad_b[nbo + sb2] = vb2;
            staged_v4_nopad_b[nbo + sb3] = vb3;
        }
        workgroupBarrier();
    }
    let o00 = r * n + q;
    coopStoreT(c00, &c[o00], n);
    let o01 = r * n + q + 16u;
    coopStoreT(c01, &c[o01], n);
    let o02 = r * n + q + 32u;
    coopStoreT(c02, &c[o02], n);
    let o03 = r * n + q + 48u;
    coopStoreT(c03, &c[o03], n);
    let o10 = (r + 16u) * n + q;
    coopStoreT(c10, &c[o10], n);
    let o11 = (r + 16u) * n + q + 16u;
    coopStoreT(c11, &c[o11], n);
    let o12 = (r + 16u) * n + q + 32u;
    coopStoreT(c12, &c[o12], n);
    let o13 = (r + 16u) * n + q + 48u;
    coopStoreT(c13, &c[o13], n);
    let o20 = (r + 32u) * n + q;
    coopStoreT(c20, &c[o20], n);
    let o21 = (r + 32u) * n + q + 16u;
    coopStoreT(c21, &c[o21], n);
    let o22 = (r + 32u) * n + q + 32u;
    coopStoreT(c22, &c[o22], n);
    let o23 = (r + 32u) * n + q + 48u;
    coopStoreT(c23, &c[o23], n);
    let o30 = (r + 48u) * n + q;
    coopStoreT(c30, &c[o30], n);
    let o31 = (r + 48u) * n + q + 16u;
    coopStoreT(c31, &c[o31], n);
    let o32 = (r + 48u) * n + q + 32u;
    coopStoreT(c32, &c[o32], n);
    let o33 = (r + 48u) * n + q + 48u;
    coopStoreT(c33, &c[o33], n);
}

// 256 x 128 tile, eight subgroups (4 x 2) of 64 x 64, 16-wide K slices as vec4<u32> words, double-buffered: each B word feeds four subgroups.
// Workgroup memory: two buffers of A (256 x 16) and B (16 x 128), 33280 bytes.
var<workgroup> staged_v4_256x128_a: array<vec4<u32>, 1536>; // 2 x 256 rows, stride 3 (16 halves + 8 of padding)
var<workgroup> staged_v4_256x128_b: array<vec4<u32>, 544>; // 2 x 16 rows, stride 17 (128 halves + 8 of padding)

// Grid: (N / 128, M / 256); K a multiple of 16; subgroups 32 wide.
@compute @workgroup_size(256)
fn coop_staged_v4_256x128(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 256u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u; // this subgroup's 64 x 64 block within the tile
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k8 = p.k / 8u; // vec4<u32> words in a row of a
    let n8 = n / 8u;   // and of b
    let r = r0 + br;
    let q = q0 + bq;
    var c00 = coopLoadT<TileC>(&c[r * n + q], n);
    var c01 = coopLoadT<TileC>(&c[r * n + q + 16u], n);
    var c02 = coopLoadT<TileC>(&c[r * n + q + 32u], n);
    var c03 = coopLoadT<TileC>(&c[r * n + q + 48u], n);
    var c10 = coopLoadT<TileC>(&c[(r + 16u) * n + q], n);
    var c11 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c12 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c13 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c20 = coopLoadT<TileC>(&c[(r + 32u) * n + q], n);
    var c21 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c22 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c23 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c30 = coopLoadT<TileC>(&c[(r + 48u) * n + q], n);
    var c31 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c32 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c33 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    // This invocation's words of each slice: A 256 rows x 2 words, B 16 rows x 16 words.
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 2u) * k8 + ea0 % 2u;
    let sa0 = (ea0 / 2u) * 3u + (ea0 % 2u) * 1u;
    let ea1 = lid + 256u;
    let ga1 = (r0 + ea1 / 2u) * k8 + ea1 % 2u;
    let sa1 = (ea1 / 2u) * 3u + (ea1 % 2u) * 1u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 16u) * n8 + q0 / 8u + eb0 % 16u;
    let sb0 = (eb0 / 16u) * 17u + (eb0 % 16u) * 1u;
    // Slice 0 into buffer 0.
    var va0 = a8[ga0];
    var va1 = a8[ga1];
    var vb0 = b8[gb0];
    staged_v4_256x128_a[sa0] = va0;
    staged_v4_256x128_a[sa1] = va1;
    staged_v4_256x128_b[sb0] = vb0;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 16u) {
        let cur = (k0 / 16u) % 2u;
        let more = k0 + 16u < p.k;
        // The next slice's words are loaded into registers before this slice's multiply-adds
        // and stored into the other buffer after them: one barrier a slice.
        if more {
            va0 = a8[ga0 + (k0 + 16u) / 8u];
            va1 = a8[ga1 + (k0 + 16u) / 8u];
            vb0 = b8[gb0 + (k0 + 16u) * n8];
        }
        let ao = cur * 768u;
        let bo = cur * 272u;
        let ia0_0 = ao + (br + 0u) * 3u + 0u;
        let ia1_0 = ao + (br + 16u) * 3u + 0u;
        let ia2_0 = ao + (br + 32u) * 3u + 0u;
        let ia3_0 = ao + (br + 48u) * 3u + 0u;
        let ib0_0 = bo + 0u + (bq + 0u) / 8u;
        let ib1_0 = bo + 0u + (bq + 16u) / 8u;
        let ib2_0 = bo + 0u + (bq + 32u) / 8u;
        let ib3_0 = bo + 0u + (bq + 48u) / 8u;
        let a0 = coopLoadT<TileA>(&staged_v4_256x128_a[ia0_0], 3u);
        let a1 = coopLoadT<TileA>(&staged_v4_256x128_a[ia1_0], 3u);
        let a2 = coopLoadT<TileA>(&staged_v4_256x128_a[ia2_0], 3u);
        let a3 = coopLoadT<TileA>(&staged_v4_256x128_a[ia3_0], 3u);
        let b0 = coopLoadT<TileB>(&staged_v4_256x128_b[ib0_0], 17u);
        let b1 = coopLoadT<TileB>(&staged_v4_256x128_b[ib1_0], 17u);
        let b2 = coopLoadT<TileB>(&staged_v4_256x128_b[ib2_0], 17u);
        let b3 = coopLoadT<TileB>(&staged_v4_256x128_b[ib3_0], 17u);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c02 = coopMultiplyAdd(a0, b2, c02);
        c03 = coopMultiplyAdd(a0, b3, c03);
        c10 = coopMultiplyAdd(a1, b0, c10);
        c11 = coopMultiplyAdd(a1, b1, c11);
        c12 = coopMultiplyAdd(a1, b2, c12);
        c13 = coopMultiplyAdd(a1, b3, c13);
        c20 = coopMultiplyAdd(a2, b0, c20);
        c21 = coopMultiplyAdd(a2, b1, c21);
        c22 = coopMultiplyAdd(a2, b2, c22);
        c23 = coopMultiplyAdd(a2, b3, c23);
        c30 = coopMultiplyAdd(a3, b0, c30);
        c31 = coopMultiplyAdd(a3, b1, c31);
        c32 = coopMultiplyAdd(a3, b2, c32);
        c33 = coopMultiplyAdd(a3, b3, c33);
        if more {
            let nao = (1u - cur) * 768u;
            let nbo = (1u - cur) * 272u;
            staged_v4_256x128_a[nao + sa0] = va0;
            staged_v4_256x128_a[nao + sa1] = va1;
            staged_v4_256x128_b[nbo + sb0] = vb0;
        }
        workgroupBarrier();
    }
    let o00 = r * n + q;
    coopStoreT(c00, &c[o00], n);
    let o01 = r * n + q + 16u;
    coopStoreT(c01, &c[o01], n);
    let o02 = r * n + q + 32u;
    coopStoreT(c02, &c[o02], n);
    let o03 = r * n + q + 48u;
    coopStoreT(c03, &c[o03], n);
    let o10 = (r + 16u) * n + q;
    coopStoreT(c10, &c[o10], n);
    let o11 = (r + 16u) * n + q + 16u;
    coopStoreT(c11, &c[o11], n);
    let o12 = (r + 16u) * n + q + 32u;
    coopStoreT(c12, &c[o12], n);
    let o13 = (r + 16u) * n + q + 48u;
    coopStoreT(c13, &c[o13], n);
    let o20 = (r + 32u) * n + q;
    coopStoreT(c20, &c[o20], n);
    let o21 = (r + 32u) * n + q + 16u;
    coopStoreT(c21, &c[o21], n);
    let o22 = (r + 32u) * n + q + 32u;
    coopStoreT(c22, &c[o22], n);
    let o23 = (r + 32u) * n + q + 48u;
    coopStoreT(c23, &c[o23], n);
    let o30 = (r + 48u) * n + q;
    coopStoreT(c30, &c[o30], n);
    let o31 = (r + 48u) * n + q + 16u;
    coopStoreT(c31, &c[o31], n);
    let o32 = (r + 48u) * n + q + 32u;
    coopStoreT(c32, &c[o32], n);
    let o33 = (r + 48u) * n + q + 48u;
    coopStoreT(c33, &c[o33], n);
}

// 128 x 256 tile, eight subgroups (2 x 4) of 64 x 64, 16-wide K slices as vec4<u32> words, double-buffered: each A word feeds four subgroups.
// Workgroup memory: two buffers of A (128 x 16) and B (16 x 256), 29184 bytes.
var<workgroup> staged_v4_128x256_a: array<vec4<u32>, 768>; // 2 x 128 rows, stride 3 (16 halves + 8 of padding)
var<workgroup> staged_v4_128x256_b: array<vec4<u32>, 1056>; // 2 x 16 rows, stride 33 (256 halves + 8 of padding)

// Grid: (N / 256, M / 128); K a multiple of 16; subgroups 32 wide.
@compute @workgroup_size(256)
fn coop_staged_v4_128x256(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 256u;
    let br = (s / 4u) * 64u; // this subgroup's 64 x 64 block within the tile
    let bq = (s % 4u) * 64u;
    let n = p.n;
    let k8 = p.k / 8u; // vec4<u32> words in a row of a
    let n8 = n / 8u;   // and of b
    let r = r0 + br;
    let q = q0 + bq;
    var c00 = coopLoadT<TileC>(&c[r * n + q], n);
    var c01 = coopLoadT<TileC>(&c[r * n + q + 16u], n);
    var c02 = coopLoadT<TileC>(&c[r * n + q + 32u], n);
    var c03 = coopLoadT<TileC>(&c[r * n + q + 48u], n);
    var c10 = coopLoadT<TileC>(&c[(r + 16u) * n + q], n);
    var c11 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c12 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c13 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c20 = coopLoadT<TileC>(&c[(r + 32u) * n + q], n);
    var c21 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c22 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c23 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c30 = coopLoadT<TileC>(&c[(r + 48u) * n + q], n);
    var c31 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c32 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c33 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    // This invocation's words of each slice: A 128 rows x 2 words, B 16 rows x 32 words.
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 2u) * k8 + ea0 % 2u;
    let sa0 = (ea0 / 2u) * 3u + (ea0 % 2u) * 1u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 32u) * n8 + q0 / 8u + eb0 % 32u;
    let sb0 = (eb0 / 32u) * 33u + (eb0 % 32u) * 1u;
    let eb1 = lid + 256u;
    let gb1 = (eb1 / 32u) * n8 + q0 / 8u + eb1 % 32u;
    let sb1 = (eb1 / 32u) * 33u + (eb1 % 32u) * 1u;
    // Slice 0 into buffer 0.
    var va0 = a8[ga0];
    var vb0 = b8[gb0];
    var vb1 = b8[gb1];
    staged_v4_128x256_a[sa0] = va0;
    staged_v4_128x256_b[sb0] = vb0;
    staged_v4_128x256_b[sb1] = vb1;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 16u) {
        let cur = (k0 / 16u) % 2u;
        let more = k0 + 16u < p.k;
        // The next slice's words are loaded into registers before this slice's multiply-adds
        // and stored into the other buffer after them: one barrier a slice.
        if more {
            va0 = a8[ga0 + (k0 + 16u) / 8u];
            vb0 = b8[gb0 + (k0 + 16u) * n8];
            vb1 = b8[gb1 + (k0 + 16u) * n8];
        }
        let ao = cur * 384u;
        let bo = cur * 528u;
        let ia0_0 = ao + (br + 0u) * 3u + 0u;
        let ia1_0 = ao + (br + 16u) * 3u + 0u;
        let ia2_0 = ao + (br + 32u) * 3u + 0u;
        let ia3_0 = ao + (br + 48u) * 3u + 0u;
        let ib0_0 = bo + 0u + (bq + 0u) / 8u;
        let ib1_0 = bo + 0u + (bq + 16u) / 8u;
        let ib2_0 = bo + 0u + (bq + 32u) / 8u;
        let ib3_0 = bo + 0u + (bq + 48u) / 8u;
        let a0 = coopLoadT<TileA>(&staged_v4_128x256_a[ia0_0], 3u);
        let a1 = coopLoadT<TileA>(&staged_v4_128x256_a[ia1_0], 3u);
        let a2 = coopLoadT<TileA>(&staged_v4_128x256_a[ia2_0], 3u);
        let a3 = coopLoadT<TileA>(&staged_v4_128x256_a[ia3_0], 3u);
        let b0 = coopLoadT<TileB>(&staged_v4_128x256_b[ib0_0], 33u);
        let b1 = coopLoadT<TileB>(&staged_v4_128x256_b[ib1_0], 33u);
        let b2 = coopLoadT<TileB>(&staged_v4_128x256_b[ib2_0], 33u);
        let b3 = coopLoadT<TileB>(&staged_v4_128x256_b[ib3_0], 33u);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c02 = coopMultiplyAdd(a0, b2, c02);
        c03 = coopMultiplyAdd(a0, b3, c03);
        c10 = coopMultiplyAdd(a1, b0, c10);
        c11 = coopMultiplyAdd(a1, b1, c11);
        c12 = coopMultiplyAdd(a1, b2, c12);
        c13 = coopMultiplyAdd(a1, b3, c13);
        c20 = coopMultiplyAdd(a2, b0, c20);
        c21 = coopMultiplyAdd(a2, b1, c21);
        c22 = coopMultiplyAdd(a2, b2, c22);
        c23 = coopMultiplyAdd(a2, b3, c23);
        c30 = coopMultiplyAdd(a3, b0, c30);
        c31 = coopMultiplyAdd(a3, b1, c31);
        c32 = coopMultiplyAdd(a3, b2, c32);
        c33 = coopMultiplyAdd(a3, b3, c33);
        if more {
            let nao = (1u - cur) * 384u;
            let nbo = (1u - cur) * 528u;
            staged_v4_128x256_a[nao + sa0] = va0;
            staged_v4_128x256_b[nbo + sb0] = vb0;
            staged_v4_128x256_b[nbo + sb1] = vb1;
        }
        workgroupBarrier();
    }
    let o00 = r * n + q;
    coopStoreT(c00, &c[o00], n);
    let o01 = r * n + q + 16u;
    coopStoreT(c01, &c[o01], n);
    let o02 = r * n + q + 32u;
    coopStoreT(c02, &c[o02], n);
    let o03 = r * n + q + 48u;
    coopStoreT(c03, &c[o03], n);
    let o10 = (r + 16u) * n + q;
    coopStoreT(c10, &c[o10], n);
    let o11 = (r + 16u) * n + q + 16u;
    coopStoreT(c11, &c[o11], n);
    let o12 = (r + 16u) * n + q + 32u;
    coopStoreT(c12, &c[o12], n);
    let o13 = (r + 16u) * n + q + 48u;
    coopStoreT(c13, &c[o13], n);
    let o20 = (r + 32u) * n + q;
    coopStoreT(c20, &c[o20], n);
    let o21 = (r + 32u) * n + q + 16u;
    coopStoreT(c21, &c[o21], n);
    let o22 = (r + 32u) * n + q + 32u;
    coopStoreT(c22, &c[o22], n);
    let o23 = (r + 32u) * n + q + 48u;
    coopStoreT(c23, &c[o23], n);
    let o30 = (r + 48u) * n + q;
    coopStoreT(c30, &c[o30], n);
    let o31 = (r + 48u) * n + q + 16u;
    coopStoreT(c31, &c[o31], n);
    let o32 = (r + 48u) * n + q + 32u;
    coopStoreT(c32, &c[o32], n);
    let o33 = (r + 48u) * n + q + 48u;
    coopStoreT(c33, &c[o33], n);
}

// coop_staged_v4 with 16-wide K slices: half the workgroup memory (21 KiB), so more workgroups fit a multiprocessor, at a barrier every 16 multiply-adds.
// Workgroup memory: two buffers of A (128 x 16) and B (16 x 128), 20992 bytes.
var<workgroup> staged_v4_k16_a: array<vec4<u32>, 768>; // 2 x 128 rows, stride 3 (16 halves + 8 of padding)
var<workgroup> staged_v4_k16_b: array<vec4<u32>, 544>; // 2 x 16 rows, stride 17 (128 halves + 8 of padding)

// Grid: (N / 128, M / 128); K a multiple of 16; subgroups 32 wide.
@compute @workgroup_size(128)
fn coop_staged_v4_k16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u; // this subgroup's 64 x 64 block within the tile
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k8 = p.k / 8u; // vec4<u32> words in a row of a
    let n8 = n / 8u;   // and of b
    let r = r0 + br;
    let q = q0 + bq;
    var c00 = coopLoadT<TileC>(&c[r * n + q], n);
    var c01 = coopLoadT<TileC>(&c[r * n + q + 16u], n);
    var c02 = coopLoadT<TileC>(&c[r * n + q + 32u], n);
    var c03 = coopLoadT<TileC>(&c[r * n + q + 48u], n);
    var c10 = coopLoadT<TileC>(&c[(r + 16u) * n + q], n);
    var c11 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c12 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c13 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c20 = coopLoadT<TileC>(&c[(r + 32u) * n + q], n);
    var c21 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c22 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c23 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c30 = coopLoadT<TileC>(&c[(r + 48u) * n + q], n);
    var c31 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c32 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c33 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    // This invocation's words of each slice: A 128 rows x 2 words, B 16 rows x 16 words.
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 2u) * k8 + ea0 % 2u;
    let sa0 = (ea0 / 2u) * 3u + (ea0 % 2u) * 1u;
    let ea1 = lid + 128u;
    let ga1 = (r0 + ea1 / 2u) * k8 + ea1 % 2u;
    let sa1 = (ea1 / 2u) * 3u + (ea1 % 2u) * 1u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 16u) * n8 + q0 / 8u + eb0 % 16u;
    let sb0 = (eb0 / 16u) * 17u + (eb0 % 16u) * 1u;
    let eb1 = lid + 128u;
    let gb1 = (eb1 / 16u) * n8 + q0 / 8u + eb1 % 16u;
    let sb1 = (eb1 / 16u) * 17u + (eb1 % 16u) * 1u;
    // Slice 0 into buffer 0.
    var va0 = a8[ga0];
    var va1 = a8[ga1];
    var vb0 = b8[gb0];
    var vb1 = b8[gb1];
    staged_v4_k16_a[sa0] = va0;
    staged_v4_k16_a[sa1] = va1;
    staged_v4_k16_b[sb0] = vb0;
    staged_v4_k16_b[sb1] = vb1;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 16u) {
        let cur = (k0 / 16u) % 2u;
        let more = k0 + 16u < p.k;
        // The next slice's words are loaded into registers before this slice's multiply-adds
        // and stored into the other buffer after them: one barrier a slice.
        if more {
            va0 = a8[ga0 + (k0 + 16u) / 8u];
            va1 = a8[ga1 + (k0 + 16u) / 8u];
            vb0 = b8[gb0 + (k0 + 16u) * n8];
            vb1 = b8[gb1 + (k0 + 16u) * n8];
        }
        let ao = cur * 384u;
        let bo = cur * 272u;
        let ia0_0 = ao + (br + 0u) * 3u + 0u;
        let ia1_0 = ao + (br + 16u) * 3u + 0u;
        let ia2_0 = ao + (br + 32u) * 3u + 0u;
        let ia3_0 = ao + (br + 48u) * 3u + 0u;
        let ib0_0 = bo + 0u + (bq + 0u) / 8u;
        let ib1_0 = bo + 0u + (bq + 16u) / 8u;
        let ib2_0 = bo + 0u + (bq + 32u) / 8u;
        let ib3_0 = bo + 0u + (bq + 48u) / 8u;
        let a0 = coopLoadT<TileA>(&staged_v4_k16_a[ia0_0], 3u);
        let a1 = coopLoadT<TileA>(&staged_v4_k16_a[ia1_0], 3u);
        let a2 = coopLoadT<TileA>(&staged_v4_k16_a[ia2_0], 3u);
        let a3 = coopLoadT<TileA>(&staged_v4_k16_a[ia3_0], 3u);
        let b0 = coopLoadT<TileB>(&staged_v4_k16_b[ib0_0], 17u);
        let b1 = coopLoadT<TileB>(&staged_v4_k16_b[ib1_0], 17u);
        let b2 = coopLoadT<TileB>(&staged_v4_k16_b[ib2_0], 17u);
        let b3 = coopLoadT<TileB>(&staged_v4_k16_b[ib3_0], 17u);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c02 = coopMultiplyAdd(a0, b2, c02);
        c03 = coopMultiplyAdd(a0, b3, c03);
        c10 = coopMultiplyAdd(a1, b0, c10);
        c11 = coopMultiplyAdd(a1, b1, c11);
        c12 = coopMultiplyAdd(a1, b2, c12);
        c13 = coopMultiplyAdd(a1, b3, c13);
        c20 = coopMultiplyAdd(a2, b0, c20);
        c21 = coopMultiplyAdd(a2, b1, c21);
        c22 = coopMultiplyAdd(a2, b2, c22);
        c23 = coopMultiplyAdd(a2, b3, c23);
        c30 = coopMultiplyAdd(a3, b0, c30);
        c31 = coopMultiplyAdd(a3, b1, c31);
        c32 = coopMultiplyAdd(a3, b2, c32);
        c33 = coopMultiplyAdd(a3, b3, c33);
        if more {
            let nao = (1u - cur) * 384u;
            let nbo = (1u - cur) * 272u;
            staged_v4_k16_a[nao + sa0] = va0;
            staged_v4_k16_a[nao + sa1] = va1;
            staged_v4_k16_b[nbo + sb0] = vb0;
            staged_v4_k16_b[nbo + sb1] = vb1;
        }
        workgroupBarrier();
    }
    let o00 = r * n + q;
    coopStoreT(c00, &c[o00], n);
    let o01 = r * n + q + 16u;
    coopStoreT(c01, &c[o01], n);
    let o02 = r * n + q + 32u;
    coopStoreT(c02, &c[o02], n);
    let o03 = r * n + q + 48u;
    coopStoreT(c03, &c[o03], n);
    let o10 = (r + 16u) * n + q;
    coopStoreT(c10, &c[o10], n);
    let o11 = (r + 16u) * n + q + 16u;
    coopStoreT(c11, &c[o11], n);
    let o12 = (r + 16u) * n + q + 32u;
    coopStoreT(c12, &c[o12], n);
    let o13 = (r + 16u) * n + q + 48u;
    coopStoreT(c13, &c[o13], n);
    let o20 = (r + 32u) * n + q;
    coopStoreT(c20, &c[o20], n);
    let o21 = (r + 32u) * n + q + 16u;
    coopStoreT(c21, &c[o21], n);
    let o22 = (r + 32u) * n + q + 32u;
    coopStoreT(c22, &c[o22], n);
    let o23 = (r + 32u) * n + q + 48u;
    coopStoreT(c23, &c[o23], n);
    let o30 = (r + 48u) * n + q;
    coopStoreT(c30, &c[o30], n);
    let o31 = (r + 48u) * n + q + 16u;
    coopStoreT(c31, &c[o31], n);
    let o32 = (r + 48u) * n + q + 32u;
    coopStoreT(c32, &c[o32], n);
    let o33 = (r + 48u) * n + q + 48u;
    coopStoreT(c33, &c[o33], n);
}

// 64 x 128 tile, two subgroups of 64 x 64, 32-wide K slices as vec4<u32> words, double-buffered: smaller workgroups, more of them a multiprocessor.
// Workgroup memory: two buffers of A (64 x 32) and B (32 x 128), 27648 bytes.
var<workgroup> staged_v4_64x128_a: array<vec4<u32>, 640>; // 2 x 64 rows, stride 5 (32 halves + 8 of padding)
var<workgroup> staged_v4_64x128_b: array<vec4<u32>, 1088>; // 2 x 32 rows, stride 17 (128 halves + 8 of padding)

// Grid: (N / 128, M / 64); K a multiple of 32; subgroups 32 wide.
@compute @workgroup_size(64)
fn coop_staged_v4_64x128(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 64u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u; // this subgroup's 64 x 64 block within the tile
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k8 = p.k / 8u; // vec4<u32> words in a row of a
    let n8 = n / 8u;   // and of b
    let r = r0 + br;
    let q = q0 + bq;
    var c00 = coopLoadT<TileC>(&c[r * n + q], n);
    var c01 = coopLoadT<TileC>(&c[r * n + q + 16u], n);
    var c02 = coopLoadT<TileC>(&c[r * n + q + 32u], n);
    var c03 = coopLoadT<TileC>(&c[r * n + q + 48u], n);
    var c10 = coopLoadT<TileC>(&c[(r + 16u) * n + q], n);
    var c11 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c12 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c13 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c20 = coopLoadT<TileC>(&c[(r + 32u) * n + q], n);
    var c21 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c22 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c23 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c30 = coopLoadT<TileC>(&c[(r + 48u) * n + q], n);
    var c31 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c32 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c33 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    // This invocation's words of each slice: A 64 rows x 4 words, B 32 rows x 16 words.
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 4u) * k8 + ea0 % 4u;
    let sa0 = (ea0 / 4u) * 5u + (ea0 % 4u) * 1u;
    let ea1 = lid + 64u;
    let ga1 = (r0 + ea1 / 4u) * k8 + ea1 % 4u;
    let sa1 = (ea1 / 4u) * 5u + (ea1 % 4u) * 1u;
    let ea2 = lid + 128u;
    let ga2 = (r0 + ea2 / 4u) * k8 + ea2 % 4u;
    let sa2 = (ea2 / 4u) * 5u + (ea2 % 4u) * 1u;
    let ea3 = lid + 192u;
    let ga3 = (r0 + ea3 / 4u) * k8 + ea3 % 4u;
    let sa3 = (ea3 / 4u) * 5u + (ea3 % 4u) * 1u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 16u) * n8 + q0 / 8u + eb0 % 16u;
    let sb0 = (eb0 / 16u) * 17u + (eb0 % 16u) * 1u;
    let eb1 = lid + 64u;
    let gb1 = (eb1 / 16u) * n8 + q0 / 8u + eb1 % 16u;
    let sb1 = (eb1 / 16u) * 17u + (eb1 % 16u) * 1u;
    let eb2 = lid + 128u;
    let gb2 = (eb2 / 16u) * n8 + q0 / 8u + eb2 % 16u;
    let sb2 = (eb2 / 16u) * 17u + (eb2 % 16u) * 1u;
    let eb3 = lid + 192u;
    let gb3 = (eb3 / 16u) * n8 + q0 / 8u + eb3 % 16u;
    let sb3 = (eb3 / 16u) * 17u + (eb3 % 16u) * 1u;
    let eb4 = lid + 256u;
    let gb4 = (eb4 / 16u) * n8 + q0 / 8u + eb4 % 16u;
    let sb4 = (eb4 / 16u) * 17u + (eb4 % 16u) * 1u;
    let eb5 = lid + 320u;
    let gb5 = (eb5 / 16u) * n8 + q0 / 8u + eb5 % 16u;
    let sb5 = (eb5 / 16u) * 17u + (eb5 % 16u) * 1u;
    let eb6 = lid + 384u;
    let gb6 = (eb6 / 16u) * n8 + q0 / 8u + eb6 % 16u;
    let sb6 = (eb6 / 16u) * 17u + (eb6 % 16u) * 1u;
    let eb7 = lid + 448u;
    let gb7 = (eb7 / 16u) * n8 + q0 / 8u + eb7 % 16u;
    let sb7 = (eb7 / 16u) * 17u + (eb7 % 16u) * 1u;
    // Slice 0 into buffer 0.
    var va0 = a8[ga0];
    var va1 = a8[ga1];
    var va2 = a8[ga2];
    var va3 = a8[ga3];
    var vb0 = b8[gb0];
    var vb1 = b8[gb1];
    var vb2 = b8[gb2];
    var vb3 = b8[gb3];
    var vb4 = b8[gb4];
    var vb5 = b8[gb5];
    var vb6 = b8[gb6];
    var vb7 = b8[gb7];
    staged_v4_64x128_a[sa0] = va0;
    staged_v4_64x128_a[sa1] = va1;
    staged_v4_64x128_a[sa2] = va2;
    staged_v4_64x128_a[sa3] = va3;
    staged_v4_64x128_b[sb0] = vb0;
    staged_v4_64x128_b[sb1] = vb1;
    staged_v4_64x128_b[sb2] = vb2;
    staged_v4_64x128_b[sb3] = vb3;
    staged_v4_64x128_b[sb4] = vb4;
    staged_v4_64x128_b[sb5] = vb5;
    staged_v4_64x128_b[sb6] = vb6;
    staged_v4_64x128_b[sb7] = vb7;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 32u) {
        let cur = (k0 / 32u) % 2u;
        let more = k0 + 32u < p.k;
        // The next slice's words are loaded into registers before this slice's multiply-adds
        // and stored into the other buffer after them: one barrier a slice.
        if more {
            va0 = a8[ga0 + (k0 + 32u) / 8u];
            va1 = a8[ga1 + (k0 + 32u) / 8u];
            va2 = a8[ga2 + (k0 + 32u) / 8u];
            va3 = a8[ga3 + (k0 + 32u) / 8u];
            vb0 = b8[gb0 + (k0 + 32u) * n8];
            vb1 = b8[gb1 + (k0 + 32u) * n8];
            vb2 = b8[gb2 + (k0 + 32u) * n8];
            vb3 = b8[gb3 + (k0 + 32u) * n8];
            vb4 = b8[gb4 + (k0 + 32u) * n8];
            vb5 = b8[gb5 + (k0 + 32u) * n8];
            vb6 = b8[gb6 + (k0 + 32u) * n8];
            vb7 = b8[gb7 + (k0 + 32u) * n8];
        }
        let ao = cur * 320u;
        let bo = cur * 544u;
        let ia0_0 = ao + (br + 0u) * 5u + 0u;
        let ia1_0 = ao + (br + 16u) * 5u + 0u;
        let ia2_0 = ao + (br + 32u) * 5u + 0u;
        let ia3_0 = ao + (br + 48u) * 5u + 0u;
        let ib0_0 = bo + 0u + (bq + 0u) / 8u;
        let ib1_0 = bo + 0u + (bq + 16u) / 8u;
        let ib2_0 = bo + 0u + (bq + 32u) / 8u;
        let ib3_0 = bo + 0u + (bq + 48u) / 8u;
        let a0 = coopLoadT<TileA>(&staged_v4_64x128_a[ia0_0], 5u);
        let a1 = coopLoadT<TileA>(&staged_v4_64x128_a[ia1_0], 5u);
        let a2 = coopLoadT<TileA>(&staged_v4_64x128_a[ia2_0], 5u);
        let a3 = coopLoadT<TileA>(&staged_v4_64x128_a[ia3_0], 5u);
        let b0 = coopLoadT<TileB>(&staged_v4_64x128_b[ib0_0], 17u);
        let b1 = coopLoadT<TileB>(&staged_v4_64x128_b[ib1_0], 17u);
        let b2 = coopLoadT<TileB>(&staged_v4_64x128_b[ib2_0], 17u);
        let b3 = coopLoadT<TileB>(&staged_v4_64x128_b[ib3_0], 17u);
        c00 = coopMultiplyAdd(a0, b0, c00);
        c01 = coopMultiplyAdd(a0, b1, c01);
        c02 = coopMultiplyAdd(a0, b2, c02);
        c03 = coopMultiplyAdd(a0, b3, c03);
        c10 = coopMultiplyAdd(a1, b0, c10);
        c11 = coopMultiplyAdd(a1, b1, c11);
        c12 = coopMultiplyAdd(a1, b2, c12);
        c13 = coopMultiplyAdd(a1, b3, c13);
        c20 = coopMultiplyAdd(a2, b0, c20);
        c21 = coopMultiplyAdd(a2, b1, c21);
        c22 = coopMultiplyAdd(a2, b2, c22);
        c23 = coopMultiplyAdd(a2, b3, c23);
        c30 = coopMultiplyAdd(a3, b0, c30);
        c31 = coopMultiplyAdd(a3, b1, c31);
        c32 = coopMultiplyAdd(a3, b2, c32);
        c33 = coopMultiplyAdd(a3, b3, c33);
        let ia0_16 = ao + (br + 0u) * 5u + 2u;
        let ia1_16 = ao + (br + 16u) * 5u + 2u;
        let ia2_16 = ao + (br + 32u) * 5u + 2u;
        let ia3_16 = ao + (br + 48u) * 5u + 2u;
        let ib0_16 = bo + 272u + (bq + 0u) / 8u;
        let ib1_16 = bo + 272u + (bq + 16u) / 8u;
        let ib2_16 = bo + 272u + (bq + 32u) / 8u;
        let ib3_16 = bo + 272u + (bq + 48u) / 8u;
        let a0_16 = coopLoadT<TileA>(&staged_v4_64x128_a[ia0_16], 5u);
        let a1_16 = coopLoadT<TileA>(&staged_v4_64x128_a[ia1_16], 5u);
        let a2_16 = coopLoadT<TileA>(&staged_v4_64x128_a[ia2_16], 5u);
        let a3_16 = coopLoadT<TileA>(&staged_v4_64x128_a[ia3_16], 5u);
        let b0_16 = coopLoadT<TileB>(&staged_v4_64x128_b[ib0_16], 17u);
        let b1_16 = coopLoadT<TileB>(&staged_v4_64x128_b[ib1_16], 17u);
        let b2_16 = coopLoadT<TileB>(&staged_v4_64x128_b[ib2_16], 17u);
        let b3_16 = coopLoadT<TileB>(&staged_v4_64x128_b[ib3_16], 17u);
        c00 = coopMultiplyAdd(a0_16, b0_16, c00);
        c01 = coopMultiplyAdd(a0_16, b1_16, c01);
        c02 = coopMultiplyAdd(a0_16, b2_16, c02);
        c03 = coopMultiplyAdd(a0_16, b3_16, c03);
        c10 = coopMultiplyAdd(a1_16, b0_16, c10);
        c11 = coopMultiplyAdd(a1_16, b1_16, c11);
        c12 = coopMultiplyAdd(a1_16, b2_16, c12);
        c13 = coopMultiplyAdd(a1_16, b3_16, c13);
        c20 = coopMultiplyAdd(a2_16, b0_16, c20);
        c21 = coopMultiplyAdd(a2_16, b1_16, c21);
        c22 = coopMultiplyAdd(a2_16, b2_16, c22);
        c23 = coopMultiplyAdd(a2_16, b3_16, c23);
        c30 = coopMultiplyAdd(a3_16, b0_16, c30);
        c31 = coopMultiplyAdd(a3_16, b1_16, c31);
        c32 = coopMultiplyAdd(a3_16, b2_16, c32);
        c33 = coopMultiplyAdd(a3_16, b3_16, c33);
        if more {
            let nao = (1u - cur) * 320u;
            let nbo = (1u - cur) * 544u;
            staged_v4_64x128_a[nao + sa0] = va0;
            staged_v4_64x128_a[nao + sa1] = va1;
            staged_v4_64x128_a[nao + sa2] = va2;
            staged_v4_64x128_a[nao + sa3] = va3;
            staged_v4_64x128_b[nbo + sb0] = vb0;
            staged_v4_64x128_b[nbo + sb1] = vb1;
            staged_v4_64x128_b[nbo + sb2] = vb2;
            staged_v4_64x128_b[nbo + sb3] = vb3;
            staged_v4_64x128_b[nbo + sb4] = vb4;
            staged_v4_64x128_b[nbo + sb5] = vb5;
            staged_v4_64x128_b[nbo + sb6] = vb6;
            staged_v4_64x128_b[nbo + sb7] = vb7;
        }
        workgroupBarrier();
    }
    let o00 = r * n + q;
    coopStoreT(c00, &c[o00], n);
    let o01 = r * n + q + 16u;
    coopStoreT(c01, &c[o01], n);
    let o02 = r * n + q + 32u;
    coopStoreT(c02, &c[o02], n);
    let o03 = r * n + q + 48u;
    coopStoreT(c03, &c[o03], n);
    let o10 = (r + 16u) * n + q;
    coopStoreT(c10, &c[o10], n);
    let o11 = (r + 16u) * n + q + 16u;
    coopStoreT(c11, &c[o11], n);
    let o12 = (r + 16u) * n + q + 32u;
    coopStoreT(c12, &c[o12], n);
    let o13 = (r + 16u) * n + q + 48u;
    coopStoreT(c13, &c[o13], n);
    let o20 = (r + 32u) * n + q;
    coopStoreT(c20, &c[o20], n);
    let o21 = (r + 32u) * n + q + 16u;
    coopStoreT(c21, &c[o21], n);
    let o22 = (r + 32u) * n + q + 32u;
    coopStoreT(c22, &c[o22], n);
    let o23 = (r + 32u) * n + q + 48u;
    coopStoreT(c23, &c[o23], n);
    let o30 = (r + 48u) * n + q;
    coopStoreT(c30, &c[o30], n);
    let o31 = (r + 48u) * n + q + 16u;
    coopStoreT(c31, &c[o31], n);
    let o32 = (r + 48u) * n + q + 32u;
    coopStoreT(c32, &c[o32], n);
    let o33 = (r + 48u) * n + q + 48u;
    coopStoreT(c33, &c[o33], n);
}
