// The cooperative-matrix probe of `dev/src/bin/coop_probe.rs` (outside `shaders/`: it needs the
// native-only `wgpu_cooperative_matrix` extension and f16, which the engine's kernels do not).
//   c (M, N) f32 = a (M, K) f16 @ b (K, N) f16, all row-major, M, N multiples of 64, K of 16.
// One subgroup (32 invocations) a workgroup computes a 64 x 64 block of c as 4 x 4 tiles of
// 16 x 16, accumulating in f32: per 16-wide K step it loads four A tiles and four B tiles
// straight from the storage buffers (no workgroup staging) and issues 16 multiply-adds. The
// accumulators are 16 named matrices, loaded from c (cleared by the host) to start. Each
// store's offset is a `let` of its own: naga 30's SPIR-V writer panics ("expression is not
// cached") on a coopStore whose pointer index is computed inline.
// `coop_staged_v4` is the one workgroup-staged variant kept (commit 177c1ce has six more): the
// driver's compiler rejects it as naga writes it, and coop_probe.rs's `--passthrough` loads it
// with the `ArrayStride` decorations of its workgroup arrays removed (coop_probe.rs says why).

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
// The same a and b as words of 8 halves, for the staged variant's 16-byte loads.
@group(0) @binding(1) var<storage, read> a8: array<vec4<u32>>; // (M, K / 8)
@group(0) @binding(2) var<storage, read> b8: array<vec4<u32>>; // (K, N / 8)
// And as words of 4 halves, for coop_staged_h4.
@group(0) @binding(1) var<storage, read> a4: array<vec4<f16>>; // (M, K / 4)
@group(0) @binding(2) var<storage, read> b4: array<vec4<f16>>; // (K, N / 4)

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

// The vec4<f16>-staged variants below are written by coop_probe_staged.py (edit it, not them).

// coop_staged_v4 with the tiles in workgroup memory as vec4<f16> (8-byte words, a and b read as vec4<f16>): the cooperative loads' pointer has the matrices' own component type, where coop_staged_v4's reads f16 through vec4<u32> (which NVIDIA's compiler rejects).
// Tile 128 x 128, 2 x 2 subgroups of 64 x 64 (4 x 4 fragments), 32-wide K slices,
// rows padded by 8 halves, double-buffered: 37888 bytes of workgroup memory.
var<workgroup> coop_staged_h4_a: array<vec4<f16>, 2560>; // 2 x 128 rows, stride 10
var<workgroup> coop_staged_h4_b: array<vec4<f16>, 2176>; // 2 x 32 rows, stride 34

// Grid: (N / 128, M / 128); K a multiple of 32; subgroups 32 wide.
@compute @workgroup_size(128)
fn coop_staged_h4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u;
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k4 = p.k / 4u;
    let n4 = n / 4u;
    let r = r0 + br;
    let q = q0 + bq;
    var c0_0 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 0u], n);
    var c0_1 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 16u], n);
    var c0_2 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 32u], n);
    var c0_3 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 48u], n);
    var c1_0 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 0u], n);
    var c1_1 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c1_2 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c1_3 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c2_0 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 0u], n);
    var c2_1 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c2_2 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c2_3 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c3_0 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 0u], n);
    var c3_1 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c3_2 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c3_3 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 8u) * k4 + ea0 % 8u;
    let sa0 = (ea0 / 8u) * 10u + ea0 % 8u;
    let ea1 = lid + 128u;
    let ga1 = (r0 + ea1 / 8u) * k4 + ea1 % 8u;
    let sa1 = (ea1 / 8u) * 10u + ea1 % 8u;
    let ea2 = lid + 256u;
    let ga2 = (r0 + ea2 / 8u) * k4 + ea2 % 8u;
    let sa2 = (ea2 / 8u) * 10u + ea2 % 8u;
    let ea3 = lid + 384u;
    let ga3 = (r0 + ea3 / 8u) * k4 + ea3 % 8u;
    let sa3 = (ea3 / 8u) * 10u + ea3 % 8u;
    let ea4 = lid + 512u;
    let ga4 = (r0 + ea4 / 8u) * k4 + ea4 % 8u;
    let sa4 = (ea4 / 8u) * 10u + ea4 % 8u;
    let ea5 = lid + 640u;
    let ga5 = (r0 + ea5 / 8u) * k4 + ea5 % 8u;
    let sa5 = (ea5 / 8u) * 10u + ea5 % 8u;
    let ea6 = lid + 768u;
    let ga6 = (r0 + ea6 / 8u) * k4 + ea6 % 8u;
    let sa6 = (ea6 / 8u) * 10u + ea6 % 8u;
    let ea7 = lid + 896u;
    let ga7 = (r0 + ea7 / 8u) * k4 + ea7 % 8u;
    let sa7 = (ea7 / 8u) * 10u + ea7 % 8u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 32u) * n4 + q0 / 4u + eb0 % 32u;
    let sb0 = (eb0 / 32u) * 34u + eb0 % 32u;
    let eb1 = lid + 128u;
    let gb1 = (eb1 / 32u) * n4 + q0 / 4u + eb1 % 32u;
    let sb1 = (eb1 / 32u) * 34u + eb1 % 32u;
    let eb2 = lid + 256u;
    let gb2 = (eb2 / 32u) * n4 + q0 / 4u + eb2 % 32u;
    let sb2 = (eb2 / 32u) * 34u + eb2 % 32u;
    let eb3 = lid + 384u;
    let gb3 = (eb3 / 32u) * n4 + q0 / 4u + eb3 % 32u;
    let sb3 = (eb3 / 32u) * 34u + eb3 % 32u;
    let eb4 = lid + 512u;
    let gb4 = (eb4 / 32u) * n4 + q0 / 4u + eb4 % 32u;
    let sb4 = (eb4 / 32u) * 34u + eb4 % 32u;
    let eb5 = lid + 640u;
    let gb5 = (eb5 / 32u) * n4 + q0 / 4u + eb5 % 32u;
    let sb5 = (eb5 / 32u) * 34u + eb5 % 32u;
    let eb6 = lid + 768u;
    let gb6 = (eb6 / 32u) * n4 + q0 / 4u + eb6 % 32u;
    let sb6 = (eb6 / 32u) * 34u + eb6 % 32u;
    let eb7 = lid + 896u;
    let gb7 = (eb7 / 32u) * n4 + q0 / 4u + eb7 % 32u;
    let sb7 = (eb7 / 32u) * 34u + eb7 % 32u;
    var va0 = a4[ga0];
    var va1 = a4[ga1];
    var va2 = a4[ga2];
    var va3 = a4[ga3];
    var va4 = a4[ga4];
    var va5 = a4[ga5];
    var va6 = a4[ga6];
    var va7 = a4[ga7];
    var vb0 = b4[gb0];
    var vb1 = b4[gb1];
    var vb2 = b4[gb2];
    var vb3 = b4[gb3];
    var vb4 = b4[gb4];
    var vb5 = b4[gb5];
    var vb6 = b4[gb6];
    var vb7 = b4[gb7];
    coop_staged_h4_a[sa0] = va0;
    coop_staged_h4_a[sa1] = va1;
    coop_staged_h4_a[sa2] = va2;
    coop_staged_h4_a[sa3] = va3;
    coop_staged_h4_a[sa4] = va4;
    coop_staged_h4_a[sa5] = va5;
    coop_staged_h4_a[sa6] = va6;
    coop_staged_h4_a[sa7] = va7;
    coop_staged_h4_b[sb0] = vb0;
    coop_staged_h4_b[sb1] = vb1;
    coop_staged_h4_b[sb2] = vb2;
    coop_staged_h4_b[sb3] = vb3;
    coop_staged_h4_b[sb4] = vb4;
    coop_staged_h4_b[sb5] = vb5;
    coop_staged_h4_b[sb6] = vb6;
    coop_staged_h4_b[sb7] = vb7;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 32u) {
        let cur = (k0 / 32u) % 2u;
        let more = k0 + 32u < p.k;
        if more {
            va0 = a4[ga0 + (k0 + 32u) / 4u];
            va1 = a4[ga1 + (k0 + 32u) / 4u];
            va2 = a4[ga2 + (k0 + 32u) / 4u];
            va3 = a4[ga3 + (k0 + 32u) / 4u];
            va4 = a4[ga4 + (k0 + 32u) / 4u];
            va5 = a4[ga5 + (k0 + 32u) / 4u];
            va6 = a4[ga6 + (k0 + 32u) / 4u];
            va7 = a4[ga7 + (k0 + 32u) / 4u];
            vb0 = b4[gb0 + (k0 + 32u) * n4];
            vb1 = b4[gb1 + (k0 + 32u) * n4];
            vb2 = b4[gb2 + (k0 + 32u) * n4];
            vb3 = b4[gb3 + (k0 + 32u) * n4];
            vb4 = b4[gb4 + (k0 + 32u) * n4];
            vb5 = b4[gb5 + (k0 + 32u) * n4];
            vb6 = b4[gb6 + (k0 + 32u) * n4];
            vb7 = b4[gb7 + (k0 + 32u) * n4];
        }
        let ao = cur * 1280u;
        let bo = cur * 1088u;
        let ia0_0 = ao + (br + 0u) * 10u + 0u;
        let a0_0 = coopLoadT<TileA>(&coop_staged_h4_a[ia0_0], 10u);
        let ia1_0 = ao + (br + 16u) * 10u + 0u;
        let a1_0 = coopLoadT<TileA>(&coop_staged_h4_a[ia1_0], 10u);
        let ia2_0 = ao + (br + 32u) * 10u + 0u;
        let a2_0 = coopLoadT<TileA>(&coop_staged_h4_a[ia2_0], 10u);
        let ia3_0 = ao + (br + 48u) * 10u + 0u;
        let a3_0 = coopLoadT<TileA>(&coop_staged_h4_a[ia3_0], 10u);
        let ib0_0 = bo + 0u + (bq + 0u) / 4u;
        let b0_0 = coopLoadT<TileB>(&coop_staged_h4_b[ib0_0], 34u);
        let ib1_0 = bo + 0u + (bq + 16u) / 4u;
        let b1_0 = coopLoadT<TileB>(&coop_staged_h4_b[ib1_0], 34u);
        let ib2_0 = bo + 0u + (bq + 32u) / 4u;
        let b2_0 = coopLoadT<TileB>(&coop_staged_h4_b[ib2_0], 34u);
        let ib3_0 = bo + 0u + (bq + 48u) / 4u;
        let b3_0 = coopLoadT<TileB>(&coop_staged_h4_b[ib3_0], 34u);
        c0_0 = coopMultiplyAdd(a0_0, b0_0, c0_0);
        c0_1 = coopMultiplyAdd(a0_0, b1_0, c0_1);
        c0_2 = coopMultiplyAdd(a0_0, b2_0, c0_2);
        c0_3 = coopMultiplyAdd(a0_0, b3_0, c0_3);
        c1_0 = coopMultiplyAdd(a1_0, b0_0, c1_0);
        c1_1 = coopMultiplyAdd(a1_0, b1_0, c1_1);
        c1_2 = coopMultiplyAdd(a1_0, b2_0, c1_2);
        c1_3 = coopMultiplyAdd(a1_0, b3_0, c1_3);
        c2_0 = coopMultiplyAdd(a2_0, b0_0, c2_0);
        c2_1 = coopMultiplyAdd(a2_0, b1_0, c2_1);
        c2_2 = coopMultiplyAdd(a2_0, b2_0, c2_2);
        c2_3 = coopMultiplyAdd(a2_0, b3_0, c2_3);
        c3_0 = coopMultiplyAdd(a3_0, b0_0, c3_0);
        c3_1 = coopMultiplyAdd(a3_0, b1_0, c3_1);
        c3_2 = coopMultiplyAdd(a3_0, b2_0, c3_2);
        c3_3 = coopMultiplyAdd(a3_0, b3_0, c3_3);
        let ia0_16 = ao + (br + 0u) * 10u + 4u;
        let a0_16 = coopLoadT<TileA>(&coop_staged_h4_a[ia0_16], 10u);
        let ia1_16 = ao + (br + 16u) * 10u + 4u;
        let a1_16 = coopLoadT<TileA>(&coop_staged_h4_a[ia1_16], 10u);
        let ia2_16 = ao + (br + 32u) * 10u + 4u;
        let a2_16 = coopLoadT<TileA>(&coop_staged_h4_a[ia2_16], 10u);
        let ia3_16 = ao + (br + 48u) * 10u + 4u;
        let a3_16 = coopLoadT<TileA>(&coop_staged_h4_a[ia3_16], 10u);
        let ib0_16 = bo + 544u + (bq + 0u) / 4u;
        let b0_16 = coopLoadT<TileB>(&coop_staged_h4_b[ib0_16], 34u);
        let ib1_16 = bo + 544u + (bq + 16u) / 4u;
        let b1_16 = coopLoadT<TileB>(&coop_staged_h4_b[ib1_16], 34u);
        let ib2_16 = bo + 544u + (bq + 32u) / 4u;
        let b2_16 = coopLoadT<TileB>(&coop_staged_h4_b[ib2_16], 34u);
        let ib3_16 = bo + 544u + (bq + 48u) / 4u;
        let b3_16 = coopLoadT<TileB>(&coop_staged_h4_b[ib3_16], 34u);
        c0_0 = coopMultiplyAdd(a0_16, b0_16, c0_0);
        c0_1 = coopMultiplyAdd(a0_16, b1_16, c0_1);
        c0_2 = coopMultiplyAdd(a0_16, b2_16, c0_2);
        c0_3 = coopMultiplyAdd(a0_16, b3_16, c0_3);
        c1_0 = coopMultiplyAdd(a1_16, b0_16, c1_0);
        c1_1 = coopMultiplyAdd(a1_16, b1_16, c1_1);
        c1_2 = coopMultiplyAdd(a1_16, b2_16, c1_2);
        c1_3 = coopMultiplyAdd(a1_16, b3_16, c1_3);
        c2_0 = coopMultiplyAdd(a2_16, b0_16, c2_0);
        c2_1 = coopMultiplyAdd(a2_16, b1_16, c2_1);
        c2_2 = coopMultiplyAdd(a2_16, b2_16, c2_2);
        c2_3 = coopMultiplyAdd(a2_16, b3_16, c2_3);
        c3_0 = coopMultiplyAdd(a3_16, b0_16, c3_0);
        c3_1 = coopMultiplyAdd(a3_16, b1_16, c3_1);
        c3_2 = coopMultiplyAdd(a3_16, b2_16, c3_2);
        c3_3 = coopMultiplyAdd(a3_16, b3_16, c3_3);
        if more {
            let nao = (1u - cur) * 1280u;
            let nbo = (1u - cur) * 1088u;
            coop_staged_h4_a[nao + sa0] = va0;
            coop_staged_h4_a[nao + sa1] = va1;
            coop_staged_h4_a[nao + sa2] = va2;
            coop_staged_h4_a[nao + sa3] = va3;
            coop_staged_h4_a[nao + sa4] = va4;
            coop_staged_h4_a[nao + sa5] = va5;
            coop_staged_h4_a[nao + sa6] = va6;
            coop_staged_h4_a[nao + sa7] = va7;
            coop_staged_h4_b[nbo + sb0] = vb0;
            coop_staged_h4_b[nbo + sb1] = vb1;
            coop_staged_h4_b[nbo + sb2] = vb2;
            coop_staged_h4_b[nbo + sb3] = vb3;
            coop_staged_h4_b[nbo + sb4] = vb4;
            coop_staged_h4_b[nbo + sb5] = vb5;
            coop_staged_h4_b[nbo + sb6] = vb6;
            coop_staged_h4_b[nbo + sb7] = vb7;
        }
        workgroupBarrier();
    }
    let o0_0 = (r + 0u) * n + q + 0u;
    coopStoreT(c0_0, &c[o0_0], n);
    let o0_1 = (r + 0u) * n + q + 16u;
    coopStoreT(c0_1, &c[o0_1], n);
    let o0_2 = (r + 0u) * n + q + 32u;
    coopStoreT(c0_2, &c[o0_2], n);
    let o0_3 = (r + 0u) * n + q + 48u;
    coopStoreT(c0_3, &c[o0_3], n);
    let o1_0 = (r + 16u) * n + q + 0u;
    coopStoreT(c1_0, &c[o1_0], n);
    let o1_1 = (r + 16u) * n + q + 16u;
    coopStoreT(c1_1, &c[o1_1], n);
    let o1_2 = (r + 16u) * n + q + 32u;
    coopStoreT(c1_2, &c[o1_2], n);
    let o1_3 = (r + 16u) * n + q + 48u;
    coopStoreT(c1_3, &c[o1_3], n);
    let o2_0 = (r + 32u) * n + q + 0u;
    coopStoreT(c2_0, &c[o2_0], n);
    let o2_1 = (r + 32u) * n + q + 16u;
    coopStoreT(c2_1, &c[o2_1], n);
    let o2_2 = (r + 32u) * n + q + 32u;
    coopStoreT(c2_2, &c[o2_2], n);
    let o2_3 = (r + 32u) * n + q + 48u;
    coopStoreT(c2_3, &c[o2_3], n);
    let o3_0 = (r + 48u) * n + q + 0u;
    coopStoreT(c3_0, &c[o3_0], n);
    let o3_1 = (r + 48u) * n + q + 16u;
    coopStoreT(c3_1, &c[o3_1], n);
    let o3_2 = (r + 48u) * n + q + 32u;
    coopStoreT(c3_2, &c[o3_2], n);
    let o3_3 = (r + 48u) * n + q + 48u;
    coopStoreT(c3_3, &c[o3_3], n);
}

