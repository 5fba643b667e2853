// prelude: tensor/copy_view.wgsl
// copy_into four elements at a time: the copy between views whose rows are dense from a
// 16-byte boundary (last stride 1, offsets and every other stride multiples of 4) and whose
// last axis is a multiple of 4 or the only one. Each invocation moves PER vec4s, WG apart so
// a workgroup's accesses stay coalesced, loading all of them before the first store; the
// n % 4 elements past the last full vec4 (one-axis copies only) go one at a time into their
// own components, so nothing outside the dst view is written. Every buffer's size is a
// multiple of 16 bytes (the pool's sizes are), so a view's last, partial vec4 is addressable.

@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;       // src view
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>; // the buffer holding the dst view

const WG: u32 = 256u;
// vec4s per invocation: that many independent 16-byte loads in flight.
const PER: u32 = 4u;

@compute @workgroup_size(WG)
fn copy_into_vec4(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // This invocation's vec4s: first, first + WG, ..., first + (PER - 1) * WG.
    let first = (wid.x + wid.y * nwg.x) * (WG * PER) + lid;
    let n4 = p.n / 4u;
    if first + (PER - 1u) * WG < n4 {
        let a0 = view_index(4u * first);
        let a1 = view_index(4u * (first + WG));
        let a2 = view_index(4u * (first + 2u * WG));
        let a3 = view_index(4u * (first + 3u * WG));
        let x0 = src[a0.x / 4u];
        let x1 = src[a1.x / 4u];
        let x2 = src[a2.x / 4u];
        let x3 = src[a3.x / 4u];
        dst[a0.y / 4u] = x0;
        dst[a1.y / 4u] = x1;
        dst[a2.y / 4u] = x2;
        dst[a3.y / 4u] = x3;
        return;
    }
    for (var u = 0u; u < PER; u++) {
        let g = first + u * WG;
        if g < n4 {
            let a = view_index(4u * g);
            dst[a.y / 4u] = src[a.x / 4u];
        } else if g == n4 {
            for (var j = 0u; j < p.n % 4u; j++) {
                let a = view_index(4u * g + j);
                dst[a.y / 4u][a.y % 4u] = src[a.x / 4u][a.x % 4u];
            }
        }
    }
}
