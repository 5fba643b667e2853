//! The shapes of a batched matrix product: `a (..., M, K) @ b (..., K, N)` with numpy
//! broadcasting of the batch axes. Shared by `ops::matmul` and `reference::matmul`.

use super::{broadcast_shape, numel};
use crate::error::{Error, Result};

/// The shapes of a batched product: broadcast batch dims, then (M, K) @ (K, N).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmulShape {
    /// Broadcast batch dimensions.
    pub batch: Vec<usize>,
    /// Rows of the left operand and the output.
    pub m: usize,
    /// The contracted dimension.
    pub k: usize,
    /// Columns of the right operand and the output.
    pub n: usize,
}

/// Checks `a (..., M, K) @ b (..., K, N)`: ranks, inner dimensions, batch broadcast.
pub fn matmul_shapes(op: &'static str, a: &[usize], b: &[usize]) -> Result<MatmulShape> {
    if a.len() < 2 {
        return Err(Error::shape(op, "a", "rank >= 2 (..., M, K)", a));
    }
    if b.len() < 2 {
        return Err(Error::shape(op, "b", "rank >= 2 (..., K, N)", b));
    }
    let (ab, am) = a.split_at(a.len() - 2);
    let (bb, bm) = b.split_at(b.len() - 2);
    if am[1] != bm[0] {
        return Err(Error::mismatch(op, "a (..., M, K)", a, "b (..., K, N)", b));
    }
    let batch = broadcast_shape(op, ab, bb).map_err(|_| Error::mismatch(op, "a batch", a, "b batch", b))?;
    // The output (..., M, N) may be far larger than either operand when K is small or 0.
    let mut out = batch.clone();
    out.extend([am[0], bm[1]]);
    numel(op, "output", &out)?;
    Ok(MatmulShape {
        batch,
        m: am[0],
        k: am[1],
        n: bm[1],
    })
}
