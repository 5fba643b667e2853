// prelude: kernel/grid.wgsl
// prelude: tensor/copy_view.wgsl
// Strided copy into a strided view of an existing buffer (the KV-cache append), one element
// per invocation: any pair of views (copy_into_vec4.wgsl serves the ones that allow vec4).
// The host checked that dst's view never aliases itself.

@group(0) @binding(1) var<storage, read> src: array<f32>;       // src view
@group(0) @binding(2) var<storage, read_write> dst: array<f32>; // the buffer holding the dst view

// One invocation per element (kernel/grid.wgsl).
const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn copy_into(grid: Grid) {
    let i = grid_index(grid, WG);
    if i >= p.n {
        return;
    }
    let at = view_index(i);
    dst[at.y] = src[at.x];
}
