// prelude: kernel/grid.wgsl
// Window along one axis, the shift / slice / pad of element-scan gradients:
//   out[o, t, k] = x[o, t + offset, k]   when 0 <= t + offset < t_in,
//                  fill[o, k]            otherwise, when HAS_FILL (the initial state of a shift),
//                  0                     otherwise.
// x (outer, t_in, inner) dense, fill (outer, inner) dense, out (outer, t_out, inner) dense.

override HAS_FILL: bool = false;

struct Params {
    n: u32,      // elements of out
    t_out: u32,
    t_in: u32,
    inner: u32,
    offset: i32, // source trip = t + offset
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (outer, t_in, inner)
@group(0) @binding(2) var<storage, read> fill: array<f32>;      // (outer, inner), read only when HAS_FILL
@group(0) @binding(3) var<storage, read_write> out: array<f32>; // (outer, t_out, inner)

@compute @workgroup_size(256)
fn window(grid: Grid) {
    let i = grid_index(grid, 256u);
    if i >= p.n {
        return;
    }
    let k = i % p.inner;
    let t = (i / p.inner) % p.t_out;
    let o = i / (p.inner * p.t_out);
    let src = i32(t) + p.offset;
    var v = 0.0;
    if src >= 0 && src < i32(p.t_in) {
        v = x[(o * p.t_in + u32(src)) * p.inner + k];
    } else if HAS_FILL {
        v = fill[o * p.inner + k];
    }
    out[i] = v;
}
