
// prelude: ops/reduce/tree.wgsl
// Causal attention in one launch, one workgroup per (head h, query i), online softmax over
// blocks of 256 keys (the scores are never written to memory):
//   out[h, i, :] = sum_{j <= past + i} softmax_j(q[h, i, :] . k[h, j, :] * scale) v[h, j, :].
// Per block: each invocation scores one key, the block max and the running max m give the
// rescale factor exp(m_old - m_new) for the running sum l and the accumulator; then
// invocation (g, e), g < G = 256 / D groups, adds p_j v[h, j, e] for the keys g, g + G, ...
// of the block, four a trip into four accumulators so that their loads are in flight
// together (one invocation per feature walking every key was latency-bound), and the G
// partial sums are added at the end. q, k, v are strided views (offset + strides in the
// uniform); out is dense (Tq, H, D), heads side by side. The host checked D <= 256.
// D is an override constant: the loops over it get constant bounds, which llvmpipe runs many
// times faster, and a GPU's compiler can unroll to keep the key loads in flight together.

override D: u32 = 64u;

struct Params {
    heads: u32,
    tq: u32,
    past: u32,
    scale: f32,
    q_offset: u32,
    k_offset: u32,
    v_offset: u32,
    _pad: u32,
    q_strides: vec4<u32>, // (head, time, feature, unused)
    k_strides: vec4<u32>,
    v_strides: vec4<u32>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;         // (H, Tq, D) view
@group(0) @binding(2) var<storage, read> k: array<f32>;         // (H, Tk, D) view
@group(0) @binding(3) var<storage, read> v: array<f32>;         // (H, Tk, D) view
@group(0) @binding(4) var<storage, read_write> out: array<f32>; // (Tq, H, D) dense

var<workgroup> q_row: array<f32, 256>;
var<workgroup> probs: array<f32, 256>;
var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn attention_fused(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
    let task = wid.x + wid.y * nwg.x;
    if task >= p.heads * p.tq {
        return;
    }
    let h = task / p.tq;
    let i = task % p.tq;
    if lid < D {
        q_row[lid] = q[p.q_offset + h * p.q_strides.x + i * p.q_strides.y + lid * p.q_strides.z];
    }
    workgroupBarrier();
    let visible = p.past + i + 1u;
    let k_base = p.k_offset + h * p.k_strides.x;
    let v_base = p.v_offset + h * p.v_strides.x;
    var m = -3.0e38; // running max (a finite sentinel)
    var l = 0.0;     // running sum of exp(score - m)
    var acc = 0.0;   // invocation (g, e): its share of sum exp(score - m) v[., e]
    let groups = max(1u, 256u / D);
    let g = lid / D;
    let e = lid % D;
    let v_col = v_base + e * p.v_strides.z;
    for (var j0 = 0u; j0 < visible; j0 += 256u) {
        let j = j0 + lid;
        var s = -3.0e38;
        if j < visible {
            var dot = 0.0;
            for (var f = 0u; f < D; f++) {
                dot = fma(q_row[f], k[k_base + j * p.k_strides.y + f * p.k_strides.z], dot);
            }
            s = dot * p.scale;
        }
        let m_new = max(m, tree_max(lid, s));
        var e_s = 0.0;
        if j < visible {
            e_s = exp(s - m_new);
        }
        probs[lid] = e_s;
        let rescale = exp(m - m_new);
        // tree_sum's barriers also publish probs to the whole workgroup.
        l = l * rescale + tree_sum(lid, e_s);
        m = m_new;
        if g < groups {
            let n = min(256u, visible - j0);
            let vs = p.v_strides.y;
            var a0 = 0.0;
            var a1 = 0.0;
            var a2 = 0.0;
            var a3 = 0.0;
            var t = g;
            for (; t + 3u * groups < n; t += 4u * groups) {
                a0 = fma(probs[t], v[v_col + (j0 + t) * vs], a0);
                a1 = fma(probs[t + groups], v[v_col + (j0 + t + groups) * vs], a1);
                a2 = fma(probs[t + 2u * groups], v[v_col + (j0 + t + 2u * groups) * vs], a2);
                a3 = fma(probs[t + 3u * groups], v[v_col + (j0 + t + 3u * groups) * vs], a3);
            }
            for (; t < n; t += groups) {
                a0 = fma(probs[t], v[v_col + (j0 + t) * vs], a0);
            }
            acc = acc * rescale + ((a0 + a1) + (a2 + a3));
        }
        // probs is rewritten by the next block.
        workgroupBarrier();
    }
    partial[lid] = select(0.0, acc, g < groups);
    workgroupBarrier();
    if lid < D {
        var total = 0.0;
        for (var r = 0u; r < groups; r++) {
            total += partial[r * D + lid];
        }
        out[(i * p.heads + h) * D + lid] = total / l;
    }
}
