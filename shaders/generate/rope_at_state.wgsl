// prelude: generate/state.wgsl
// A Llama-style layer's step after its q, k, v projection, in one launch: the rotary
// embedding (Hugging Face's rotate-half layout, ops/rope.wgsl) of the queries and keys at the
// state's position, the queries into `out`, the keys and values into the cache there.
// qkv holds q (H D), then k (KVH D), then v (KVH D); with pos = min(state.pos, P - 1),
// R the rotate-half map over each head's D (H2 = D / 2: (R x)_j = -x_{j + H2} for j < H2,
// x_{j - H2} otherwise) and c, s row pos of the tables:
//   out[h D + j]              = q_h[j] c[j] + (R q_h)[j] s[j]
//   kv[k_off + (h P + pos) D + j] = k_h[j] c[j] + (R k_h)[j] s[j]
//   kv[v_off + (h P + pos) D + j] = v_h[j]
// Grid: ceil((H + 2 KVH) D / 256) workgroups, one invocation an element of qkv.

struct Params {
    heads: u32,     // H
    kv_heads: u32,  // KVH
    d: u32,         // D, even
    positions: u32, // P of the cache (the tables have at least P rows)
    qkv_off: u32,
    k_off: u32,     // where this layer's keys (KVH, P, D) start in `kv`
    v_off: u32,     // and its values
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> state: State;
@group(0) @binding(2) var<storage, read> qkv: array<f32>;          // ((H + 2 KVH) D,) at qkv_off
@group(0) @binding(3) var<storage, read> cos_t: array<f32>;        // (P', D), P' >= P
@group(0) @binding(4) var<storage, read> sin_t: array<f32>;        // (P', D)
@group(0) @binding(5) var<storage, read_write> kv: array<f32>;     // keys and values, (L, KVH, P, D) each
@group(0) @binding(6) var<storage, read_write> out: array<f32>;    // (H D,)

@compute @workgroup_size(256)
fn rope_at_state(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let hd = p.heads * p.d;
    let kvd = p.kv_heads * p.d;
    if i >= hd + 2u * kvd {
        return;
    }
    let pos = min(state.pos, p.positions - 1u);
    let j = i % p.d;
    let x = qkv[p.qkv_off + i];
    if i >= hd + kvd {
        let c = i - hd - kvd;
        kv[p.v_off + ((c / p.d) * p.positions + pos) * p.d + j] = x;
        return;
    }
    let h2 = p.d / 2u;
    let low = j < h2;
    let partner = select(i - h2, i + h2, low);
    let sign = select(1.0, -1.0, low);
    let r = x * cos_t[pos * p.d + j] + sign * qkv[p.qkv_off + partner] * sin_t[pos * p.d + j];
    if i < hd {
        out[i] = r;
    } else {
        let c = i - hd;
        kv[p.k_off + ((c / p.d) * p.positions + pos) * p.d + j] = r;
    }
}