// coop_staged_h4 with 16-wide K slices.
// Tile 128 x 128, 2 x 2 subgroups of 64 x 64 (4 x 4 fragments), 16-wide K slices,
// rows padded by 8 halves, double-buffered: 20992 bytes of workgroup memory.
var<workgroup> coop_staged_h4_k16_a: array<vec4<f16>, 1536>; // 2 x 128 rows, stride 6
var<workgroup> coop_staged_h4_k16_b: array<vec4<f16>, 1088>; // 2 x 16 rows, stride 34

// Grid: (N / 128, M / 128); K a multiple of 16; subgroups 32 wide.
@compute @workgroup_size(128)
fn coop_staged_h4_k16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u;
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k4 = p.k / 4u;
    let n4 = n / 4u;
    let r = r0 + br;
    let q = q0 + bq;
    var c0_0 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 0u], n);
    var c0_1 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 16u], n);
    var c0_2 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 32u], n);
    var c0_3 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 48u], n);
    var c1_0 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 0u], n);
    var c1_1 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c1_2 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c1_3 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c2_0 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 0u], n);
    var c2_1 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c2_2 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c2_3 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c3_0 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 0u], n);
    var c3_1 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c3_2 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c3_3 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 4u) * k4 + ea0 % 4u;
    let sa0 = (ea0 / 4u) * 6u + ea0 % 4u;
    let ea1 = lid + 128u;
    let ga1 = (r0 + ea1 / 4u) * k4 + ea1 % 4u;
    let sa1 = (ea1 / 4u) * 6u + ea1 % 4u;
    let ea2 = lid + 256u;
    let ga2 = (r0 + ea2 / 4u) * k4 + ea2 % 4u;
    let sa2 = (ea2 / 4u) * 6u + ea2 % 4u;
    let ea3 = lid + 384u;
    let ga3 = (r0 + ea3 / 4u) * k4 + ea3 % 4u;
    let sa3 = (ea3 / 4u) * 6u + ea3 % 4u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 32u) * n4 + q0 / 4u + eb0 % 32u;
    let sb0 = (eb0 / 32u) * 34u + eb0 % 32u;
    let eb1 = lid + 128u;
    let gb1 = (eb1 / 32u) * n4 + q0 / 4u + eb1 % 32u;
    let sb1 = (eb1 / 32u) * 34u + eb1 % 32u;
    let eb2 = lid + 256u;
    let gb2 = (eb2 / 32u) * n4 + q0 / 4u + eb2 % 32u;
    let sb2 = (eb2 / 32u) * 34u + eb2 % 32u;
    let eb3 = lid + 384u;
    let gb3 = (eb3 / 32u) * n4 + q0 / 4u + eb3 % 32u;
    let sb3 = (eb3 / 32u) * 34u + eb3 % 32u;
    var va0 = a4[ga0];
    var va1 = a4[ga1];
    var va2 = a4[ga2];
    var va3 = a4[ga3];
    var vb0 = b4[gb0];
    var vb1 = b4[gb1];
    var vb2 = b4[gb2];
    var vb3 = b4[gb3];
    coop_staged_h4_k16_a[sa0] = va0;
    coop_staged_h4_k16_a[sa1] = va1;
    coop_staged_h4_k16_a[sa2] = va2;
    coop_staged_h4_k16_a[sa3] = va3;
    coop_staged_h4_k16_b[sb0] = vb0;
    coop_staged_h4_k16_b[sb1] = vb1;
    coop_staged_h4_k16_b[sb2] = vb2;
    coop_staged_h4_k16_b[sb3] = vb3;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 16u) {
        let cur = (k0 / 16u) % 2u;
        let more = k0 + 16u < p.k;
        if more {
            va0 = a4[ga0 + (k0 + 16u) / 4u];
            va1 = a4[ga1 + (k0 + 16u) / 4u];
            va2 = a4[ga2 + (k0 + 16u) / 4u];
            va3 = a4[ga3 + (k0 + 16u) / 4u];
            vb0 = b4[gb0 + (k0 + 16u) * n4];
            vb1 = b4[gb1 + (k0 + 16u) * n4];
            vb2 = b4[gb2 + (k0 + 16u) * n4];
            vb3 = b4[gb3 + (k0 + 16u) * n4];
        }
        let ao = cur * 768u;
        let bo = cur * 544u;
        let ia0_0 = ao + (br + 0u) * 6u + 0u;
        let a0_0 = coopLoadT<TileA>(&coop_staged_h4_k16_a[ia0_0], 6u);
        let ia1_0 = ao + (br + 16u) * 6u + 0u;
        let a1_0 = coopLoadT<TileA>(&coop_staged_h4_k16_a[ia1_0], 6u);
        let ia2_0 = ao + (br + 32u) * 6u + 0u;
        let a2_0 = coopLoadT<TileA>(&coop_staged_h4_k16_a[ia2_0], 6u);
        let ia3_0 = ao + (br + 48u) * 6u + 0u;
        let a3_0 = coopLoadT<TileA>(&coop_staged_h4_k16_a[ia3_0], 6u);
        let ib0_0 = bo + 0u + (bq + 0u) / 4u;
        let b0_0 = coopLoadT<TileB>(&coop_staged_h4_k16_b[ib0_0], 34u);
        let ib1_0 = bo + 0u + (bq + 16u) / 4u;
        let b1_0 = coopLoadT<TileB>(&coop_staged_h4_k16_b[ib1_0], 34u);
        let ib2_0 = bo + 0u + (bq + 32u) / 4u;
        let b2_0 = coopLoadT<TileB>(&coop_staged_h4_k16_b[ib2_0], 34u);
        let ib3_0 = bo + 0u + (bq + 48u) / 4u;
        let b3_0 = coopLoadT<TileB>(&coop_staged_h4_k16_b[ib3_0], 34u);
        c0_0 = coopMultiplyAdd(a0_0, b0_0, c0_0);
        c0_1 = coopMultiplyAdd(a0_0, b1_0, c0_1);
        c0_2 = coopMultiplyAdd(a0_0, b2_0, c0_2);
        c0_3 = coopMultiplyAdd(a0_0, b3_0, c0_3);
        c1_0 = coopMultiplyAdd(a1_0, b0_0, c1_0);
        c1_1 = coopMultiplyAdd(a1_0, b1_0, c1_1);
        c1_2 = coopMultiplyAdd(a1_0, b2_0, c1_2);
        c1_3 = coopMultiplyAdd(a1_0, b3_0, c1_3);
        c2_0 = coopMultiplyAdd(a2_0, b0_0, c2_0);
        c2_1 = coopMultiplyAdd(a2_0, b1_0, c2_1);
        c2_2 = coopMultiplyAdd(a2_0, b2_0, c2_2);
        c2_3 = coopMultiplyAdd(a2_0, b3_0, c2_3);
        c3_0 = coopMultiplyAdd(a3_0, b0_0, c3_0);
        c3_1 = coopMultiplyAdd(a3_0, b1_0, c3_1);
        c3_2 = coopMultiplyAdd(a3_0, b2_0, c3_2);
        c3_3 = coopMultiplyAdd(a3_0, b3_0, c3_3);
        if more {
            let nao = (1u - cur) * 768u;
            let nbo = (1u - cur) * 544u;
            coop_staged_h4_k16_a[nao + sa0] = va0;
            coop_staged_h4_k16_a[nao + sa1] = va1;
            coop_staged_h4_k16_a[nao + sa2] = va2;
            coop_staged_h4_k16_a[nao + sa3] = va3;
            coop_staged_h4_k16_b[nbo + sb0] = vb0;
            coop_staged_h4_k16_b[nbo + sb1] = vb1;
            coop_staged_h4_k16_b[nbo + sb2] = vb2;
            coop_staged_h4_k16_b[nbo + sb3] = vb3;
        }
        workgroupBarrier();
    }
    let o0_0 = (r + 0u) * n + q + 0u;
    coopStoreT(c0_0, &c[o0_0], n);
    let o0_1 = (r + 0u) * n + q + 16u;
    coopStoreT(c0_1, &c[o0_1], n);
    let o0_2 = (r + 0u) * n + q + 32u;
    coopStoreT(c0_2, &c[o0_2], n);
    let o0_3 = (r + 0u) * n + q + 48u;
    coopStoreT(c0_3, &c[o0_3], n);
    let o1_0 = (r + 16u) * n + q + 0u;
    coopStoreT(c1_0, &c[o1_0], n);
    let o1_1 = (r + 16u) * n + q + 16u;
    coopStoreT(c1_1, &c[o1_1], n);
    let o1_2 = (r + 16u) * n + q + 32u;
    coopStoreT(c1_2, &c[o1_2], n);
    let o1_3 = (r + 16u) * n + q + 48u;
    coopStoreT(c1_3, &c[o1_3], n);
    let o2_0 = (r + 32u) * n + q + 0u;
    coopStoreT(c2_0, &c[o2_0], n);
    let o2_1 = (r + 32u) * n + q + 16u;
    coopStoreT(c2_1, &c[o2_1], n);
    let o2_2 = (r + 32u) * n + q + 32u;
    coopStoreT(c2_2, &c[o2_2], n);
    let o2_3 = (r + 32u) * n + q + 48u;
    coopStoreT(c2_3, &c[o2_3], n);
    let o3_0 = (r + 48u) * n + q + 0u;
    coopStoreT(c3_0, &c[o3_0], n);
    let o3_1 = (r + 48u) * n + q + 16u;
    coopStoreT(c3_1, &c[o3_1], n);
    let o3_2 = (r + 48u) * n + q + 32u;
    coopStoreT(c3_2, &c[o3_2], n);
    let o3_3 = (r + 48u) * n + q + 48u;
    coopStoreT(c3_3, &c[o3_3], n);
}

