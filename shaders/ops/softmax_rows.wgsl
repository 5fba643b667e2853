// The softmax kernels' interface (prepended to ops/softmax.wgsl and ops/softmax_subgroup.wgsl):
// a dense (rows, cols) matrix in, its row softmax out, with the optional causal mask:
// visible = cols, or with the mask min(cols, past + (r % per_matrix) + 1), so row i of each
// (per_matrix, cols) matrix sees columns 0..=past + i. The max starts from a finite sentinel
// (WGSL may assume no infinities).

struct Params {
    rows: u32,
    cols: u32,
    per_matrix: u32, // rows per matrix (the last-but-one axis)
    causal: u32,     // 1: apply the mask
    past: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (rows, cols)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (rows, cols)

const MAX_SENTINEL: f32 = -3.0e38;

// The columns row `row` sees.
fn visible_of(row: u32) -> u32 {
    if p.causal != 0u {
        return min(p.cols, p.past + row % p.per_matrix + 1u);
    }
    return p.cols;
}
