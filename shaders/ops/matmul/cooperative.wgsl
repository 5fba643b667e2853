// prelude: ops/matmul/cooperative_enable.wgsl
// prelude: ops/gelu.wgsl
// prelude: ops/matmul/common.wgsl
// MatmulPath::Cooperative: f16 a @ f16 b with f32 accumulation on the adapter's matrix units,
// through wgpu's experimental cooperative matrices (16 x 16 x 16, f16 x f16 -> f32; the engine
// asks for them only under ENGINE_EXPERIMENTAL=cooperative-matrix, context/adapter.rs).
// One subgroup of 32 a workgroup computes a 64 x 64 block of the output as 4 x 4 tiles of
// 16 x 16, its 16 accumulators named matrices (never an array). Per 16-wide K step it loads
// four A tiles and four B tiles straight from the storage buffers and issues 16
// multiply-adds. Straight loads read every element once per subgroup; the host takes
// cooperative_staged.wgsl (tiles staged in workgroup memory, read once per workgroup) for the
// large products it fits, and this kernel for the rest (M or N not a multiple of its tile,
// too few tiles to fill the GPU, subgroups not 32 wide).
// The epilogue (alpha, bias, GELU, residual) reads the stored block back, after a barrier,
// one element per invocation a trip; a plain product skips it.
// The host checks (engine/ops/matmul/select.rs): M and N multiples of 64, K of 16; each
// operand dense along one axis (K or M for a, N or K for b: TRANS_A / TRANS_B say which), its
// offset, other stride and batch strides multiples of 8 elements (16 bytes); out dense. Each store's offset is a `let`: naga 30's SPIR-V writer panics on a
// cooperative store whose pointer index is computed inline.
// Grid: (N / 64, M / 64, batch).

alias TileA = coop_mat16x16<f16, A>;
alias TileB = coop_mat16x16<f16, B>;
alias TileC = coop_mat16x16<f32, C>;

// F16 tensors are packed two halves a u32 word, the same bytes as an array of f16.
@group(0) @binding(1) var<storage, read> a: array<f16>;    // (..., M, K) view, K dense (M: TRANS_A)
@group(0) @binding(2) var<storage, read> b: array<f16>;    // (..., K, N) view, N dense (K: TRANS_B)
@group(0) @binding(6) var<storage, read> zero: array<f32>; // (256,) zeros: the accumulators' start

// 1: a's view is transposed (its M axis dense: a_rs = 1), so its 16 x 16 blocks are
// column-major; b's likewise with TRANS_B (its K axis dense: b_rs = 1).
override TRANS_A: u32 = 0u;
override TRANS_B: u32 = 0u;

// The A block whose first element is a[i]: row-major along K (rows a_rs apart), or
// column-major (TRANS_A: columns a_cs apart).
fn load_a(i: u32) -> TileA {
    if TRANS_A != 0u {
        return coopLoad<TileA>(&a[i], p.a_cs);
    }
    return coopLoadT<TileA>(&a[i], p.a_rs);
}

// The B block whose first element is b[i]: row-major along N (rows b_rs apart), or
// column-major (TRANS_B: columns b_cs apart).
fn load_b(i: u32) -> TileB {
    if TRANS_B != 0u {
        return coopLoad<TileB>(&b[i], p.b_cs);
    }
    return coopLoadT<TileB>(&b[i], p.b_rs);
}

@compute @workgroup_size(32)
fn cooperative(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let z = wid.z;
    let base = batch_offsets(z);
    let r = wid.y * 64u;
    let q = wid.x * 64u;
    let ar = p.a_rs;
    let ac = p.a_cs;
    let br = p.b_rs;
    let bc = p.b_cs;
    // Rows r, r + 16, r + 32, r + 48 of a; columns q .. q + 48 of b (one of each pair of
    // strides is 1: the operand's dense axis).
    let a0 = base.x + r * ar;
    let a1 = a0 + 16u * ar;
    let a2 = a0 + 32u * ar;
    let a3 = a0 + 48u * ar;
    let b0 = base.y + q * bc;
    let b1 = b0 + 16u * bc;
    let b2 = b0 + 32u * bc;
    let b3 = b0 + 48u * bc;
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
        let ka = k * ac;
        let kb = k * br;
        let x0 = load_a(a0 + ka);
        let x1 = load_a(a1 + ka);
        let x2 = load_a(a2 + ka);
        let x3 = load_a(a3 + ka);
        let y0 = load_b(b0 + kb);
        let y1 = load_b(b1 + kb);
        let y2 = load_b(b2 + kb);
        let y3 = load_b(b3 + kb);
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
    // Each store's offset is a named `let`: naga 30's SPIR-V writer fails ("Expression is
    // not cached") on an arithmetic index written inside coopStoreT's pointer argument.
    let o0 = (z * p.m + r) * n + q;
    let o1 = o0 + 16u * n;
    let o2 = o0 + 32u * n;
    let o3 = o0 + 48u * n;
    let o01 = o0 + 16u;
    let o02 = o0 + 32u;
    let o03 = o0 + 48u;
    let o11 = o1 + 16u;
    let o12 = o1 + 32u;
    let o13 = o1 + 48u;
    let o21 = o2 + 16u;
    let o22 = o2 + 32u;
    let o23 = o2 + 48u;
    let o31 = o3 + 16u;
    let o32 = o3 + 32u;
    let o33 = o3 + 48u;
    coopStoreT(c00, &out[o0], n);
    coopStoreT(c01, &out[o01], n);
    coopStoreT(c02, &out[o02], n);
    coopStoreT(c03, &out[o03], n);
    coopStoreT(c10, &out[o1], n);
    coopStoreT(c11, &out[o11], n);
    coopStoreT(c12, &out[o12], n);
    coopStoreT(c13, &out[o13], n);
    coopStoreT(c20, &out[o2], n);
    coopStoreT(c21, &out[o21], n);
    coopStoreT(c22, &out[o22], n);
    coopStoreT(c23, &out[o23], n);
    coopStoreT(c30, &out[o3], n);
    coopStoreT(c31, &out[o31], n);
    coopStoreT(c32, &out[o32], n);
    coopStoreT(c33, &out[o33], n);
    if EPILOGUE != 0u || p.alpha != 1.0 {
        // The subgroup's stores are visible to all 32 invocations after the barrier.
        storageBarrier();
        for (var e = lid; e < 4096u; e += 32u) {
            let row = r + e / 64u;
            let col = q + e % 64u;
            store(z, row, col, out[(z * p.m + row) * n + col]);
        }
    }
}