// coop_staged_h4 without the rows' padding.
// Tile 128 x 128, 2 x 2 subgroups of 64 x 64 (4 x 4 fragments), 32-wide K slices,
// rows padded by 0 halves, double-buffered: 32768 bytes of workgroup memory.
var<workgroup> coop_staged_h4_nopad_a: array<vec4<f16>, 2048>; // 2 x 128 rows, stride 8
var<workgroup> coop_staged_h4_nopad_b: array<vec4<f16>, 2048>; // 2 x 32 rows, stride 32

// Grid: (N / 128, M / 128); K a multiple of 32; subgroups 32 wide.
@compute @workgroup_size(128)
fn coop_staged_h4_nopad(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u;
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k4 = p.k / 4u;
    let n4 = n / 4u;
    let r = r0 + br;
    let q = q0 + bq;
    var c0_0 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 0u], n);
    var c0_1 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 16u], n);
    var c0_2 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 32u], n);
    var c0_3 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 48u], n);
    var c1_0 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 0u], n);
    var c1_1 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c1_2 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c1_3 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c2_0 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 0u], n);
    var c2_1 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c2_2 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c2_3 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c3_0 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 0u], n);
    var c3_1 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c3_2 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c3_3 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 8u) * k4 + ea0 % 8u;
    let sa0 = (ea0 / 8u) * 8u + ea0 % 8u;
    let ea1 = lid + 128u;
    let ga1 = (r0 + ea1 / 8u) * k4 + ea1 % 8u;
    let sa1 = (ea1 / 8u) * 8u + ea1 % 8u;
    let ea2 = lid + 256u;
    let ga2 = (r0 + ea2 / 8u) * k4 + ea2 % 8u;
    let sa2 = (ea2 / 8u) * 8u + ea2 % 8u;
    let ea3 = lid + 384u;
    let ga3 = (r0 + ea3 / 8u) * k4 + ea3 % 8u;
    let sa3 = (ea3 / 8u) * 8u + ea3 % 8u;
    let ea4 = lid + 512u;
    let ga4 = (r0 + ea4 / 8u) * k4 + ea4 % 8u;
    let sa4 = (ea4 / 8u) * 8u + ea4 % 8u;
    let ea5 = lid + 640u;
    let ga5 = (r0 + ea5 / 8u) * k4 + ea5 % 8u;
    let sa5 = (ea5 / 8u) * 8u + ea5 % 8u;
    let ea6 = lid + 768u;
    let ga6 = (r0 + ea6 / 8u) * k4 + ea6 % 8u;
    let sa6 = (ea6 / 8u) * 8u + ea6 % 8u;
    let ea7 = lid + 896u;
    let ga7 = (r0 + ea7 / 8u) * k4 + ea7 % 8u;
    let sa7 = (ea7 / 8u) * 8u + ea7 % 8u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 32u) * n4 + q0 / 4u + eb0 % 32u;
    let sb0 = (eb0 / 32u) * 32u + eb0 % 32u;
    let eb1 = lid + 128u;
    let gb1 = (eb1 / 32u) * n4 + q0 / 4u + eb1 % 32u;
    let sb1 = (eb1 / 32u) * 32u + eb1 % 32u;
    let eb2 = lid + 256u;
    let gb2 = (eb2 / 32u) * n4 + q0 / 4u + eb2 % 32u;
    let sb2 = (eb2 / 32u) * 32u + eb2 % 32u;
    let eb3 = lid + 384u;
    let gb3 = (eb3 / 32u) * n4 + q0 / 4u + eb3 % 32u;
    let sb3 = (eb3 / 32u) * 32u + eb3 % 32u;
    let eb4 = lid + 512u;
    let gb4 = (eb4 / 32u) * n4 + q0 / 4u + eb4 % 32u;
    let sb4 = (eb4 / 32u) * 32u + eb4 % 32u;
    let eb5 = lid + 640u;
    let gb5 = (eb5 / 32u) * n4 + q0 / 4u + eb5 % 32u;
    let sb5 = (eb5 / 32u) * 32u + eb5 % 32u;
    let eb6 = lid + 768u;
    let gb6 = (eb6 / 32u) * n4 + q0 / 4u + eb6 % 32u;
    let sb6 = (eb6 / 32u) * 32u + eb6 % 32u;
    let eb7 = lid + 896u;
    let gb7 = (eb7 / 32u) * n4 + q0 / 4u + eb7 % 32u;
    let sb7 = (eb7 / 32u) * 32u + eb7 % 32u;
    var va0 = a4[ga0];
    var va1 = a4[ga1];
    var va2 = a4[ga2];
    var va3 = a4[ga3];
    var va4 = a4[ga4];
    var va5 = a4[ga5];
    var va6 = a4[ga6];
    var va7 = a4[ga7];
    var vb0 = b4[gb0];
    var vb1 = b4[gb1];
    var vb2 = b4[gb2];
    var vb3 = b4[gb3];
    var vb4 = b4[gb4];
    var vb5 = b4[gb5];
    var vb6 = b4[gb6];
    var vb7 = b4[gb7];
    coop_staged_h4_nopad_a[sa0] = va0;
    coop_staged_h4_nopad_a[sa1] = va1;
    coop_staged_h4_nopad_a[sa2] = va2;
    coop_staged_h4_nopad_a[sa3] = va3;
    coop_staged_h4_nopad_a[sa4] = va4;
    coop_staged_h4_nopad_a[sa5] = va5;
    coop_staged_h4_nopad_a[sa6] = va6;
    coop_staged_h4_nopad_a[sa7] = va7;
    coop_staged_h4_nopad_b[sb0] = vb0;
    coop_staged_h4_nopad_b[sb1] = vb1;
    coop_staged_h4_nopad_b[sb2] = vb2;
    coop_staged_h4_nopad_b[sb3] = vb3;
    coop_staged_h4_nopad_b[sb4] = vb4;
    coop_staged_h4_nopad_b[sb5] = vb5;
    coop_staged_h4_nopad_b[sb6] = vb6;
    coop_staged_h4_nopad_b[sb7] = vb7;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 32u) {
        let cur = (k0 / 32u) % 2u;
        let more = k0 + 32u < p.k;
        if more {
            va0 = a4[ga0 + (k0 + 32u) / 4u];
            va1 = a4[ga1 + (k0 + 32u) / 4u];
            va2 = a4[ga2 + (k0 + 32u) / 4u];
            va3 = a4[ga3 + (k0 + 32u) / 4u];
            va4 = a4[ga4 + (k0 + 32u) / 4u];
            va5 = a4[ga5 + (k0 + 32u) / 4u];
            va6 = a4[ga6 + (k0 + 32u) / 4u];
            va7 = a4[ga7 + (k0 + 32u) / 4u];
            vb0 = b4[gb0 + (k0 + 32u) * n4];
            vb1 = b4[gb1 + (k0 + 32u) * n4];
            vb2 = b4[gb2 + (k0 + 32u) * n4];
            vb3 = b4[gb3 + (k0 + 32u) * n4];
            vb4 = b4[gb4 + (k0 + 32u) * n4];
            vb5 = b4[gb5 + (k0 + 32u) * n4];
            vb6 = b4[gb6 + (k0 + 32u) * n4];
            vb7 = b4[gb7 + (k0 + 32u) * n4];
        }
        let ao = cur * 1024u;
        let bo = cur * 1024u;
        let ia0_0 = ao + (br + 0u) * 8u + 0u;
        let a0_0 = coopLoadT<TileA>(&coop_staged_h4_nopad_a[ia0_0], 8u);
        let ia1_0 = ao + (br + 16u) * 8u + 0u;
        let a1_0 = coopLoadT<TileA>(&coop_staged_h4_nopad_a[ia1_0], 8u);
        let ia2_0 = ao + (br + 32u) * 8u + 0u;
        let a2_0 = coopLoadT<TileA>(&coop_staged_h4_nopad_a[ia2_0], 8u);
        let ia3_0 = ao + (br + 48u) * 8u + 0u;
        let a3_0 = coopLoadT<TileA>(&coop_staged_h4_nopad_a[ia3_0], 8u);
        let ib0_0 = bo + 0u + (bq + 0u) / 4u;
        let b0_0 = coopLoadT<TileB>(&coop_staged_h4_nopad_b[ib0_0], 32u);
        let ib1_0 = bo + 0u + (bq + 16u) / 4u;
        let b1_0 = coopLoadT<TileB>(&coop_staged_h4_nopad_b[ib1_0], 32u);
        let ib2_0 = bo + 0u + (bq + 32u) / 4u;
        let b2_0 = coopLoadT<TileB>(&coop_staged_h4_nopad_b[ib2_0], 32u);
        let ib3_0 = bo + 0u + (bq + 48u) / 4u;
        let b3_0 = coopLoadT<TileB>(&coop_staged_h4_nopad_b[ib3_0], 32u);
        c0_0 = coopMultiplyAdd(a0_0, b0_0, c0_0);
        c0_1 = coopMultiplyAdd(a0_0, b1_0, c0_1);
        c0_2 = coopMultiplyAdd(a0_0, b2_0, c0_2);
        c0_3 = coopMultiplyAdd(a0_0, b3_0, c0_3);
        c1_0 = coopMultiplyAdd(a1_0, b0_0, c1_0);
        c1_1 = coopMultiplyAdd(a1_0, b1_0, c1_1);
        c1_2 = coopMultiplyAdd(a1_0, b2_0, c1_2);
        c1_3 = coopMultiplyAdd(a1_0, b3_0, c1_3);
        c2_0 = coopMultiplyAdd(a2_0, b0_0, c2_0);
        c2_1 = coopMultiplyAdd(a2_0, b1_0, c2_1);
        c2_2 = coopMultiplyAdd(a2_0, b2_0, c2_2);
        c2_3 = coopMultiplyAdd(a2_0, b3_0, c2_3);
        c3_0 = coopMultiplyAdd(a3_0, b0_0, c3_0);
        c3_1 = coopMultiplyAdd(a3_0, b1_0, c3_1);
        c3_2 = coopMultiplyAdd(a3_0, b2_0, c3_2);
        c3_3 = coopMultiplyAdd(a3_0, b3_0, c3_3);
        let ia0_16 = ao + (br + 0u) * 8u + 4u;
        let a0_16 = coopLoadT<TileA>(&coop_staged_h4_nopad_a[ia0_16], 8u);
        let ia1_16 = ao + (br + 16u) * 8u + 4u;
        let a1_16 = coopLoadT<TileA>(&coop_staged_h4_nopad_a[ia1_16], 8u);
        let ia2_16 = ao + (br + 32u) * 8u + 4u;
        let a2_16 = coopLoadT<TileA>(&coop_staged_h4_nopad_a[ia2_16], 8u);
        let ia3_16 = ao + (br + 48u) * 8u + 4u;
        let a3_16 = coopLoadT<TileA>(&coop_staged_h4_nopad_a[ia3_16], 8u);
        let ib0_16 = bo + 512u + (bq + 0u) / 4u;
        let b0_16 = coopLoadT<TileB>(&coop_staged_h4_nopad_b[ib0_16], 32u);
        let ib1_16 = bo + 512u + (bq + 16u) / 4u;
        let b1_16 = coopLoadT<TileB>(&coop_staged_h4_nopad_b[ib1_16], 32u);
        let ib2_16 = bo + 512u + (bq + 32u) / 4u;
        let b2_16 = coopLoadT<TileB>(&coop_staged_h4_nopad_b[ib2_16], 32u);
        let ib3_16 = bo + 512u + (bq + 48u) / 4u;
        let b3_16 = coopLoadT<TileB>(&coop_staged_h4_nopad_b[ib3_16], 32u);
        c0_0 = coopMultiplyAdd(a0_16, b0_16, c0_0);
        c0_1 = coopMultiplyAdd(a0_16, b1_16, c0_1);
        c0_2 = coopMultiplyAdd(a0_16, b2_16, c0_2);
        c0_3 = coopMultiplyAdd(a0_16, b3_16, c0_3);
        c1_0 = coopMultiplyAdd(a1_16, b0_16, c1_0);
        c1_1 = coopMultiplyAdd(a1_16, b1_16, c1_1);
        c1_2 = coopMultiplyAdd(a1_16, b2_16, c1_2);
        c1_3 = coopMultiplyAdd(a1_16, b3_16, c1_3);
        c2_0 = coopMultiplyAdd(a2_16, b0_16, c2_0);
        c2_1 = coopMultiplyAdd(a2_16, b1_16, c2_1);
        c2_2 = coopMultiplyAdd(a2_16, b2_16, c2_2);
        c2_3 = coopMultiplyAdd(a2_16, b3_16, c2_3);
        c3_0 = coopMultiplyAdd(a3_16, b0_16, c3_0);
        c3_1 = coopMultiplyAdd(a3_16, b1_16, c3_1);
        c3_2 = coopMultiplyAdd(a3_16, b2_16, c3_2);
        c3_3 = coopMultiplyAdd(a3_16, b3_16, c3_3);
        if more {
            let nao = (1u - cur) * 1024u;
            let nbo = (1u - cur) * 1024u;
            coop_staged_h4_nopad_a[nao + sa0] = va0;
            coop_staged_h4_nopad_a[nao + sa1] = va1;
            coop_staged_h4_nopad_a[nao + sa2] = va2;
            coop_staged_h4_nopad_a[nao + sa3] = va3;
            coop_staged_h4_nopad_a[nao + sa4] = va4;
            coop_staged_h4_nopad_a[nao + sa5] = va5;
            coop_staged_h4_nopad_a[nao + sa6] = va6;
            coop_staged_h4_nopad_a[nao + sa7] = va7;
            coop_staged_h4_nopad_b[nbo + sb0] = vb0;
            coop_staged_h4_nopad_b[nbo + sb1] = vb1;
            coop_staged_h4_nopad_b[nbo + sb2] = vb2;
            coop_staged_h4_nopad_b[nbo + sb3] = vb3;
            coop_staged_h4_nopad_b[nbo + sb4] = vb4;
            coop_staged_h4_nopad_b[nbo + sb5] = vb5;
            coop_staged_h4_nopad_b[nbo + sb6] = vb6;
            coop_staged_h4_nopad_b[nbo + sb7] = vb7;
        }
        workgroupBarrier();
    }
    let o0_0 = (r + 0u) * n + q + 0u;
    coopStoreT(c0_0, &c[o0_0], n);
    let o0_1 = (r + 0u) * n + q + 16u;
    coopStoreT(c0_1, &c[o0_1], n);
    let o0_2 = (r + 0u) * n + q + 32u;
    coopStoreT(c0_2, &c[o0_2], n);
    let o0_3 = (r + 0u) * n + q + 48u;
    coopStoreT(c0_3, &c[o0_3], n);
    let o1_0 = (r + 16u) * n + q + 0u;
    coopStoreT(c1_0, &c[o1_0], n);
    let o1_1 = (r + 16u) * n + q + 16u;
    coopStoreT(c1_1, &c[o1_1], n);
    let o1_2 = (r + 16u) * n + q + 32u;
    coopStoreT(c1_2, &c[o1_2], n);
    let o1_3 = (r + 16u) * n + q + 48u;
    coopStoreT(c1_3, &c[o1_3], n);
    let o2_0 = (r + 32u) * n + q + 0u;
    coopStoreT(c2_0, &c[o2_0], n);
    let o2_1 = (r + 32u) * n + q + 16u;
    coopStoreT(c2_1, &c[o2_1], n);
    let o2_2 = (r + 32u) * n + q + 32u;
    coopStoreT(c2_2, &c[o2_2], n);
    let o2_3 = (r + 32u) * n + q + 48u;
    coopStoreT(c2_3, &c[o2_3], n);
    let o3_0 = (r + 48u) * n + q + 0u;
    coopStoreT(c3_0, &c[o3_0], n);
    let o3_1 = (r + 48u) * n + q + 16u;
    coopStoreT(c3_1, &c[o3_1], n);
    let o3_2 = (r + 48u) * n + q + 32u;
    coopStoreT(c3_2, &c[o3_2], n);
    let o3_3 = (r + 48u) * n + q + 48u;
    coopStoreT(c3_3, &c[o3_3], n);
}

