// prelude: elementwise/grid.wgsl
// Strided copy into a strided view of an existing buffer (the KV-cache append):
//   dst[dst_offset + sum_d c_d * dst_strides[d]] = src[src_offset + sum_d c_d * src_strides[d]]
// for every coordinate c of `shape`. The host checked that dst's view never aliases itself.

struct Params {
    n: u32,
    rank: u32,
    src_offset: u32,
    dst_offset: u32,
    shape: array<vec4<u32>, 2>,       // axis d at [d / 4][d % 4]
    src_strides: array<vec4<u32>, 2>,
    dst_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;       // src view
@group(0) @binding(2) var<storage, read_write> dst: array<f32>; // the buffer holding the dst view

// One invocation per element (elementwise/grid.wgsl).
const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn copy_into(grid: Grid) {
    let i = grid_index(grid, WG);
    if i >= p.n {
        return;
    }
    var rem = i;
    var is = p.src_offset;
    var id = p.dst_offset;
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let q = u32(d) / 4u;
        let r = u32(d) % 4u;
        let size = p.shape[q][r];
        let c = rem % size;
        rem = rem / size;
        is += c * p.src_strides[q][r];
        id += c * p.dst_strides[q][r];
    }
    dst[id] = src[is];
}
