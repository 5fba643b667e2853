//! Reference reductions, accumulated in f64.

use ndarray::{ArrayD, ArrayViewD, Axis};

/// Sum along the last axis. x (..., n) -> (...). A rank-0 input is returned as is.
pub fn sum_last(x: &ArrayViewD<f32>) -> ArrayD<f32> {
    if x.ndim() == 0 {
        return x.to_owned();
    }
    let last = Axis(x.ndim() - 1);
    x.map_axis(last, |row| row.iter().map(|&v| v as f64).sum::<f64>() as f32)
}
