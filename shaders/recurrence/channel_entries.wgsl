// The four entry points of a channel scan (prelude of the chunked-walk width kernels that
// build.rs generates from scan/linear.widths and scan/parallel_scan_log.widths: scan/linear.wgsl,
// linear_vec2.wgsl, linear_scalar.wgsl and parallel_scan_log.wgsl, _vec2.wgsl, _scalar.wgsl):
// each hands its invocation index (recurrence/launch.wgsl) to the skeleton's lanes /
// chunk_reduce / carries / chunk_fixup (recurrence/chunk_walk.wgsl). The walk
// (scan/linear_walk.wgsl or scan/log_walk.wgsl) and the width alias F come from the including
// kernel. Not a kernel on its own: tests/shaders.rs checks it inside those six.

@compute @workgroup_size(WG)
fn scan_lanes(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    lanes(invocation(wid, nwg, lid));
}

@compute @workgroup_size(WG)
fn scan_chunk_reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
    chunk_reduce(invocation(wid, nwg, lid));
}

@compute @workgroup_size(WG)
fn scan_carries(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    carries(invocation(wid, nwg, lid));
}

@compute @workgroup_size(WG)
fn scan_chunk_fixup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
    chunk_fixup(invocation(wid, nwg, lid));
}
