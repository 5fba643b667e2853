// Column sums of a dense (rows, cols) matrix in row chunks (ops::reduce::sum_columns, the
// gradient of a bias or a norm's weight over a batch):
//   out[part, c] = sum_{r in part's chunk} x[r, c]   accumulated in f32, r increasing
// One invocation per (column, chunk): neighbouring invocations read neighbouring columns of
// one row, so every row is read in whole cache lines (where a transposed copy followed by
// row sums would read it a column at a time). Grid: (ceil(cols / 64), parts).

struct Params {
    rows: u32,
    cols: u32,
    chunk: u32, // rows per part
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (rows, cols) dense
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (ceil(rows / chunk), cols)

@compute @workgroup_size(64)
fn sum_columns(@builtin(global_invocation_id) id: vec3<u32>) {
    let c = id.x;
    if c >= p.cols {
        return;
    }
    let start = id.y * p.chunk;
    let end = min(start + p.chunk, p.rows);
    var acc = 0.0;
    for (var r = start; r < end; r++) {
        acc += x[r * p.cols + c];
    }
    out[id.y * p.cols + c] = acc;
}
