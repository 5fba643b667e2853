// prelude: ops/reduce/tree.wgsl
// prelude: generate/state.wgsl
// prelude: generate/attend.wgsl
// A Llama-style layer's decode attention straight after its fused q, k, v projection, in one
// launch: the rotary embedding (Hugging Face's rotate-half layout, ops/rope.wgsl) of the
// state's position on the queries and the current key, that key and value written into the
// cache there, then the attention of generate/attend.wgsl. `qkv` holds q (H D), then k
// (KVH D), then v (KVH D), KVH = H / G; with pos = len - 1, R the rotate-half map over a
// head's D (H2 = D / 2: (R x)_j = -x_{j + H2} for j < H2, x_{j - H2} otherwise) and c, s row
// pos of the tables:
//   query of head h              = q_h c + (R q_h) s       (in workgroup memory)
//   kv[k_off + (g P + pos) D + j] = (k_g c + (R k_g) s)_j
//   kv[v_off + (g P + pos) D + j] = v_g[j]
// Why here and not in a launch of its own: a Llama layer then costs what a GPT-2 layer does
// (one launch fewer a layer, 12 for a 124M shape). Every workgroup of the chunk that holds
// pos writes that key and value (the G heads of a group write the same numbers), so each
// reads its own writes after the storage barrier; no other workgroup reads position pos.

@group(0) @binding(5) var<storage, read> qkv: array<f32>;           // ((H + 2 KVH) D,) at qkv_off
@group(0) @binding(6) var<storage, read> cos_t: array<f32>;         // (P', D), P' >= P
@group(0) @binding(7) var<storage, read> sin_t: array<f32>;         // (P', D)
@group(0) @binding(8) var<storage, read_write> kv: array<vec4<f32>>; // keys and values (L, KVH, P, D) each, as vec4

var<workgroup> q_rot: array<f32, 256>; // this head's rotated query (D values)

// Element j of the rotated head that starts at qkv[base], at position pos.
fn rotated(base: u32, j: u32, pos: u32) -> f32 {
    let h2 = D / 2u;
    let low = j < h2;
    let partner = select(j - h2, j + h2, low);
    let sign = select(1.0, -1.0, low);
    return qkv[base + j] * cos_t[pos * D + j] + sign * qkv[base + partner] * sin_t[pos * D + j];
}

fn query4(h: u32, e: u32) -> vec4<f32> {
    return vec4<f32>(q_rot[4u * e], q_rot[4u * e + 1u], q_rot[4u * e + 2u], q_rot[4u * e + 3u]);
}

fn key4(u: u32) -> vec4<f32> {
    return kv[u];
}

fn value4(u: u32) -> vec4<f32> {
    return kv[u];
}

@compute @workgroup_size(256)
fn attention_decode_rope(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let len = attended();
    let lo = wid.y * CHUNK;
    if lo >= len {
        return;
    }
    let pos = len - 1u;
    let h = wid.x;
    let g = h / p.group; // its key/value head
    let kv_heads = p.heads / p.group;
    if lid < D {
        q_rot[lid] = rotated(p.qkv_off + h * D, lid, pos);
    }
    if pos < lo + CHUNK && lid < D / 4u {
        let k_base = p.qkv_off + (p.heads + g) * D;
        let v_base = p.qkv_off + (p.heads + kv_heads + g) * D + 4u * lid;
        let at = ((g * p.positions + pos) * D + 4u * lid) / 4u;
        let j = 4u * lid;
        kv[p.k_off / 4u + at] = vec4<f32>(
            rotated(k_base, j, pos),
            rotated(k_base, j + 1u, pos),
            rotated(k_base, j + 2u, pos),
            rotated(k_base, j + 3u, pos),
        );
        kv[p.v_off / 4u + at] = vec4<f32>(qkv[v_base], qkv[v_base + 1u], qkv[v_base + 2u], qkv[v_base + 3u]);
    }
    // The cache writes and the rotated query, seen by the whole workgroup.
    storageBarrier();
    workgroupBarrier();
    attend(wid, lid);
}
