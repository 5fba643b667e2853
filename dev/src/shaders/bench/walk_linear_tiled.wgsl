// A bench peer (dev/src/bin/common/peer.rs), never used by the engine: the linear lane walk of
// walk_linear.wgsl (h_t = a_t h_{t-1} + x_t, one invocation per channel walk (b, n)), with
// its loads staged through workgroup memory: a workgroup of 256 channels loads each block of
// 8 steps as 1 KB rows of vec4s, all of its warps together (a barrier a block), and every
// invocation walks its channel from there. The question it answers: whether wide loads that
// a workgroup issues together (DRAM row locality) beat 128-byte pieces issued by warps that
// drift apart. The next block's loads are issued before this block's walk.
// N % 256 == 0 and T % 8 == 0 (the peer runs at the large shape only).

override WG: u32 = 256u; // must be 256: the tile below is 256 channels wide
override CARRY: bool = true;

struct Params {
    lanes: u32, // B * N
    n: u32,     // N
    t_len: u32, // T
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;  // (B, T, N / 4)
@group(0) @binding(2) var<storage, read> x: array<vec4<f32>>;  // (B, T, N / 4)
@group(0) @binding(3) var<storage, read_write> h: array<f32>;  // (B, T, N)

// Rows k of the block, vec4 column c: [k * 64 + c].
var<workgroup> ta: array<vec4<f32>, 512>;
var<workgroup> tx: array<vec4<f32>, 512>;

struct Loads {
    a0: vec4<f32>, a1: vec4<f32>, x0: vec4<f32>, x1: vec4<f32>,
}

// This invocation's share of the block at step t: rows r and r + 4, vec4 column q.
fn fetch(b: u32, d0: u32, t: u32, r: u32, q: u32) -> Loads {
    let n4 = p.n / 4u;
    let i0 = ((b * p.t_len + t + r) * p.n + d0) / 4u + q;
    let i1 = i0 + 4u * n4;
    return Loads(a[i0], a[i1], x[i0], x[i1]);
}

@compute @workgroup_size(WG)
fn walk_linear_tiled(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let per_batch = p.n / 256u;
    let b = wid.x / per_batch;
    let d0 = (wid.x % per_batch) * 256u;
    let r = lid / 64u;
    let q = lid % 64u;
    var next = fetch(b, d0, 0u, r, q);
    var s = 0.0;
    for (var t = 0u; t < p.t_len; t += 8u) {
        workgroupBarrier();
        ta[r * 64u + q] = next.a0;
        ta[(r + 4u) * 64u + q] = next.a1;
        tx[r * 64u + q] = next.x0;
        tx[(r + 4u) * 64u + q] = next.x1;
        workgroupBarrier();
        if t + 8u < p.t_len {
            next = fetch(b, d0, t + 8u, r, q);
        }
        let c = lid / 4u;
        let e = lid % 4u;
        var o = (b * p.t_len + t) * p.n + d0 + lid;
        for (var k = 0u; k < 8u; k++) {
            s = fma(ta[k * 64u + c][e], select(0.0, s, CARRY), tx[k * 64u + c][e]);
            h[o] = s;
            o += p.n;
        }
    }
}
