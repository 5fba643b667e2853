// prelude: ops/matmul/slice_sum.wgsl
// The QKV projection's epilogue for a step of T tokens at positions past..past+T: the
// projection arrives as its S partial products over K-slices (S = 1 when it was not split);
// each element is summed in slice order plus its bias (what the product's own epilogue
// gives), and goes where attention reads it:
//   queries (columns 0..C)  -> q (T, C), heads side by side
//   keys    (columns C..2C) -> cache[0, layer, h, past + t, d]
//   values  (columns 2C..3C) -> cache[1, layer, h, past + t, d]
// so no copy into the cache follows. One invocation per element of (T, 3C).
// Grid: ceil(T 3C / WG) workgroups (x + y * nwg.x).

struct Params {
    t: u32,
    c: u32,          // C = H * D
    slices: u32,
    d: u32,          // head dim D
    positions: u32,  // cache length P
    past: u32,
    k_off: u32,      // offset of this layer's keys (H, P, D) in the cache buffer
    v_off: u32,      // offset of this layer's values
    bias_off: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> parts: array<f32>;        // (S, T, 3C) dense
@group(0) @binding(2) var<storage, read> bias: array<f32>;         // (3C,) at bias_off
@group(0) @binding(3) var<storage, read_write> q: array<f32>;      // (T, C) dense
@group(0) @binding(4) var<storage, read_write> cache: array<f32>;  // (2, L, H, P, D)

// One invocation per element; the engine sizes the grid from this workgroup size.
const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn qkv_cache(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let width = 3u * p.c;
    let plane = p.t * width;
    let i = (wid.x + wid.y * nwg.x) * WG + lid;
    if i >= plane {
        return;
    }
    let acc = slice_sum(i, plane, p.slices);
    let col = i % width;
    let row = i / width;
    let v = acc + bias[p.bias_off + col];
    if col < p.c {
        q[row * p.c + col] = v;
        return;
    }
    let which = (col - p.c) / p.c; // 0 keys, 1 values
    let hc = (col - p.c) % p.c;
    let at = (hc / p.d * p.positions + p.past + row) * p.d + hc % p.d;
    cache[select(p.k_off, p.v_off, which == 1u) + at] = v;
}
