// prelude: kernel/grid.wgsl
// Column sums of a dense (rows, cols) matrix in row chunks (ops::reduce::sum_columns, the
// gradient of a bias or a norm's weight over a batch):
//   out[part, c] = sum_{r in part's chunk} x[r, c]   accumulated in f32, r increasing
// One invocation per (column, chunk): neighbouring invocations read neighbouring columns of
// one row, so every row is read in whole cache lines (where a transposed copy followed by
// row sums would read it a column at a time). Grid: the ceil(cols / 64) column blocks folded
// into x and y (kernel/grid.wgsl, so no dimension passes 65535), the parts along z.

struct Params {
    rows: u32,
    cols: u32,
    chunk: u32, // rows per part
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (rows, cols) dense
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (ceil(rows / chunk), cols)

@compute @workgroup_size(64)
fn sum_columns(grid: Grid) {
    let c = grid_index(grid, 64u);
    if c >= p.cols {
        return;
    }
    let part = grid.wid.z;
    let start = part * p.chunk;
    let end = min(start + p.chunk, p.rows);
    var acc = 0.0;
    for (var r = start; r < end; r++) {
        acc += x[r * p.cols + c];
    }
    out[part * p.cols + c] = acc;
}
