// Shared by the decode attention kernels (prepended; each kernel declares its query, key and
// value bindings and reads them through `query4`, `key4` and `value4`): causal attention of
// the decode step's one query per head over every cached position 0..=state.pos, for any model:
//   out[h, :] = softmax_j(scale * q[h] . K[h / G, j]) @ V[h / G, :]
// with G query heads a key/value head (grouped-query attention; G = 1: one each).
// Grid (H, S): workgroup (h, s) takes the keys of chunk s, [s CHUNK, (s + 1) CHUNK), of head
// h, in three passes with the chunk's scores kept in workgroup memory: the scores (one key per
// invocation, keys read as vec4) and their max, the exponentials and their sum, then the
// weighted values (invocation (g, dd) sums vec4 dd of the values of keys g, g + G, ... with
// G = 256 / (D / 4) groups, four keys a trip into four accumulators so that their loads are in
// flight together). Why chunks: one workgroup a head walked the whole cache alone (12
// workgroups for GPT-2, each streaming 0.5 MB at 1024 positions); chunks put n = ceil(len /
// CHUNK) workgroups on a head, and a long cache moves at the bandwidth of many SMs.
// Chunks past len return at once. With one chunk in use the workgroup writes the head's row;
// with more, each writes its max, sum and unnormalised values into `parts` and counts itself
// in `count`, and the last to arrive combines the n chunks (flash-decoding's rescale):
//   out = sum_s e^(m_s - M) acc_s / sum_s e^(m_s - M) l_s,   M = max_s m_s,
// then puts the counter back to zero for the next dispatch. The parts and the counter are
// atomics: their stores and loads go to the device-coherent cache, so the last workgroup reads
// what the others wrote (the same practice as the look-back scans' published carries).
// Why passes and not an online softmax over blocks of keys: no barrier sits inside a loop,
// which llvmpipe runs many times slower. Workgroup arrays hold scalars, never vec4s: llvmpipe
// (Mesa 22.3) reads a vec4 array element at a dynamic index about 100x slower than four
// scalars. D divides 256 and is a multiple of 4 (the host checks).
// The head dim is an override constant, so every loop over it has a constant bound: llvmpipe
// (Mesa 22.3, LLVM 15) runs a loop with a runtime bound inside the per-key loop about 40x
// slower (the score pass: 3.4 -> 0.09 ms a dispatch at D = 16).

const MAX_P: u32 = 2048u;
const MAX_CHUNK: u32 = 128u;
// Keys a workgroup (the host's `attention_chunk`): 16, 32, 64 or 128.
override CHUNK: u32 = 128u;
override D: u32 = 64u;   // head dim

