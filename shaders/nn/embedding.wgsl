// prelude: elementwise/grid.wgsl
// Token + position embedding gather, one invocation per output element:
//   out[t, c] = wte[ids[t], c] + wpe[pos_offset + t, c].
// The host checked every id < V and pos_offset + T <= P; ids travel as exact f32 (< 2^24).

struct Params {
    n: u32,          // T * C
    c: u32,
    pos_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<f32>;       // (T,)
@group(0) @binding(2) var<storage, read> wte: array<f32>;       // (V, C)
@group(0) @binding(3) var<storage, read> wpe: array<f32>;       // (P, C)
@group(0) @binding(4) var<storage, read_write> out: array<f32>; // (T, C)

// One invocation per element (elementwise/grid.wgsl).
const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn embedding(grid: Grid) {
    let i = grid_index(grid, WG);
    if i >= p.n {
        return;
    }
    let t = i / p.c;
    let c = i % p.c;
    let id = u32(ids[t]);
    out[i] = wte[id * p.c + c] + wpe[(p.pos_offset + t) * p.c + c];
}
