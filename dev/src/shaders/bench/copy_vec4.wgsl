// The benchmark's reference copy (dev/src/bin/bench.rs), written apart from the engine's
// kernels and never used by them: a plain grid-stride copy of vec4s. A fixed grid of
// invocations walks the buffer, each moving one vec4 per trip, stride = the whole grid.
// Its bytes read + written per second are the `copy_vec4_gbps` the engine's copy is held to.

struct Params {
    n4: u32,     // vec4s to copy
    stride: u32, // invocations in the grid
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;       // (n4,)
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>; // (n4,)

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn copy_vec4(@builtin(global_invocation_id) gid: vec3<u32>) {
    for (var i = gid.x; i < p.n4; i += p.stride) {
        dst[i] = src[i];
    }
}