// coop_staged_h4 with eight subgroups over a 256 x 128 tile.
// Tile 256 x 128, 4 x 2 subgroups of 64 x 64 (4 x 4 fragments), 16-wide K slices,
// rows padded by 8 halves, double-buffered: 33280 bytes of workgroup memory.
var<workgroup> coop_staged_h4_256x128_a: array<vec4<f16>, 3072>; // 2 x 256 rows, stride 6
var<workgroup> coop_staged_h4_256x128_b: array<vec4<f16>, 1088>; // 2 x 16 rows, stride 34

// Grid: (N / 128, M / 256); K a multiple of 16; subgroups 32 wide.
@compute @workgroup_size(256)
fn coop_staged_h4_256x128(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 256u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u;
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k4 = p.k / 4u;
    let n4 = n / 4u;
    let r = r0 + br;
    let q = q0 + bq;
    var c0_0 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 0u], n);
    var c0_1 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 16u], n);
    var c0_2 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 32u], n);
    var c0_3 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 48u], n);
    var c1_0 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 0u], n);
    var c1_1 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c1_2 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c1_3 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c2_0 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 0u], n);
    var c2_1 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c2_2 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c2_3 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c3_0 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 0u], n);
    var c3_1 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c3_2 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c3_3 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 4u) * k4 + ea0 % 4u;
    let sa0 = (ea0 / 4u) * 6u + ea0 % 4u;
    let ea1 = lid + 256u;
    let ga1 = (r0 + ea1 / 4u) * k4 + ea1 % 4u;
    let sa1 = (ea1 / 4u) * 6u + ea1 % 4u;
    let ea2 = lid + 512u;
    let ga2 = (r0 + ea2 / 4u) * k4 + ea2 % 4u;
    let sa2 = (ea2 / 4u) * 6u + ea2 % 4u;
    let ea3 = lid + 768u;
    let ga3 = (r0 + ea3 / 4u) * k4 + ea3 % 4u;
    let sa3 = (ea3 / 4u) * 6u + ea3 % 4u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 32u) * n4 + q0 / 4u + eb0 % 32u;
    let sb0 = (eb0 / 32u) * 34u + eb0 % 32u;
    let eb1 = lid + 256u;
    let gb1 = (eb1 / 32u) * n4 + q0 / 4u + eb1 % 32u;
    let sb1 = (eb1 / 32u) * 34u + eb1 % 32u;
    var va0 = a4[ga0];
    var va1 = a4[ga1];
    var va2 = a4[ga2];
    var va3 = a4[ga3];
    var vb0 = b4[gb0];
    var vb1 = b4[gb1];
    coop_staged_h4_256x128_a[sa0] = va0;
    coop_staged_h4_256x128_a[sa1] = va1;
    coop_staged_h4_256x128_a[sa2] = va2;
    coop_staged_h4_256x128_a[sa3] = va3;
    coop_staged_h4_256x128_b[sb0] = vb0;
    coop_staged_h4_256x128_b[sb1] = vb1;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 16u) {
        let cur = (k0 / 16u) % 2u;
        let more = k0 + 16u < p.k;
        if more {
            va0 = a4[ga0 + (k0 + 16u) / 4u];
            va1 = a4[ga1 + (k0 + 16u) / 4u];
            va2 = a4[ga2 + (k0 + 16u) / 4u];
            va3 = a4[ga3 + (k0 + 16u) / 4u];
            vb0 = b4[gb0 + (k0 + 16u) * n4];
            vb1 = b4[gb1 + (k0 + 16u) * n4];
        }
        let ao = cur * 1536u;
        let bo = cur * 544u;
        let ia0_0 = ao + (br + 0u) * 6u + 0u;
        let a0_0 = coopLoadT<TileA>(&coop_staged_h4_256x128_a[ia0_0], 6u);
        let ia1_0 = ao + (br + 16u) * 6u + 0u;
        let a1_0 = coopLoadT<TileA>(&coop_staged_h4_256x128_a[ia1_0], 6u);
        let ia2_0 = ao + (br + 32u) * 6u + 0u;
        let a2_0 = coopLoadT<TileA>(&coop_staged_h4_256x128_a[ia2_0], 6u);
        let ia3_0 = ao + (br + 48u) * 6u + 0u;
        let a3_0 = coopLoadT<TileA>(&coop_staged_h4_256x128_a[ia3_0], 6u);
        let ib0_0 = bo + 0u + (bq + 0u) / 4u;
        let b0_0 = coopLoadT<TileB>(&coop_staged_h4_256x128_b[ib0_0], 34u);
        let ib1_0 = bo + 0u + (bq + 16u) / 4u;
        let b1_0 = coopLoadT<TileB>(&coop_staged_h4_256x128_b[ib1_0], 34u);
        let ib2_0 = bo + 0u + (bq + 32u) / 4u;
        let b2_0 = coopLoadT<TileB>(&coop_staged_h4_256x128_b[ib2_0], 34u);
        let ib3_0 = bo + 0u + (bq + 48u) / 4u;
        let b3_0 = coopLoadT<TileB>(&coop_staged_h4_256x128_b[ib3_0], 34u);
        c0_0 = coopMultiplyAdd(a0_0, b0_0, c0_0);
        c0_1 = coopMultiplyAdd(a0_0, b1_0, c0_1);
        c0_2 = coopMultiplyAdd(a0_0, b2_0, c0_2);
        c0_3 = coopMultiplyAdd(a0_0, b3_0, c0_3);
        c1_0 = coopMultiplyAdd(a1_0, b0_0, c1_0);
        c1_1 = coopMultiplyAdd(a1_0, b1_0, c1_1);
        c1_2 = coopMultiplyAdd(a1_0, b2_0, c1_2);
        c1_3 = coopMultiplyAdd(a1_0, b3_0, c1_3);
        c2_0 = coopMultiplyAdd(a2_0, b0_0, c2_0);
        c2_1 = coopMultiplyAdd(a2_0, b1_0, c2_1);
        c2_2 = coopMultiplyAdd(a2_0, b2_0, c2_2);
        c2_3 = coopMultiplyAdd(a2_0, b3_0, c2_3);
        c3_0 = coopMultiplyAdd(a3_0, b0_0, c3_0);
        c3_1 = coopMultiplyAdd(a3_0, b1_0, c3_1);
        c3_2 = coopMultiplyAdd(a3_0, b2_0, c3_2);
        c3_3 = coopMultiplyAdd(a3_0, b3_0, c3_3);
        if more {
            let nao = (1u - cur) * 1536u;
            let nbo = (1u - cur) * 544u;
            coop_staged_h4_256x128_a[nao + sa0] = va0;
            coop_staged_h4_256x128_a[nao + sa1] = va1;
            coop_staged_h4_256x128_a[nao + sa2] = va2;
            coop_staged_h4_256x128_a[nao + sa3] = va3;
            coop_staged_h4_256x128_b[nbo + sb0] = vb0;
            coop_staged_h4_256x128_b[nbo + sb1] = vb1;
        }
        workgroupBarrier();
    }
    let o0_0 = (r + 0u) * n + q + 0u;
    coopStoreT(c0_0, &c[o0_0], n);
    let o0_1 = (r + 0u) * n + q + 16u;
    coopStoreT(c0_1, &c[o0_1], n);
    let o0_2 = (r + 0u) * n + q + 32u;
    coopStoreT(c0_2, &c[o0_2], n);
    let o0_3 = (r + 0u) * n + q + 48u;
    coopStoreT(c0_3, &c[o0_3], n);
    let o1_0 = (r + 16u) * n + q + 0u;
    coopStoreT(c1_0, &c[o1_0], n);
    let o1_1 = (r + 16u) * n + q + 16u;
    coopStoreT(c1_1, &c[o1_1], n);
    let o1_2 = (r + 16u) * n + q + 32u;
    coopStoreT(c1_2, &c[o1_2], n);
    let o1_3 = (r + 16u) * n + q + 48u;
    coopStoreT(c1_3, &c[o1_3], n);
    let o2_0 = (r + 32u) * n + q + 0u;
    coopStoreT(c2_0, &c[o2_0], n);
    let o2_1 = (r + 32u) * n + q + 16u;
    coopStoreT(c2_1, &c[o2_1], n);
    let o2_2 = (r + 32u) * n + q + 32u;
    coopStoreT(c2_2, &c[o2_2], n);
    let o2_3 = (r + 32u) * n + q + 48u;
    coopStoreT(c2_3, &c[o2_3], n);
    let o3_0 = (r + 48u) * n + q + 0u;
    coopStoreT(c3_0, &c[o3_0], n);
    let o3_1 = (r + 48u) * n + q + 16u;
    coopStoreT(c3_1, &c[o3_1], n);
    let o3_2 = (r + 48u) * n + q + 32u;
    coopStoreT(c3_2, &c[o3_2], n);
    let o3_3 = (r + 48u) * n + q + 48u;
    coopStoreT(c3_3, &c[o3_3], n);
}

