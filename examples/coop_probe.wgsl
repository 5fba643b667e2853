// The cooperative-matrix probe of `examples/coop_probe.rs` (outside `shaders/`: it needs the
// native-only `wgpu_cooperative_matrix` extension and f16, which the engine's kernels do not).
//   c (M, N) f32 = a (M, K) f16 @ b (K, N) f16, all row-major, M, N multiples of 64, K of 16.
// One subgroup (32 invocations) a workgroup computes a 64 x 64 block of c as 4 x 4 tiles of
// 16 x 16, accumulating in f32: per 16-wide K step it loads four A tiles and four B tiles
// straight from the storage buffers (no workgroup staging) and issues 16 multiply-adds. The
// accumulators are 16 named matrices, loaded from c (cleared by the host) to start. Each
// store's offset is a `let` of its own: naga 30's SPIR-V writer panics ("expression is not
// cached") on a coopStore whose pointer index is computed inline.

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

// One subgroup a workgroup, next K step prefetched. Grid: (N / 64, M / 64).
@compute @workgroup_size(32)
fn coop_matmul_prefetch(@builtin(workgroup_id) wid: vec3<u32>) {
    block_prefetch(wid.y * 64u, wid.x * 64u);
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

// `block` with the next K step's tiles loaded before this step's multiply-adds, so their
// loads are in flight while the matrix units work (the last step reloads its own tiles).
fn block_prefetch(r: u32, q: u32) {
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
    var a0 = coopLoadT<TileA>(&a[r * p.k], p.k);
    var a1 = coopLoadT<TileA>(&a[(r + 16u) * p.k], p.k);
    var a2 = coopLoadT<TileA>(&a[(r + 32u) * p.k], p.k);
    var a3 = coopLoadT<TileA>(&a[(r + 48u) * p.k], p.k);
    var b0 = coopLoadT<TileB>(&b[q], n);
    var b1 = coopLoadT<TileB>(&b[q + 16u], n);
    var b2 = coopLoadT<TileB>(&b[q + 32u], n);
    var b3 = coopLoadT<TileB>(&b[q + 48u], n);
    for (var k = 0u; k < p.k; k += 16u) {
        let kn = min(k + 16u, p.k - 16u);
        let na0 = coopLoadT<TileA>(&a[r * p.k + kn], p.k);
        let na1 = coopLoadT<TileA>(&a[(r + 16u) * p.k + kn], p.k);
        let na2 = coopLoadT<TileA>(&a[(r + 32u) * p.k + kn], p.k);
        let na3 = coopLoadT<TileA>(&a[(r + 48u) * p.k + kn], p.k);
        let nb0 = coopLoadT<TileB>(&b[kn * n + q], n);
        let nb1 = coopLoadT<TileB>(&b[kn * n + q + 16u], n);
        let nb2 = coopLoadT<TileB>(&b[kn * n + q + 32u], n);
        let nb3 = coopLoadT<TileB>(&b[kn * n + q + 48u], n);
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
        a0 = na0;
        a1 = na1;
        a2 = na2;
        a3 = na3;
        b0 = nb0;
        b1 = nb1;
        b2 = nb2;
        b3 = nb3;
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

// The 128 x 128 tile of a workgroup of four subgroups (2 x 2 blocks of 64 x 64), its A and B
// slices staged in workgroup memory 32 K at a time (loaded as vec4<f16>, stored as scalars:
// a cooperative load takes a pointer to an element), the matrices loaded from there.
var<workgroup> ta: array<f16, 4096>; // 128 rows x 32 k
var<workgroup> tb: array<f16, 4096>; // 32 k x 128 columns

@group(0) @binding(1) var<storage, read> a4: array<vec4<f16>>; // the same (M, K) as a
@group(0) @binding(2) var<storage, read> b4: array<vec4<f16>>; // the same (K, N) as b

// Grid: (N / 128, M / 128); K a multiple of 32; subgroups 32 wide.
@compute @workgroup_size(128)
fn coop_matmul_staged(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let s = lid / 32u;
    let r0 = wid.y * 128u;
    let q0 = wid.x * 128u;
    let br = (s / 2u) * 64u; // this subgroup's block within the tile
    let bq = (s % 2u) * 64u;
    let n = p.n;
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
    for (var k0 = 0u; k0 < p.k; k0 += 32u) {
        // A: 128 rows x 8 vec4s; B: 32 rows x 32 vec4s; 1024 vec4s each, 8 per invocation.
        for (var t = 0u; t < 8u; t++) {
            let e = lid + 128u * t;
            let ar = e / 8u;
            let ak = (e % 8u) * 4u;
            let va = a4[((r0 + ar) * p.k + k0 + ak) / 4u];
            ta[ar * 32u + ak] = va.x;
            ta[ar * 32u + ak + 1u] = va.y;
            ta[ar * 32u + ak + 2u] = va.z;
            ta[ar * 32u + ak + 3u] = va.w;
            let bk = e / 32u;
            let bc = (e % 32u) * 4u;
            let vb = b4[((k0 + bk) * n + q0 + bc) / 4u];
            tb[bk * 128u + bc] = vb.x;
            tb[bk * 128u + bc + 1u] = vb.y;
            tb[bk * 128u + bc + 2u] = vb.z;
            tb[bk * 128u + bc + 3u] = vb.w;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < 32u; kk += 16u) {
            let ia0 = br * 32u + kk;
            let ia1 = (br + 16u) * 32u + kk;
            let ia2 = (br + 32u) * 32u + kk;
            let ia3 = (br + 48u) * 32u + kk;
            let ib = kk * 128u + bq;
            let a0 = coopLoadT<TileA>(&ta[ia0], 32u);
            let a1 = coopLoadT<TileA>(&ta[ia1], 32u);
            let a2 = coopLoadT<TileA>(&ta[ia2], 32u);
            let a3 = coopLoadT<TileA>(&ta[ia3], 32u);
            let b0 = coopLoadT<TileB>(&tb[ib], 128u);
            let b1 = coopLoadT<TileB>(&tb[ib + 16u], 128u);
            let b2 = coopLoadT<TileB>(&tb[ib + 32u], 128u);
            let b3 = coopLoadT<TileB>(&tb[ib + 48u], 128u);
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