struct Params {
    positions: u32,  // cache length P
    k_off: u32,      // offset of this layer's keys (H / G, P, D) in the cache buffer
    v_off: u32,      // offset of this layer's values
    scale: f32,      // 1 / sqrt(D)
    group: u32,      // G, query heads per key/value head
    splits: u32,     // S = the grid's y: ceil(P / CHUNK)
    count_off: u32,  // this dispatch's H counters in `count`
    heads: u32,      // H = the grid's x
    qkv_off: u32,    // attention_decode_rope: offset of the projection's row in `qkv`
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> state: State;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;      // (H * D,) heads side by side
@group(0) @binding(3) var<storage, read_write> parts: array<atomic<u32>>; // (H, S, D + 2) f32 bits: max, sum, D values
@group(0) @binding(4) var<storage, read_write> count: array<atomic<u32>>; // (count_off + H,) arrivals, zero between dispatches

var<workgroup> scores: array<f32, MAX_CHUNK>; // the chunk's scores (CHUNK used), then their exponentials
var<workgroup> partial: array<f32, 1024>; // 256 vec4s, as scalars
var<workgroup> arrived: u32;

fn store_part(i: u32, v: f32) {
    atomicStore(&parts[i], bitcast<u32>(v));
}

fn load_part(i: u32) -> f32 {
    return bitcast<f32>(atomicLoad(&parts[i]));
}

// Positions attended: 0..len, len = min(state.pos, min(P, MAX_P) - 1) + 1.
fn attended() -> u32 {
    return min(state.pos, min(p.positions, MAX_P) - 1u) + 1u;
}

// Workgroup (h, s)'s part of the attention (call from uniform control flow: it holds barriers).
fn attend(wid: vec3<u32>, lid: u32) {
    let h = wid.x;
    let s = wid.y;
    let len = attended();
    let lo = s * CHUNK;
    if lo >= len {
        return;
    }
    let n = (len + CHUNK - 1u) / CHUNK; // chunks in use
    let keys = min(len - lo, CHUNK);
    let head = (h / p.group) * p.positions * D;
    var m = -3.0e38;
    if lid < keys {
        var acc4 = vec4<f32>(0.0);
        let row = (p.k_off + head + (lo + lid) * D) / 4u;
        for (var e = 0u; e < D / 4u; e++) {
            acc4 = fma(query4(h, e), key4(row + e), acc4);
        }
        let sc = (acc4.x + acc4.y + acc4.z + acc4.w) * p.scale;
        scores[lid] = sc;
        m = sc;
    }
    let top = tree_max(lid, m);
    var l = 0.0;
    if lid < keys {
        let e = exp(scores[lid] - top);
        scores[lid] = e;
        l = e;
    }
    // tree_sum's barriers also publish the exponentials to the whole workgroup.
    let total = tree_sum(lid, l);
    let d4 = D / 4u;
    let groups = 256u / d4;
    let g = lid / d4;
    let dd = lid % d4;
    let v_head = (p.v_off + head) / 4u + dd + lo * d4;
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    var j = g;
    for (; j + 3u * groups < keys; j += 4u * groups) {
        a0 = fma(vec4<f32>(scores[j]), value4(v_head + j * d4), a0);
        a1 = fma(vec4<f32>(scores[j + groups]), value4(v_head + (j + groups) * d4), a1);
        a2 = fma(vec4<f32>(scores[j + 2u * groups]), value4(v_head + (j + 2u * groups) * d4), a2);
        a3 = fma(vec4<f32>(scores[j + 3u * groups]), value4(v_head + (j + 3u * groups) * d4), a3);
    }
    for (; j < keys; j += groups) {
        a0 = fma(vec4<f32>(scores[j]), value4(v_head + j * d4), a0);
    }
    let a = (a0 + a1) + (a2 + a3);
    partial[4u * lid] = a.x;
    partial[4u * lid + 1u] = a.y;
    partial[4u * lid + 2u] = a.z;
    partial[4u * lid + 3u] = a.w;
    workgroupBarrier();
    var t = vec4<f32>(0.0);
    if lid < d4 {
        for (var i = 0u; i < groups; i++) {
            let at = 4u * (i * d4 + lid);
            t += vec4<f32>(partial[at], partial[at + 1u], partial[at + 2u], partial[at + 3u]);
        }
    }
    if n == 1u {
        if lid < d4 {
            let o = t / total;
            let at = h * D + 4u * lid;
            out[at] = o.x;
            out[at + 1u] = o.y;
            out[at + 2u] = o.z;
            out[at + 3u] = o.w;
        }
        return;
    }
    // This chunk's part: its max, its sum, its unnormalised values.
    let part = (h * p.splits + s) * (D + 2u);
    if lid == 0u {
        store_part(part, top);
        store_part(part + 1u, total);
    }
    if lid < d4 {
        for (var e = 0u; e < 4u; e++) {
            store_part(part + 2u + 4u * lid + e, t[e]);
        }
    }
    // Every part store of the workgroup before its arrival is counted.
    storageBarrier();
    if lid == 0u {
        arrived = atomicAdd(&count[p.count_off + h], 1u);
    }
    if workgroupUniformLoad(&arrived) + 1u != n {
        return;
    }
    if lid == 0u {
        atomicStore(&count[p.count_off + h], 0u);
    }
    if lid < D {
        var big = -3.0e38;
        for (var c = 0u; c < n; c++) {
            big = max(big, load_part((h * p.splits + c) * (D + 2u)));
        }
        var num = 0.0;
        var den = 0.0;
        for (var c = 0u; c < n; c++) {
            let at = (h * p.splits + c) * (D + 2u);
            let w = exp(load_part(at) - big);
            den += w * load_part(at + 1u);
            num += w * load_part(at + 2u + lid);
        }
        out[h * D + lid] = num / den;
    }
}
