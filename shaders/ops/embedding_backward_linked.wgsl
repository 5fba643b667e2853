// prelude: kernel/grid.wgsl
// The embedding's backward, a scatter-add without atomics, one invocation per table element:
//   out[r, c] = sum of grad[t, c] over the t with ids[t] = r,
// walking row r's tokens in increasing t through its list (first, next: built by
// embedding_links.wgsl from ids on the device, or by the host from host ids), from 0, so each
// sum runs in one fixed order (deterministic, the same bits whichever built the lists).

struct Params {
    n: u32,  // rows * C
    c: u32,
    t: u32,  // T
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> first: array<f32>;     // (rows,) t + 1 of the row's first token, 0: none
@group(0) @binding(2) var<storage, read> next: array<f32>;      // (T,) the next token of the same row, T: none
@group(0) @binding(3) var<storage, read> grad: array<f32>;      // (T, C)
@group(0) @binding(4) var<storage, read_write> out: array<f32>; // (rows, C)

// One invocation per element (kernel/grid.wgsl).
const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn embedding_backward_linked(grid: Grid) {
    let i = grid_index(grid, WG);
    if i >= p.n {
        return;
    }
    let r = i / p.c;
    let c = i % p.c;
    var acc = 0.0;
    var t = u32(first[r]);
    if t > 0u {
        t -= 1u;
        // At most T steps: each list is increasing, so a walk ends by T.
        for (var steps = 0u; steps < p.t && t < p.t; steps++) {
            acc += grad[t * p.c + c];
            t = u32(next[t]);
        }
    }
    out[i] = acc;
}
