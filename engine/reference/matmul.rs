//! Reference matrix products, accumulated in f64.

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use crate::error::{Error, Result};
use crate::shape::matmul_shapes;

/// `a @ b` with numpy batch broadcasting. a (..., M, K), b (..., K, N) -> (..., M, N).
pub fn matmul(a: &ArrayViewD<f32>, b: &ArrayViewD<f32>) -> Result<ArrayD<f32>> {
    let s = matmul_shapes("reference::matmul", a.shape(), b.shape())?;
    let (m, k, n) = (s.m, s.k, s.n);
    let mut a_shape = s.batch.clone();
    a_shape.extend([m, k]);
    let mut b_shape = s.batch.clone();
    b_shape.extend([k, n]);
    let op = "reference::matmul";
    let a = a
        .broadcast(IxDyn(&a_shape))
        .ok_or_else(|| Error::shape(op, "a", format!("{a_shape:?}"), a.shape()))?;
    let b = b
        .broadcast(IxDyn(&b_shape))
        .ok_or_else(|| Error::shape(op, "b", format!("{b_shape:?}"), b.shape()))?;
    let batch: usize = s.batch.iter().product();
    let bad = |e: ndarray::ShapeError| Error::value(op, "operands", "a reshape to (batch, rows, cols)", e);
    let a = a.to_shape((batch, m, k)).map_err(bad)?.to_owned();
    let b = b.to_shape((batch, k, n)).map_err(bad)?.to_owned();
    let mut out = vec![0f32; batch * m * n];
    let mut bt = vec![0f64; k * n];
    for z in 0..batch {
        let (az, bz) = (a.index_axis(Axis(0), z), b.index_axis(Axis(0), z));
        // b transposed into (N, K) so both operands of each dot product are contiguous.
        for ((kk, j), &v) in bz.indexed_iter() {
            bt[j * k + kk] = v as f64;
        }
        for i in 0..m {
            let row: Vec<f64> = az.row(i).iter().map(|&v| v as f64).collect();
            for j in 0..n {
                let col = &bt[j * k..(j + 1) * k];
                out[(z * m + i) * n + j] = row.iter().zip(col).map(|(x, y)| x * y).sum::<f64>() as f32;
            }
        }
    }
    let mut shape = s.batch;
    shape.extend([m, n]);
    ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| Error::value(op, "output", "sizes that agree", e))
}
