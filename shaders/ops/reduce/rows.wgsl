// The row reductions' interface (prepended to sum_rows, argmax and element_scan's
// sum_short_rows): one value per row of a dense (rows, cols) matrix.

struct Params {
    rows: u32,
    cols: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (rows, cols)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (rows,)