// coop_staged_h4 with eight subgroups over a 128 x 256 tile.
// Tile 128 x 256, 2 x 4 subgroups of 64 x 64 (4 x 4 fragments), 16-wide K slices,
// rows padded by 8 halves, double-buffered: 29184 bytes of workgroup memory.
var<workgroup> coop_staged_h4_128x256_a: array<vec4<f16>, 1536>; // 2 x 128 rows, stride 6
var<workgroup> coop_staged_h4_128x256_b: array<vec4<f16>, 2112>; // 2 x 16 rows, stride 66

// Grid: (N / 256, M / 128); K a multiple of 16; subgroups 32 wide.
@compute @workgroup_size(256)
fn coop_staged_h4_128x256(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 256u;
    let br = (s / 4u) * 64u;
    let bq = (s % 4u) * 64u;
    let n = p.n;
    let k4 = p.k / 4u;
    let n4 = n / 4u;
    let r = r0 + br;
    let q = q0 + bq;
    var c0_0 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 0u], n);
    var c0_1 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 16u], n);
    var c0_2 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 32u], n);
    var c0_3 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 48u], n);
    var c1_0 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 0u], n);
    var c1_1 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c1_2 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c1_3 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c2_0 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 0u], n);
    var c2_1 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c2_2 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c2_3 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c3_0 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 0u], n);
    var c3_1 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c3_2 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c3_3 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 4u) * k4 + ea0 % 4u;
    let sa0 = (ea0 / 4u) * 6u + ea0 % 4u;
    let ea1 = lid + 256u;
    let ga1 = (r0 + ea1 / 4u) * k4 + ea1 % 4u;
    let sa1 = (ea1 / 4u) * 6u + ea1 % 4u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 64u) * n4 + q0 / 4u + eb0 % 64u;
    let sb0 = (eb0 / 64u) * 66u + eb0 % 64u;
    let eb1 = lid + 256u;
    let gb1 = (eb1 / 64u) * n4 + q0 / 4u + eb1 % 64u;
    let sb1 = (eb1 / 64u) * 66u + eb1 % 64u;
    let eb2 = lid + 512u;
    let gb2 = (eb2 / 64u) * n4 + q0 / 4u + eb2 % 64u;
    let sb2 = (eb2 / 64u) * 66u + eb2 % 64u;
    let eb3 = lid + 768u;
    let gb3 = (eb3 / 64u) * n4 + q0 / 4u + eb3 % 64u;
    let sb3 = (eb3 / 64u) * 66u + eb3 % 64u;
    var va0 = a4[ga0];
    var va1 = a4[ga1];
    var vb0 = b4[gb0];
    var vb1 = b4[gb1];
    var vb2 = b4[gb2];
    var vb3 = b4[gb3];
    coop_staged_h4_128x256_a[sa0] = va0;
    coop_staged_h4_128x256_a[sa1] = va1;
    coop_staged_h4_128x256_b[sb0] = vb0;
    coop_staged_h4_128x256_b[sb1] = vb1;
    coop_staged_h4_128x256_b[sb2] = vb2;
    coop_staged_h4_128x256_b[sb3] = vb3;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 16u) {
        let cur = (k0 / 16u) % 2u;
        let more = k0 + 16u < p.k;
        if more {
            va0 = a4[ga0 + (k0 + 16u) / 4u];
            va1 = a4[ga1 + (k0 + 16u) / 4u];
            vb0 = b4[gb0 + (k0 + 16u) * n4];
            vb1 = b4[gb1 + (k0 + 16u) * n4];
            vb2 = b4[gb2 + (k0 + 16u) * n4];
            vb3 = b4[gb3 + (k0 + 16u) * n4];
        }
        let ao = cur * 768u;
        let bo = cur * 1056u;
        let ia0_0 = ao + (br + 0u) * 6u + 0u;
        let a0_0 = coopLoadT<TileA>(&coop_staged_h4_128x256_a[ia0_0], 6u);
        let ia1_0 = ao + (br + 16u) * 6u + 0u;
        let a1_0 = coopLoadT<TileA>(&coop_staged_h4_128x256_a[ia1_0], 6u);
        let ia2_0 = ao + (br + 32u) * 6u + 0u;
        let a2_0 = coopLoadT<TileA>(&coop_staged_h4_128x256_a[ia2_0], 6u);
        let ia3_0 = ao + (br + 48u) * 6u + 0u;
        let a3_0 = coopLoadT<TileA>(&coop_staged_h4_128x256_a[ia3_0], 6u);
        let ib0_0 = bo + 0u + (bq + 0u) / 4u;
        let b0_0 = coopLoadT<TileB>(&coop_staged_h4_128x256_b[ib0_0], 66u);
        let ib1_0 = bo + 0u + (bq + 16u) / 4u;
        let b1_0 = coopLoadT<TileB>(&coop_staged_h4_128x256_b[ib1_0], 66u);
        let ib2_0 = bo + 0u + (bq + 32u) / 4u;
        let b2_0 = coopLoadT<TileB>(&coop_staged_h4_128x256_b[ib2_0], 66u);
        let ib3_0 = bo + 0u + (bq + 48u) / 4u;
        let b3_0 = coopLoadT<TileB>(&coop_staged_h4_128x256_b[ib3_0], 66u);
        c0_0 = coopMultiplyAdd(a0_0, b0_0, c0_0);
        c0_1 = coopMultiplyAdd(a0_0, b1_0, c0_1);
        c0_2 = coopMultiplyAdd(a0_0, b2_0, c0_2);
        c0_3 = coopMultiplyAdd(a0_0, b3_0, c0_3);
        c1_0 = coopMultiplyAdd(a1_0, b0_0, c1_0);
        c1_1 = coopMultiplyAdd(a1_0, b1_0, c1_1);
        c1_2 = coopMultiplyAdd(a1_0, b2_0, c1_2);
        c1_3 = coopMultiplyAdd(a1_0, b3_0, c1_3);
        c2_0 = coopMultiplyAdd(a2_0, b0_0, c2_0);
        c2_1 = coopMultiplyAdd(a2_0, b1_0, c2_1);
        c2_2 = coopMultiplyAdd(a2_0, b2_0, c2_2);
        c2_3 = coopMultiplyAdd(a2_0, b3_0, c2_3);
        c3_0 = coopMultiplyAdd(a3_0, b0_0, c3_0);
        c3_1 = coopMultiplyAdd(a3_0, b1_0, c3_1);
        c3_2 = coopMultiplyAdd(a3_0, b2_0, c3_2);
        c3_3 = coopMultiplyAdd(a3_0, b3_0, c3_3);
        if more {
            let nao = (1u - cur) * 768u;
            let nbo = (1u - cur) * 1056u;
            coop_staged_h4_128x256_a[nao + sa0] = va0;
            coop_staged_h4_128x256_a[nao + sa1] = va1;
            coop_staged_h4_128x256_b[nbo + sb0] = vb0;
            coop_staged_h4_128x256_b[nbo + sb1] = vb1;
            coop_staged_h4_128x256_b[nbo + sb2] = vb2;
            coop_staged_h4_128x256_b[nbo + sb3] = vb3;
        }
        workgroupBarrier();
    }
    let o0_0 = (r + 0u) * n + q + 0u;
    coopStoreT(c0_0, &c[o0_0], n);
    let o0_1 = (r + 0u) * n + q + 16u;
    coopStoreT(c0_1, &c[o0_1], n);
    let o0_2 = (r + 0u) * n + q + 32u;
    coopStoreT(c0_2, &c[o0_2], n);
    let o0_3 = (r + 0u) * n + q + 48u;
    coopStoreT(c0_3, &c[o0_3], n);
    let o1_0 = (r + 16u) * n + q + 0u;
    coopStoreT(c1_0, &c[o1_0], n);
    let o1_1 = (r + 16u) * n + q + 16u;
    coopStoreT(c1_1, &c[o1_1], n);
    let o1_2 = (r + 16u) * n + q + 32u;
    coopStoreT(c1_2, &c[o1_2], n);
    let o1_3 = (r + 16u) * n + q + 48u;
    coopStoreT(c1_3, &c[o1_3], n);
    let o2_0 = (r + 32u) * n + q + 0u;
    coopStoreT(c2_0, &c[o2_0], n);
    let o2_1 = (r + 32u) * n + q + 16u;
    coopStoreT(c2_1, &c[o2_1], n);
    let o2_2 = (r + 32u) * n + q + 32u;
    coopStoreT(c2_2, &c[o2_2], n);
    let o2_3 = (r + 32u) * n + q + 48u;
    coopStoreT(c2_3, &c[o2_3], n);
    let o3_0 = (r + 48u) * n + q + 0u;
    coopStoreT(c3_0, &c[o3_0], n);
    let o3_1 = (r + 48u) * n + q + 16u;
    coopStoreT(c3_1, &c[o3_1], n);
    let o3_2 = (r + 48u) * n + q + 32u;
    coopStoreT(c3_2, &c[o3_2], n);
    let o3_3 = (r + 48u) * n + q + 48u;
    coopStoreT(c3_3, &c[o3_3], n);
}

