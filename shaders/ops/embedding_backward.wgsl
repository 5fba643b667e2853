// prelude: kernel/grid.wgsl
// The embedding's backward, a scatter-add without atomics, one invocation per table element:
//   out[r, c] = sum of grad[t, c] over the t with ids[t] = r.
// The host sorts the ids into rows (CSR): the tokens of row r are order[offsets[r]..offsets[r + 1]],
// in increasing t, so each sum runs in one fixed order (deterministic, no float atomics).
// offsets and order travel as exact f32 (the host checked T < 2^24).

struct Params {
    n: u32,  // rows * C
    c: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> offsets: array<f32>;    // (rows + 1,)
@group(0) @binding(2) var<storage, read> order: array<f32>;      // (T,)
@group(0) @binding(3) var<storage, read> grad: array<f32>;       // (T, C)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;  // (rows, C)

// One invocation per element (kernel/grid.wgsl).
const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn embedding_backward(grid: Grid) {
    let i = grid_index(grid, WG);
    if i >= p.n {
        return;
    }
    let r = i / p.c;
    let c = i % p.c;
    var acc = 0.0;
    for (var j = u32(offsets[r]); j < u32(offsets[r + 1u]); j++) {
        acc += grad[u32(order[j]) * p.c + c];
    }
    out[i] = acc;
}
