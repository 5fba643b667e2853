// prelude: generate/state.wgsl
// dtype: wte scalar
// dtype: wpe scalar
// Token + position embedding of the current token, read from the decode state:
//   x[c] = wte[token, c] + wpe[pos, c]          c < C
// The sampler only writes ids below V and the host keeps pos below P; both are clamped so a
// bad state can never read out of bounds. wte and wpe are F32, F16 or BF16 (dtype slots).
// Grid: ceil(C / 256) workgroups.

struct Params {
    c: u32,
    vocab: u32,
    positions: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> state: State;
@group(0) @binding(2) var<storage, read> wte: array<wte_word>; // (V, C)
@group(0) @binding(3) var<storage, read> wpe: array<wpe_word>; // (P, C)
@group(0) @binding(4) var<storage, read_write> x: array<f32>;  // (1, C)

@compute @workgroup_size(256)
fn embed_token(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    if c >= p.c {
        return;
    }
    let token = min(state.token, p.vocab - 1u);
    let pos = min(state.pos, p.positions - 1u);
    x[c] = wte_at(token * p.c + c) + wpe_at(pos * p.c + c);
}