// coop_staged_h4_256x128 with rows padded by 4 halves.
// Tile 256 x 128, 4 x 2 subgroups of 64 x 64 (4 x 4 fragments), 16-wide K slices,
// rows padded by 4 halves, double-buffered: 28928 bytes of workgroup memory.
var<workgroup> coop_staged_h4_256x128_p4_a: array<vec4<f16>, 2560>; // 2 x 256 rows, stride 5
var<workgroup> coop_staged_h4_256x128_p4_b: array<vec4<f16>, 1056>; // 2 x 16 rows, stride 33

// Grid: (N / 128, M / 256); K a multiple of 16; subgroups 32 wide.
@compute @workgroup_size(256)
fn coop_staged_h4_256x128_p4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 256u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u;
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k4 = p.k / 4u;
    let n4 = n / 4u;
    let r = r0 + br;
    let q = q0 + bq;
    var c0_0 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 0u], n);
    var c0_1 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 16u], n);
    var c0_2 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 32u], n);
    var c0_3 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 48u], n);
    var c1_0 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 0u], n);
    var c1_1 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c1_2 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c1_3 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c2_0 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 0u], n);
    var c2_1 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c2_2 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c2_3 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c3_0 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 0u], n);
    var c3_1 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c3_2 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c3_3 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 4u) * k4 + ea0 % 4u;
    let sa0 = (ea0 / 4u) * 5u + ea0 % 4u;
    let ea1 = lid + 256u;
    let ga1 = (r0 + ea1 / 4u) * k4 + ea1 % 4u;
    let sa1 = (ea1 / 4u) * 5u + ea1 % 4u;
    let ea2 = lid + 512u;
    let ga2 = (r0 + ea2 / 4u) * k4 + ea2 % 4u;
    let sa2 = (ea2 / 4u) * 5u + ea2 % 4u;
    let ea3 = lid + 768u;
    let ga3 = (r0 + ea3 / 4u) * k4 + ea3 % 4u;
    let sa3 = (ea3 / 4u) * 5u + ea3 % 4u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 32u) * n4 + q0 / 4u + eb0 % 32u;
    let sb0 = (eb0 / 32u) * 33u + eb0 % 32u;
    let eb1 = lid + 256u;
    let gb1 = (eb1 / 32u) * n4 + q0 / 4u + eb1 % 32u;
    let sb1 = (eb1 / 32u) * 33u + eb1 % 32u;
    var va0 = a4[ga0];
    var va1 = a4[ga1];
    var va2 = a4[ga2];
    var va3 = a4[ga3];
    var vb0 = b4[gb0];
    var vb1 = b4[gb1];
    coop_staged_h4_256x128_p4_a[sa0] = va0;
    coop_staged_h4_256x128_p4_a[sa1] = va1;
    coop_staged_h4_256x128_p4_a[sa2] = va2;
    coop_staged_h4_256x128_p4_a[sa3] = va3;
    coop_staged_h4_256x128_p4_b[sb0] = vb0;
    coop_staged_h4_256x128_p4_b[sb1] = vb1;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 16u) {
        let cur = (k0 / 16u) % 2u;
        let more = k0 + 16u < p.k;
        if more {
            va0 = a4[ga0 + (k0 + 16u) / 4u];
            va1 = a4[ga1 + (k0 + 16u) / 4u];
            va2 = a4[ga2 + (k0 + 16u) / 4u];
            va3 = a4[ga3 + (k0 + 16u) / 4u];
            vb0 = b4[gb0 + (k0 + 16u) * n4];
            vb1 = b4[gb1 + (k0 + 16u) * n4];
        }
        let ao = cur * 1280u;
        let bo = cur * 528u;
        let ia0_0 = ao + (br + 0u) * 5u + 0u;
        let a0_0 = coopLoadT<TileA>(&coop_staged_h4_256x128_p4_a[ia0_0], 5u);
        let ia1_0 = ao + (br + 16u) * 5u + 0u;
        let a1_0 = coopLoadT<TileA>(&coop_staged_h4_256x128_p4_a[ia1_0], 5u);
        let ia2_0 = ao + (br + 32u) * 5u + 0u;
        let a2_0 = coopLoadT<TileA>(&coop_staged_h4_256x128_p4_a[ia2_0], 5u);
        let ia3_0 = ao + (br + 48u) * 5u + 0u;
        let a3_0 = coopLoadT<TileA>(&coop_staged_h4_256x128_p4_a[ia3_0], 5u);
        let ib0_0 = bo + 0u + (bq + 0u) / 4u;
        let b0_0 = coopLoadT<TileB>(&coop_staged_h4_256x128_p4_b[ib0_0], 33u);
        let ib1_0 = bo + 0u + (bq + 16u) / 4u;
        let b1_0 = coopLoadT<TileB>(&coop_staged_h4_256x128_p4_b[ib1_0], 33u);
        let ib2_0 = bo + 0u + (bq + 32u) / 4u;
        let b2_0 = coopLoadT<TileB>(&coop_staged_h4_256x128_p4_b[ib2_0], 33u);
        let ib3_0 = bo + 0u + (bq + 48u) / 4u;
        let b3_0 = coopLoadT<TileB>(&coop_staged_h4_256x128_p4_b[ib3_0], 33u);
        c0_0 = coopMultiplyAdd(a0_0, b0_0, c0_0);
        c0_1 = coopMultiplyAdd(a0_0, b1_0, c0_1);
        c0_2 = coopMultiplyAdd(a0_0, b2_0, c0_2);
        c0_3 = coopMultiplyAdd(a0_0, b3_0, c0_3);
        c1_0 = coopMultiplyAdd(a1_0, b0_0, c1_0);
        c1_1 = coopMultiplyAdd(a1_0, b1_0, c1_1);
        c1_2 = coopMultiplyAdd(a1_0, b2_0, c1_2);
        c1_3 = coopMultiplyAdd(a1_0, b3_0, c1_3);
        c2_0 = coopMultiplyAdd(a2_0, b0_0, c2_0);
        c2_1 = coopMultiplyAdd(a2_0, b1_0, c2_1);
        c2_2 = coopMultiplyAdd(a2_0, b2_0, c2_2);
        c2_3 = coopMultiplyAdd(a2_0, b3_0, c2_3);
        c3_0 = coopMultiplyAdd(a3_0, b0_0, c3_0);
        c3_1 = coopMultiplyAdd(a3_0, b1_0, c3_1);
        c3_2 = coopMultiplyAdd(a3_0, b2_0, c3_2);
        c3_3 = coopMultiplyAdd(a3_0, b3_0, c3_3);
        if more {
            let nao = (1u - cur) * 1280u;
            let nbo = (1u - cur) * 528u;
            coop_staged_h4_256x128_p4_a[nao + sa0] = va0;
            coop_staged_h4_256x128_p4_a[nao + sa1] = va1;
            coop_staged_h4_256x128_p4_a[nao + sa2] = va2;
            coop_staged_h4_256x128_p4_a[nao + sa3] = va3;
            coop_staged_h4_256x128_p4_b[nbo + sb0] = vb0;
            coop_staged_h4_256x128_p4_b[nbo + sb1] = vb1;
        }
        workgroupBarrier();
    }
    let o0_0 = (r + 0u) * n + q + 0u;
    coopStoreT(c0_0, &c[o0_0], n);
    let o0_1 = (r + 0u) * n + q + 16u;
    coopStoreT(c0_1, &c[o0_1], n);
    let o0_2 = (r + 0u) * n + q + 32u;
    coopStoreT(c0_2, &c[o0_2], n);
    let o0_3 = (r + 0u) * n + q + 48u;
    coopStoreT(c0_3, &c[o0_3], n);
    let o1_0 = (r + 16u) * n + q + 0u;
    coopStoreT(c1_0, &c[o1_0], n);
    let o1_1 = (r + 16u) * n + q + 16u;
    coopStoreT(c1_1, &c[o1_1], n);
    let o1_2 = (r + 16u) * n + q + 32u;
    coopStoreT(c1_2, &c[o1_2], n);
    let o1_3 = (r + 16u) * n + q + 48u;
    coopStoreT(c1_3, &c[o1_3], n);
    let o2_0 = (r + 32u) * n + q + 0u;
    coopStoreT(c2_0, &c[o2_0], n);
    let o2_1 = (r + 32u) * n + q + 16u;
    coopStoreT(c2_1, &c[o2_1], n);
    let o2_2 = (r + 32u) * n + q + 32u;
    coopStoreT(c2_2, &c[o2_2], n);
    let o2_3 = (r + 32u) * n + q + 48u;
    coopStoreT(c2_3, &c[o2_3], n);
    let o3_0 = (r + 48u) * n + q + 0u;
    coopStoreT(c3_0, &c[o3_0], n);
    let o3_1 = (r + 48u) * n + q + 16u;
    coopStoreT(c3_1, &c[o3_1], n);
    let o3_2 = (r + 48u) * n + q + 32u;
    coopStoreT(c3_2, &c[o3_2], n);
    let o3_3 = (r + 48u) * n + q + 48u;
    coopStoreT(c3_3, &c[o3_3], n);
}

