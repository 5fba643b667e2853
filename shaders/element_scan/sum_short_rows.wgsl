// prelude: kernel/grid.wgsl
// prelude: ops/reduce/rows.wgsl
// Sum of short rows, one invocation per row (a broadcast parameter's gradient, where many
// rows of a few values each would leave most of a one-workgroup-per-row kernel idle):
//   out[r] = sum_c x[r * cols + c]   for r in 0..rows, accumulated in f32 in order.

@compute @workgroup_size(64)
fn sum_short_rows(grid: Grid) {
    let r = grid_index(grid, 64u);
    if r >= p.rows {
        return;
    }
    var acc = 0.0;
    for (var c = 0u; c < p.cols; c++) {
        acc += x[r * p.cols + c];
    }
    out[r] = acc;
}
