// prelude: kernel/grid.wgsl
// Rotary position embedding (Hugging Face's rotate-half layout), one invocation per element:
//   forward:  out[t, h, j] = x[t, h, j] cos[t, j] + (R x)[t, h, j] sin[t, j]
//   backward: out[t, h, j] = x[t, h, j] cos[t, j] + (R^T (x sin))[t, h, j]   (the adjoint)
// with R the rotate-half map over the last axis of D (H2 = D / 2):
//   (R x)_j = -x_{j + H2} for j < H2, x_{j - H2} otherwise; R^T = -R.
// x and out (T, heads, D) dense, cos and sin (T, D) dense, each operand from its offset (out
// from 0). Grid: ceil(n / WG) workgroups.

struct Params {
    n: u32,     // T heads D
    heads: u32,
    d: u32,     // D, even
    adjoint: u32,
    x_off: u32,   // where each dense operand starts in its buffer
    cos_off: u32,
    sin_off: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;       // (T, heads, D)
@group(0) @binding(2) var<storage, read> cos_t: array<f32>;   // (T, D)
@group(0) @binding(3) var<storage, read> sin_t: array<f32>;   // (T, D)
@group(0) @binding(4) var<storage, read_write> out: array<f32>; // (T, heads, D)

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn rope(grid: Grid) {
    let i = grid_index(grid, WG);
    if i >= p.n {
        return;
    }
    let h2 = p.d / 2u;
    let j = i % p.d;
    let t = i / (p.heads * p.d);
    let low = j < h2;
    let partner = select(i - h2, i + h2, low);
    let jp = select(j - h2, j + h2, low);
    // (R x)_j = sign x_partner; (R^T y)_j = -sign y_partner.
    let sign = select(1.0, -1.0, low);
    var rotated: f32;
    if p.adjoint == 0u {
        rotated = sign * x[p.x_off + partner] * sin_t[p.sin_off + t * p.d + j];
    } else {
        rotated = -sign * x[p.x_off + partner] * sin_t[p.sin_off + t * p.d + jp];
    }
    out[i] = x[p.x_off + i] * cos_t[p.cos_off + t * p.d + j] + rotated;
}
