// prelude: kernel/grid.wgsl
// dtype: wte scalar
// dtype: wpe scalar
// Token + position embedding gather, one invocation per output element:
//   out[t, c] = wte[ids[t], c] + wpe[pos_offset + t % period, c]
// (period = T for one sequence; a batch of sequences of `period` tokens laid row after row
// restarts its positions in each). The host checked every id < V and pos_offset + min(T,
// period) <= P; ids travel as exact f32 (< 2^24).
// wte and wpe are F32, F16 or BF16 (dtype slots, widened to f32); out is F32.

struct Params {
    n: u32,          // T * C
    c: u32,
    pos_offset: u32,
    period: u32,     // positions restart every `period` rows
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<f32>;       // (T,)
@group(0) @binding(2) var<storage, read> wte: array<wte_word>;  // (V, C)
@group(0) @binding(3) var<storage, read> wpe: array<wpe_word>;  // (P, C)
@group(0) @binding(4) var<storage, read_write> out: array<f32>; // (T, C)

// One invocation per element (kernel/grid.wgsl).
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
    out[i] = wte_at(id * p.c + c) + wpe_at((p.pos_offset + t % p.period) * p.c + c);
}
