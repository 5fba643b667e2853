// The grid of the one-invocation-per-element kernels (prepended): invocation index =
// (wid.x + wid.y * nwg.x) * wg + lid, the workgroups folded into x and y so no dimension
// passes 65535. The engine sizes the grid from the kernel's own workgroup size (its WG).

struct Grid {
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
}

// The index of this invocation in a grid of `wg`-invocation workgroups.
fn grid_index(grid: Grid, wg: u32) -> u32 {
    return (grid.wid.x + grid.wid.y * grid.nwg.x) * wg + grid.lid;
}
