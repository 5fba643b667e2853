// prelude: scan/launch.wgsl
// prelude: scan/log_walk.wgsl
// parallel_scan_log, four adjacent channels per invocation (D % 4 == 0, and B x D at least
// VEC4_WALKS: engine/scan/launch.rs's vector_width): the walks and bindings are
// scan/log_walk.wgsl's, over F values.

alias F = vec4<f32>;

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
