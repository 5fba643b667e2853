// prelude: generate/state.wgsl
// One step's keys or values into a cache at the decode state's position:
//   cache[off + (h P + pos) D + d] = src[src_off + h D + d]     h < heads, d < D
// pos is clamped below P, so a bad state can never write out of bounds.
// Grid: ceil(heads D / 256) workgroups.

struct Params {
    heads: u32,
    d: u32,         // D
    positions: u32, // P
    offset: u32,    // off: where this layer's (heads, P, D) block starts in the cache buffer
    src_off: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> state: State;
@group(0) @binding(2) var<storage, read> src: array<f32>;          // (heads * D,) dense at src_off
@group(0) @binding(3) var<storage, read_write> cache: array<f32>;  // (..., heads, P, D)

@compute @workgroup_size(256)
fn write_at_state(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= p.heads * p.d {
        return;
    }
    let pos = min(state.pos, p.positions - 1u);
    cache[p.offset + (i / p.d * p.positions + pos) * p.d + i % p.d] = src[p.src_off + i];
}
