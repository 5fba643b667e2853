// prelude: ops/reduce/tree.wgsl
// prelude: generate/state.wgsl
// Causal attention of the decode step's one query per head over every cached position
// 0..=state.pos (the current token's key and value were written before it), for any model:
//   out[h, :] = softmax_j(scale * q[h] . K[h / G, j]) @ V[h / G, :]
// with G query heads a key/value head (grouped-query attention; G = 1: one each).
// One workgroup per head, in three passes over the keys with the scores kept in workgroup
// memory (at most MAX_P positions; the host checks): the scores (one key per invocation,
// keys read as vec4) and their max, the exponentials and their sum, then the weighted values
// (invocation (g, dd) sums vec4 dd of the values of keys g, g + G, ... with G = 256 / (D / 4)
// groups, four keys a trip into four accumulators so that their loads are in flight
// together: the walk was latency-bound). Why passes and not an online softmax over blocks of
// keys: no barrier sits inside a loop, which llvmpipe runs many times slower. Workgroup
// arrays hold scalars, never vec4s: llvmpipe (Mesa 22.3) reads a vec4 array element at a
// dynamic index about 100x slower than four scalars (this kernel: 18 -> 7 ms a dispatch).
// D divides 256 and is a multiple of 4 (the host checks). Grid: H workgroups.
// The head dim is an override constant, so every loop over it has a constant bound: llvmpipe
// (Mesa 22.3, LLVM 15) runs a loop with a runtime bound inside the per-key loop about 40x
// slower (the score pass: 3.4 -> 0.09 ms a dispatch at D = 16).

const MAX_P: u32 = 2048u;
override D: u32 = 64u; // head dim

struct Params {
    positions: u32,  // cache length P
    k_off: u32,      // offset of this layer's keys (H / G, P, D) in the cache buffer
    v_off: u32,      // offset of this layer's values
    scale: f32,      // 1 / sqrt(D)
    group: u32,      // G, query heads per key/value head
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> state: State;
@group(0) @binding(2) var<storage, read> q: array<f32>;        // (H * D,) this step's queries
@group(0) @binding(3) var<storage, read> k_cache: array<vec4<f32>>; // keys (H / G, P, D) at k_off, read as vec4
@group(0) @binding(4) var<storage, read> v_cache: array<vec4<f32>>; // values (H / G, P, D) at v_off (may share k's buffer)
@group(0) @binding(5) var<storage, read_write> out: array<f32>;      // (H * D,) heads side by side

var<workgroup> qs: array<f32, 256>;
var<workgroup> scores: array<f32, MAX_P>; // scores, then their exponentials
var<workgroup> partial: array<f32, 1024>; // 256 vec4s, as scalars

@compute @workgroup_size(256)
fn attention_decode(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let h = wid.x;
    let len = min(state.pos, min(p.positions, MAX_P) - 1u) + 1u;
    let head = (h / p.group) * p.positions * D;
    if lid < D {
        qs[lid] = q[h * D + lid];
    }
    workgroupBarrier();
    var m = -3.0e38;
    for (var j = lid; j < len; j += 256u) {
        var acc4 = vec4<f32>(0.0);
        let row = (p.k_off + head + j * D) / 4u;
        for (var e = 0u; e < D / 4u; e++) {
            let qv = vec4<f32>(qs[4u * e], qs[4u * e + 1u], qs[4u * e + 2u], qs[4u * e + 3u]);
            acc4 = fma(qv, k_cache[row + e], acc4);
        }
        let s = (acc4.x + acc4.y + acc4.z + acc4.w) * p.scale;
        scores[j] = s;
        m = max(m, s);
    }
    let top = tree_max(lid, m);
    var l = 0.0;
    for (var j = lid; j < len; j += 256u) {
        let e = exp(scores[j] - top);
        scores[j] = e;
        l += e;
    }
    // tree_sum's barriers also publish the exponentials to the whole workgroup.
    let total = tree_sum(lid, l);
    let d4 = D / 4u;
    let groups = 256u / d4;
    let g = lid / d4;
    let dd = lid % d4;
    let v_head = (p.v_off + head) / 4u + dd;
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    var j = g;
    for (; j + 3u * groups < len; j += 4u * groups) {
        a0 = fma(vec4<f32>(scores[j]), v_cache[v_head + j * d4], a0);
        a1 = fma(vec4<f32>(scores[j + groups]), v_cache[v_head + (j + groups) * d4], a1);
        a2 = fma(vec4<f32>(scores[j + 2u * groups]), v_cache[v_head + (j + 2u * groups) * d4], a2);
        a3 = fma(vec4<f32>(scores[j + 3u * groups]), v_cache[v_head + (j + 3u * groups) * d4], a3);
    }
    for (; j < len; j += groups) {
        a0 = fma(vec4<f32>(scores[j]), v_cache[v_head + j * d4], a0);
    }
    let a = (a0 + a1) + (a2 + a3);
    partial[4u * lid] = a.x;
    partial[4u * lid + 1u] = a.y;
    partial[4u * lid + 2u] = a.z;
    partial[4u * lid + 3u] = a.w;
    workgroupBarrier();
    if lid < d4 {
        var t = vec4<f32>(0.0);
        for (var i = 0u; i < groups; i++) {
            let at = 4u * (i * d4 + lid);
            t += vec4<f32>(partial[at], partial[at + 1u], partial[at + 2u], partial[at + 3u]);
        }
        let o = t / total;
        let at = h * D + 4u * lid;
        out[at] = o.x;
        out[at + 1u] = o.y;
        out[at + 2u] = o.z;
        out[at + 3u] = o.w;
    }
}
