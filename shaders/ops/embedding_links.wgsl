// prelude: kernel/grid.wgsl
// The first half of the embedding's backward over ids on the device (with ids on the host,
// the host builds the same lists, engine/ops/embedding.rs): each row's tokens as a list in
// increasing t, one invocation per token t:
//   next[t]  = the smallest t' > t with ids[t'] = ids[t], else T;
//   first[r] = t + 1 for the smallest t with ids[t] = r (left 0, its fill, for rows no token has).
// embedding_backward_linked.wgsl then walks each row's list. Each invocation scans the ids,
// O(T^2) reads in all over the whole batch's T = B x seq ids (4M at 2048, 67M at 8192, from
// cache), and no two write one element, so no atomics. Ids travel as exact f32 (Tensor::write_ids checked them below 2^24); one at or
// past `rows` (unchecked device data) starts no list.

struct Params {
    t: u32,     // T
    rows: u32,  // the table's rows
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<f32>;          // (T,)
@group(0) @binding(2) var<storage, read_write> next: array<f32>;   // (T,) exact whole values
@group(0) @binding(3) var<storage, read_write> first: array<f32>;  // (rows,) zero-filled by the host

// One invocation per token (kernel/grid.wgsl).
const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn embedding_links(grid: Grid) {
    let t = grid_index(grid, WG);
    if t >= p.t {
        return;
    }
    let id = ids[t];
    var earlier = false;
    for (var j = 0u; j < t; j++) {
        if ids[j] == id {
            earlier = true;
            break;
        }
    }
    var after = p.t;
    for (var j = t + 1u; j < p.t; j++) {
        if ids[j] == id {
            after = j;
            break;
        }
    }
    next[t] = f32(after);
    let r = u32(id);
    if !earlier && r < p.rows {
        first[r] = f32(t + 1u);
    }
}
