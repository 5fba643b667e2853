// prelude: recurrence/launch.wgsl
// prelude: scan/backward_da.wgsl
// dtype: g vec2
// dtype: h vec2
// dtype: h0 vec2
// dtype: da vec4 store
// Every binding is a dtype slot (engine/kernel/dtype.rs): F32, F16 or BF16, f32 values; a
// step's dA is one vec4, two whole packed words in a half, rounded once when stored.
// matrix2 gradient of the transitions (the (K, V) = (2, 1) case of
// matrix_affine_scan_backward.wgsl), after the reverse scan has produced g = db:
// dA_t = g_t h_{t-1}^T with h_{-1} = h0 (zero when absent). One invocation per step: two
// vec2 loads and one vec4 store, every access dense.

// binding 0: the uniform p, declared in scan/backward_da.wgsl
@group(0) @binding(1) var<storage, read> g: array<g_t>;          // (B, T, N) x 2: g = db
@group(0) @binding(2) var<storage, read> h: array<h_t>;          // (B, T, N) x 2: the forward's h
@group(0) @binding(3) var<storage, read> h0: array<h0_t>;        // (B, N) x 2, read when has_h0
@group(0) @binding(4) var<storage, read_write> da: array<da_t>;  // (B, T, N) x (da00, da01, da10, da11)

// Invocation e of the B * T * N invocations, one a step (scan/backward_da.wgsl).
fn backward_da(e: u32) {
    let t = (e / p.n) % p.t_len;
    var prev = vec2<f32>(0.0);
    if t > 0u {
        prev = h_ld(e - p.n);
    } else if p.has_h0 == 1u {
        prev = h0_ld((e / (p.n * p.t_len)) * p.n + e % p.n);
    }
    let gv = g_ld(e);
    da_st(e, vec4<f32>(gv.x * prev, gv.y * prev));
}