// coop_staged_h4 with sixteen subgroups over a 256 x 256 tile.
// Tile 256 x 256, 4 x 4 subgroups of 64 x 64 (4 x 4 fragments), 16-wide K slices,
// rows padded by 8 halves, double-buffered: 41472 bytes of workgroup memory.
var<workgroup> coop_staged_h4_256x256_a: array<vec4<f16>, 3072>; // 2 x 256 rows, stride 6
var<workgroup> coop_staged_h4_256x256_b: array<vec4<f16>, 2112>; // 2 x 16 rows, stride 66

// Grid: (N / 256, M / 256); K a multiple of 16; subgroups 32 wide.
@compute @workgroup_size(512)
fn coop_staged_h4_256x256(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 256u;
    let q0 = wid.x * 256u;
    let br = (s / 4u) * 64u;
    let bq = (s % 4u) * 64u;
    let n = p.n;
    let k4 = p.k / 4u;
    let n4 = n / 4u;
    let r = r0 + br;
    let q = q0 + bq;
    var c0_0 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 0u], n);
    var c0_1 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 16u], n);
    var c0_2 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 32u], n);
    var c0_3 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 48u], n);
    var c1_0 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 0u], n);
    var c1_1 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c1_2 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c1_3 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    var c2_0 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 0u], n);
    var c2_1 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 16u], n);
    var c2_2 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 32u], n);
    var c2_3 = coopLoadT<TileC>(&c[(r + 32u) * n + q + 48u], n);
    var c3_0 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 0u], n);
    var c3_1 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 16u], n);
    var c3_2 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 32u], n);
    var c3_3 = coopLoadT<TileC>(&c[(r + 48u) * n + q + 48u], n);
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 4u) * k4 + ea0 % 4u;
    let sa0 = (ea0 / 4u) * 6u + ea0 % 4u;
    let ea1 = lid + 512u;
    let ga1 = (r0 + ea1 / 4u) * k4 + ea1 % 4u;
    let sa1 = (ea1 / 4u) * 6u + ea1 % 4u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 64u) * n4 + q0 / 4u + eb0 % 64u;
    let sb0 = (eb0 / 64u) * 66u + eb0 % 64u;
    let eb1 = lid + 512u;
    let gb1 = (eb1 / 64u) * n4 + q0 / 4u + eb1 % 64u;
    let sb1 = (eb1 / 64u) * 66u + eb1 % 64u;
    var va0 = a4[ga0];
    var va1 = a4[ga1];
    var vb0 = b4[gb0];
    var vb1 = b4[gb1];
    coop_staged_h4_256x256_a[sa0] = va0;
    coop_staged_h4_256x256_a[sa1] = va1;
    coop_staged_h4_256x256_b[sb0] = vb0;
    coop_staged_h4_256x256_b[sb1] = vb1;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 16u) {
        let cur = (k0 / 16u) % 2u;
        let more = k0 + 16u < p.k;
        if more {
            va0 = a4[ga0 + (k0 + 16u) / 4u];
            va1 = a4[ga1 + (k0 + 16u) / 4u];
            vb0 = b4[gb0 + (k0 + 16u) * n4];
            vb1 = b4[gb1 + (k0 + 16u) * n4];
        }
        let ao = cur * 1536u;
        let bo = cur * 1056u;
        let ia0_0 = ao + (br + 0u) * 6u + 0u;
        let a0_0 = coopLoadT<TileA>(&coop_staged_h4_256x256_a[ia0_0], 6u);
        let ia1_0 = ao + (br + 16u) * 6u + 0u;
        let a1_0 = coopLoadT<TileA>(&coop_staged_h4_256x256_a[ia1_0], 6u);
        let ia2_0 = ao + (br + 32u) * 6u + 0u;
        let a2_0 = coopLoadT<TileA>(&coop_staged_h4_256x256_a[ia2_0], 6u);
        let ia3_0 = ao + (br + 48u) * 6u + 0u;
        let a3_0 = coopLoadT<TileA>(&coop_staged_h4_256x256_a[ia3_0], 6u);
        let ib0_0 = bo + 0u + (bq + 0u) / 4u;
        let b0_0 = coopLoadT<TileB>(&coop_staged_h4_256x256_b[ib0_0], 66u);
        let ib1_0 = bo + 0u + (bq + 16u) / 4u;
        let b1_0 = coopLoadT<TileB>(&coop_staged_h4_256x256_b[ib1_0], 66u);
        let ib2_0 = bo + 0u + (bq + 32u) / 4u;
        let b2_0 = coopLoadT<TileB>(&coop_staged_h4_256x256_b[ib2_0], 66u);
        let ib3_0 = bo + 0u + (bq + 48u) / 4u;
        let b3_0 = coopLoadT<TileB>(&coop_staged_h4_256x256_b[ib3_0], 66u);
        c0_0 = coopMultiplyAdd(a0_0, b0_0, c0_0);
        c0_1 = coopMultiplyAdd(a0_0, b1_0, c0_1);
        c0_2 = coopMultiplyAdd(a0_0, b2_0, c0_2);
        c0_3 = coopMultiplyAdd(a0_0, b3_0, c0_3);
        c1_0 = coopMultiplyAdd(a1_0, b0_0, c1_0);
        c1_1 = coopMultiplyAdd(a1_0, b1_0, c1_1);
        c1_2 = coopMultiplyAdd(a1_0, b2_0, c1_2);
        c1_3 = coopMultiplyAdd(a1_0, b3_0, c1_3);
        c2_0 = coopMultiplyAdd(a2_0, b0_0, c2_0);
        c2_1 = coopMultiplyAdd(a2_0, b1_0, c2_1);
        c2_2 = coopMultiplyAdd(a2_0, b2_0, c2_2);
        c2_3 = coopMultiplyAdd(a2_0, b3_0, c2_3);
        c3_0 = coopMultiplyAdd(a3_0, b0_0, c3_0);
        c3_1 = coopMultiplyAdd(a3_0, b1_0, c3_1);
        c3_2 = coopMultiplyAdd(a3_0, b2_0, c3_2);
        c3_3 = coopMultiplyAdd(a3_0, b3_0, c3_3);
        if more {
            let nao = (1u - cur) * 1536u;
            let nbo = (1u - cur) * 1056u;
            coop_staged_h4_256x256_a[nao + sa0] = va0;
            coop_staged_h4_256x256_a[nao + sa1] = va1;
            coop_staged_h4_256x256_b[nbo + sb0] = vb0;
            coop_staged_h4_256x256_b[nbo + sb1] = vb1;
        }
        workgroupBarrier();
    }
    let o0_0 = (r + 0u) * n + q + 0u;
    coopStoreT(c0_0, &c[o0_0], n);
    let o0_1 = (r + 0u) * n + q + 16u;
    coopStoreT(c0_1, &c[o0_1], n);
    let o0_2 = (r + 0u) * n + q + 32u;
    coopStoreT(c0_2, &c[o0_2], n);
    let o0_3 = (r + 0u) * n + q + 48u;
    coopStoreT(c0_3, &c[o0_3], n);
    let o1_0 = (r + 16u) * n + q + 0u;
    coopStoreT(c1_0, &c[o1_0], n);
    let o1_1 = (r + 16u) * n + q + 16u;
    coopStoreT(c1_1, &c[o1_1], n);
    let o1_2 = (r + 16u) * n + q + 32u;
    coopStoreT(c1_2, &c[o1_2], n);
    let o1_3 = (r + 16u) * n + q + 48u;
    coopStoreT(c1_3, &c[o1_3], n);
    let o2_0 = (r + 32u) * n + q + 0u;
    coopStoreT(c2_0, &c[o2_0], n);
    let o2_1 = (r + 32u) * n + q + 16u;
    coopStoreT(c2_1, &c[o2_1], n);
    let o2_2 = (r + 32u) * n + q + 32u;
    coopStoreT(c2_2, &c[o2_2], n);
    let o2_3 = (r + 32u) * n + q + 48u;
    coopStoreT(c2_3, &c[o2_3], n);
    let o3_0 = (r + 48u) * n + q + 0u;
    coopStoreT(c3_0, &c[o3_0], n);
    let o3_1 = (r + 48u) * n + q + 16u;
    coopStoreT(c3_1, &c[o3_1], n);
    let o3_2 = (r + 48u) * n + q + 32u;
    coopStoreT(c3_2, &c[o3_2], n);
    let o3_3 = (r + 48u) * n + q + 48u;
    coopStoreT(c3_3, &c[o3_3], n);
}

