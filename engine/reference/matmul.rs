//! Reference matrix products, accumulated in f64.
//!
//! Each element is `sum_k a[i, k] b[k, j]` summed in f64 in the order k = 0, 1, ..., K - 1
//! (the products of two f32 are exact in f64), whatever the layout: the walk only decides
//! how b is read. A row-major b is streamed row by row into f64 accumulators (a few rows of
//! a at a time, so each row of b is read once per block); a b whose columns are contiguous
//! (a transposed view, GPT-2's tied head `wte^T`) is read as dot products along its columns.
//! Neither copies b: the CPU context's decode step reads each weight once.

use ndarray::{ArrayD, ArrayView2, ArrayViewD, Axis, IxDyn};

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
    // Views where the layout allows (a copy only for views that cannot be regrouped).
    let a = a.to_shape((batch, m, k)).map_err(bad)?;
    let b = b.to_shape((batch, k, n)).map_err(bad)?;
    let mut out = vec![0f32; batch * m * n];
    for z in 0..batch {
        let (az, bz) = (a.index_axis(Axis(0), z), b.index_axis(Axis(0), z));
        product(&az, &bz, &mut out[z * m * n..(z + 1) * m * n]);
    }
    let mut shape = s.batch;
    shape.extend([m, n]);
    ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| Error::value(op, "output", "sizes that agree", e))
}

/// Rows of a accumulated together (each row of b read once per block).
const ROWS: usize = 4;

/// `out (M, N) = a (M, K) @ b (K, N)`, each sum in f64 in k order from -0.0 (as `Iterator::sum`).
fn product(a: &ArrayView2<f32>, b: &ArrayView2<f32>, out: &mut [f32]) {
    let (m, k) = a.dim();
    let n = b.dim().1;
    if n == 0 {
        return;
    }
    if k > 0 && b.column(0).as_slice().is_some() && m < 2 * ROWS {
        // Contiguous columns: a dot product per element.
        for i in 0..m {
            let row: Vec<f64> = a.row(i).iter().map(|&v| v as f64).collect();
            for j in 0..n {
                let col = b.column(j);
                let col = col.as_slice().unwrap_or_default();
                let dot = row.iter().zip(col).fold(-0.0f64, |s, (x, &y)| s + x * y as f64);
                out[i * n + j] = dot as f32;
            }
        }
        return;
    }
    let mut acc = vec![-0.0f64; ROWS * n];
    let mut brow = vec![0f32; n];
    for i0 in (0..m).step_by(ROWS) {
        let rows = ROWS.min(m - i0);
        acc.iter_mut().for_each(|v| *v = -0.0);
        for kk in 0..k {
            let r = b.row(kk);
            let r = match r.as_slice() {
                Some(r) => r,
                None => {
                    brow.iter_mut().zip(r.iter()).for_each(|(d, &v)| *d = v);
                    &brow[..]
                }
            };
            for (q, acc) in acc.chunks_exact_mut(n).take(rows).enumerate() {
                let x = a[[i0 + q, kk]] as f64;
                acc.iter_mut().zip(r).for_each(|(s, &y)| *s += x * y as f64);
            }
        }
        for (q, acc) in acc.chunks_exact(n).take(rows).enumerate() {
            let o = &mut out[(i0 + q) * n..(i0 + q + 1) * n];
            o.iter_mut().zip(acc).for_each(|(o, &s)| *o = s as f32);
        }
    }
}
