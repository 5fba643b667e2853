// prelude: reduce/tree.wgsl
// prelude: gpt2/state.wgsl
// Causal attention of the decode step's one query per head over every cached position
// 0..=state.pos (the current token's key and value were written by the QKV kernel):
//   out[h, :] = softmax_j(scale * q[h] . K[h, j]) @ V[h, :]
// One workgroup per head walks the keys in blocks of 256 with an online softmax (running max
// and sum; the accumulator is rescaled when the max grows), so any cache length fits. Scores:
// one key per invocation; values: invocation (g, dd) sums the keys g, g + 256/D, ... of the
// block for dim dd (neighbouring invocations read neighbouring values of one key).
// D divides 256 and is a multiple of 4 (the host checks); keys are read as vec4. Finite sentinels only: -3e38 stands for "no score yet".

struct Params {
    d: u32,          // head dim D
    positions: u32,  // cache length P
    cache_off: u32,  // this layer's offset in the caches
    scale: f32,      // 1 / sqrt(D)
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> state: State;
@group(0) @binding(2) var<storage, read> q: array<f32>;        // (H * D,) this step's queries
@group(0) @binding(3) var<storage, read> k_cache: array<vec4<f32>>; // (L, H, P, D / 4)
@group(0) @binding(4) var<storage, read> v_cache: array<f32>;  // (L, H, P, D)
@group(0) @binding(5) var<storage, read_write> out: array<f32>; // (H * D,) heads side by side

var<workgroup> qs: array<vec4<f32>, 64>;
var<workgroup> probs: array<f32, 256>;
var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn attention_decode(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let h = wid.x;
    let len = min(state.pos, p.positions - 1u) + 1u;
    let base = p.cache_off + h * p.positions * p.d;
    if lid < p.d / 4u {
        let i = h * p.d + 4u * lid;
        qs[lid] = vec4<f32>(q[i], q[i + 1u], q[i + 2u], q[i + 3u]);
    }
    workgroupBarrier();
    let groups = 256u / p.d;
    let g = lid / p.d;
    let dd = lid % p.d;
    var m = -3.0e38;
    var l = 0.0;
    var acc = 0.0;
    for (var blk = 0u; blk < len; blk += 256u) {
        let j = blk + lid;
        var s = -3.0e38;
        if j < len {
            var acc4 = vec4<f32>(0.0);
            let row = (base + j * p.d) / 4u;
            for (var e = 0u; e < p.d / 4u; e++) {
                acc4 = fma(qs[e], k_cache[row + e], acc4);
            }
            s = (acc4.x + acc4.y + acc4.z + acc4.w) * p.scale;
        }
        let m_new = max(m, tree_max(lid, s));
        let pj = select(0.0, exp(s - m_new), j < len);
        probs[lid] = pj;
        let corr = exp(m - m_new);
        l = l * corr + tree_sum(lid, pj);
        acc *= corr;
        let end = min(256u, len - blk);
        for (var i = g; i < end; i += groups) {
            acc = fma(probs[i], v_cache[base + (blk + i) * p.d + dd], acc);
        }
        m = m_new;
        // probs is rewritten by the next block.
        workgroupBarrier();
    }
    partial[lid] = acc;
    workgroupBarrier();
    if lid < p.d {
        var t = 0.0;
        for (var i = 0u; i < groups; i++) {
            t += partial[i * p.d + lid];
        }
        out[h * p.d + lid] = t / l;
    }
}
