// prelude: ops/reduce/tree.wgsl
// prelude: generate/state.wgsl
// prelude: generate/attend.wgsl
// The decode attention (generate/attend.wgsl) over a cache that already holds the current
// token's key and value (GPT-2's projection writes them), the queries ready in `q`.
// The query is read straight from memory (no staging barrier): its loads go out with the key's.

@group(0) @binding(5) var<storage, read> q: array<f32>;             // (H * D,) this step's queries
@group(0) @binding(6) var<storage, read> k_cache: array<vec4<f32>>; // keys (H / G, P, D) at k_off, read as vec4
@group(0) @binding(7) var<storage, read> v_cache: array<vec4<f32>>; // values (H / G, P, D) at v_off (may share k's buffer)

fn query4(h: u32, e: u32) -> vec4<f32> {
    let b = h * D + 4u * e;
    return vec4<f32>(q[b], q[b + 1u], q[b + 2u], q[b + 3u]);
}

fn key4(u: u32) -> vec4<f32> {
    return k_cache[u];
}

fn value4(u: u32) -> vec4<f32> {
    return v_cache[u];
}

@compute @workgroup_size(256)
fn attention_decode(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    attend(wid, lid);
}