// coop_staged_h4 with eight subgroups of 32 x 64 (2 x 4 fragments) over the 128 x 128 tile.
// Tile 128 x 128, 4 x 2 subgroups of 32 x 64 (2 x 4 fragments), 32-wide K slices,
// rows padded by 8 halves, double-buffered: 37888 bytes of workgroup memory.
var<workgroup> coop_staged_h4_f2x4_a: array<vec4<f16>, 2560>; // 2 x 128 rows, stride 10
var<workgroup> coop_staged_h4_f2x4_b: array<vec4<f16>, 2176>; // 2 x 32 rows, stride 34

// Grid: (N / 128, M / 128); K a multiple of 32; subgroups 32 wide.
@compute @workgroup_size(256)
fn coop_staged_h4_f2x4(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 32u;
    let bq = (s % 2u) * 64u;
    let n = p.n;
    let k4 = p.k / 4u;
    let n4 = n / 4u;
    let r = r0 + br;
    let q = q0 + bq;
    var c0_0 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 0u], n);
    var c0_1 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 16u], n);
    var c0_2 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 32u], n);
    var c0_3 = coopLoadT<TileC>(&c[(r + 0u) * n + q + 48u], n);
    var c1_0 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 0u], n);
    var c1_1 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 16u], n);
    var c1_2 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 32u], n);
    var c1_3 = coopLoadT<TileC>(&c[(r + 16u) * n + q + 48u], n);
    let ea0 = lid + 0u;
    let ga0 = (r0 + ea0 / 8u) * k4 + ea0 % 8u;
    let sa0 = (ea0 / 8u) * 10u + ea0 % 8u;
    let ea1 = lid + 256u;
    let ga1 = (r0 + ea1 / 8u) * k4 + ea1 % 8u;
    let sa1 = (ea1 / 8u) * 10u + ea1 % 8u;
    let ea2 = lid + 512u;
    let ga2 = (r0 + ea2 / 8u) * k4 + ea2 % 8u;
    let sa2 = (ea2 / 8u) * 10u + ea2 % 8u;
    let ea3 = lid + 768u;
    let ga3 = (r0 + ea3 / 8u) * k4 + ea3 % 8u;
    let sa3 = (ea3 / 8u) * 10u + ea3 % 8u;
    let eb0 = lid + 0u;
    let gb0 = (eb0 / 32u) * n4 + q0 / 4u + eb0 % 32u;
    let sb0 = (eb0 / 32u) * 34u + eb0 % 32u;
    let eb1 = lid + 256u;
    let gb1 = (eb1 / 32u) * n4 + q0 / 4u + eb1 % 32u;
    let sb1 = (eb1 / 32u) * 34u + eb1 % 32u;
    let eb2 = lid + 512u;
    let gb2 = (eb2 / 32u) * n4 + q0 / 4u + eb2 % 32u;
    let sb2 = (eb2 / 32u) * 34u + eb2 % 32u;
    let eb3 = lid + 768u;
    let gb3 = (eb3 / 32u) * n4 + q0 / 4u + eb3 % 32u;
    let sb3 = (eb3 / 32u) * 34u + eb3 % 32u;
    var va0 = a4[ga0];
    var va1 = a4[ga1];
    var va2 = a4[ga2];
    var va3 = a4[ga3];
    var vb0 = b4[gb0];
    var vb1 = b4[gb1];
    var vb2 = b4[gb2];
    var vb3 = b4[gb3];
    coop_staged_h4_f2x4_a[sa0] = va0;
    coop_staged_h4_f2x4_a[sa1] = va1;
    coop_staged_h4_f2x4_a[sa2] = va2;
    coop_staged_h4_f2x4_a[sa3] = va3;
    coop_staged_h4_f2x4_b[sb0] = vb0;
    coop_staged_h4_f2x4_b[sb1] = vb1;
    coop_staged_h4_f2x4_b[sb2] = vb2;
    coop_staged_h4_f2x4_b[sb3] = vb3;
    workgroupBarrier();
    for (var k0 = 0u; k0 < p.k; k0 += 32u) {
        let cur = (k0 / 32u) % 2u;
        let more = k0 + 32u < p.k;
        if more {
            va0 = a4[ga0 + (k0 + 32u) / 4u];
            va1 = a4[ga1 + (k0 + 32u) / 4u];
            va2 = a4[ga2 + (k0 + 32u) / 4u];
            va3 = a4[ga3 + (k0 + 32u) / 4u];
            vb0 = b4[gb0 + (k0 + 32u) * n4];
            vb1 = b4[gb1 + (k0 + 32u) * n4];
            vb2 = b4[gb2 + (k0 + 32u) * n4];
            vb3 = b4[gb3 + (k0 + 32u) * n4];
        }
        let ao = cur * 1280u;
        let bo = cur * 1088u;
        let ia0_0 = ao + (br + 0u) * 10u + 0u;
        let a0_0 = coopLoadT<TileA>(&coop_staged_h4_f2x4_a[ia0_0], 10u);
        let ia1_0 = ao + (br + 16u) * 10u + 0u;
        let a1_0 = coopLoadT<TileA>(&coop_staged_h4_f2x4_a[ia1_0], 10u);
        let ib0_0 = bo + 0u + (bq + 0u) / 4u;
        let b0_0 = coopLoadT<TileB>(&coop_staged_h4_f2x4_b[ib0_0], 34u);
        let ib1_0 = bo + 0u + (bq + 16u) / 4u;
        let b1_0 = coopLoadT<TileB>(&coop_staged_h4_f2x4_b[ib1_0], 34u);
        let ib2_0 = bo + 0u + (bq + 32u) / 4u;
        let b2_0 = coopLoadT<TileB>(&coop_staged_h4_f2x4_b[ib2_0], 34u);
        let ib3_0 = bo + 0u + (bq + 48u) / 4u;
        let b3_0 = coopLoadT<TileB>(&coop_staged_h4_f2x4_b[ib3_0], 34u);
        c0_0 = coopMultiplyAdd(a0_0, b0_0, c0_0);
        c0_1 = coopMultiplyAdd(a0_0, b1_0, c0_1);
        c0_2 = coopMultiplyAdd(a0_0, b2_0, c0_2);
        c0_3 = coopMultiplyAdd(a0_0, b3_0, c0_3);
        c1_0 = coopMultiplyAdd(a1_0, b0_0, c1_0);
        c1_1 = coopMultiplyAdd(a1_0, b1_0, c1_1);
        c1_2 = coopMultiplyAdd(a1_0, b2_0, c1_2);
        c1_3 = coopMultiplyAdd(a1_0, b3_0, c1_3);
        let ia0_16 = ao + (br + 0u) * 10u + 4u;
        let a0_16 = coopLoadT<TileA>(&coop_staged_h4_f2x4_a[ia0_16], 10u);
        let ia1_16 = ao + (br + 16u) * 10u + 4u;
        let a1_16 = coopLoadT<TileA>(&coop_staged_h4_f2x4_a[ia1_16], 10u);
        let ib0_16 = bo + 544u + (bq + 0u) / 4u;
        let b0_16 = coopLoadT<TileB>(&coop_staged_h4_f2x4_b[ib0_16], 34u);
        let ib1_16 = bo + 544u + (bq + 16u) / 4u;
        let b1_16 = coopLoadT<TileB>(&coop_staged_h4_f2x4_b[ib1_16], 34u);
        let ib2_16 = bo + 544u + (bq + 32u) / 4u;
        let b2_16 = coopLoadT<TileB>(&coop_staged_h4_f2x4_b[ib2_16], 34u);
        let ib3_16 = bo + 544u + (bq + 48u) / 4u;
        let b3_16 = coopLoadT<TileB>(&coop_staged_h4_f2x4_b[ib3_16], 34u);
        c0_0 = coopMultiplyAdd(a0_16, b0_16, c0_0);
        c0_1 = coopMultiplyAdd(a0_16, b1_16, c0_1);
        c0_2 = coopMultiplyAdd(a0_16, b2_16, c0_2);
        c0_3 = coopMultiplyAdd(a0_16, b3_16, c0_3);
        c1_0 = coopMultiplyAdd(a1_16, b0_16, c1_0);
        c1_1 = coopMultiplyAdd(a1_16, b1_16, c1_1);
        c1_2 = coopMultiplyAdd(a1_16, b2_16, c1_2);
        c1_3 = coopMultiplyAdd(a1_16, b3_16, c1_3);
        if more {
            let nao = (1u - cur) * 1280u;
            let nbo = (1u - cur) * 1088u;
            coop_staged_h4_f2x4_a[nao + sa0] = va0;
            coop_staged_h4_f2x4_a[nao + sa1] = va1;
            coop_staged_h4_f2x4_a[nao + sa2] = va2;
            coop_staged_h4_f2x4_a[nao + sa3] = va3;
            coop_staged_h4_f2x4_b[nbo + sb0] = vb0;
            coop_staged_h4_f2x4_b[nbo + sb1] = vb1;
            coop_staged_h4_f2x4_b[nbo + sb2] = vb2;
            coop_staged_h4_f2x4_b[nbo + sb3] = vb3;
        }
        workgroupBarrier();
    }
    let o0_0 = (r + 0u) * n + q + 0u;
    coopStoreT(c0_0, &c[o0_0], n);
    let o0_1 = (r + 0u) * n + q + 16u;
    coopStoreT(c0_1, &c[o0_1], n);
    let o0_2 = (r + 0u) * n + q + 32u;
    coopStoreT(c0_2, &c[o0_2], n);
    let o0_3 = (r + 0u) * n + q + 48u;
    coopStoreT(c0_3, &c[o0_3], n);
    let o1_0 = (r + 16u) * n + q + 0u;
    coopStoreT(c1_0, &c[o1_0], n);
    let o1_1 = (r + 16u) * n + q + 16u;
    coopStoreT(c1_1, &c[o1_1], n);
    let o1_2 = (r + 16u) * n + q + 32u;
    coopStoreT(c1_2, &c[o1_2], n);
    let o1_3 = (r + 16u) * n + q + 48u;
    coopStoreT(c1_3, &c[o1_3], n);
}
