//! [`Batches`]: a dataset of `len` examples cut into mini-batches of indices, reshuffled
//! every epoch from a seed (the same seed and epoch give the same batches on every machine,
//! so a resumed run sees the batches an uninterrupted one would), and [`gather_rows`] to
//! build a batch's host data from those indices.
//!
//! ```
//! use wgsl_compute::train::{gather_rows, Batches};
//! let xs: Vec<f32> = (0..10 * 3).map(|v| v as f32).collect(); // 10 examples of 3 values
//! let batches = Batches::new(10, 4, 7)?;                     // shuffled, seed 7
//! assert_eq!(batches.per_epoch(), 3);                         // 4 + 4 + 2
//! for idx in batches.epoch(0) {
//!     let x = gather_rows(&xs, 3, &idx)?;                     // (idx.len(), 3)
//!     assert_eq!(x.len(), 3 * idx.len());
//! }
//! assert_ne!(batches.epoch(0), batches.epoch(1));             // a new order each epoch
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

use crate::check::Rng;
use crate::error::{Error, Result};

/// Mini-batches of example indices over `0..len`, seeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batches {
    len: usize,
    batch: usize,
    seed: u64,
    shuffle: bool,
    drop_last: bool,
}

impl Batches {
    /// Batches of `batch` indices of `0..len` (both at least 1), in a new order every epoch
    /// drawn from `seed`; the last batch of an epoch may be smaller (see
    /// [`Batches::drop_last`]).
    pub fn new(len: usize, batch: usize, seed: u64) -> Result<Self> {
        let op = "Batches::new";
        if len == 0 {
            return Err(Error::value(op, "len", "at least one example", len));
        }
        if batch == 0 {
            return Err(Error::value(op, "batch", "at least one example per batch", batch));
        }
        Ok(Batches {
            len,
            batch,
            seed,
            shuffle: true,
            drop_last: false,
        })
    }

    /// Without shuffling: `0..len` in order every epoch.
    pub fn in_order(self) -> Self {
        Batches { shuffle: false, ..self }
    }

    /// Leaves out the last batch of an epoch when it is smaller than `batch` (every batch
    /// then has one shape, as a captured step needs). With fewer than `batch` examples an
    /// epoch is then empty.
    pub fn drop_last(self, drop: bool) -> Self {
        Batches {
            drop_last: drop,
            ..self
        }
    }

    /// Batches in one epoch.
    pub fn per_epoch(&self) -> usize {
        match self.drop_last {
            true => self.len / self.batch,
            false => self.len.div_ceil(self.batch),
        }
    }

    /// The order of `0..len` in `epoch`: a Fisher-Yates shuffle drawn from the seed and the
    /// epoch (identity without shuffling).
    pub fn order(&self, epoch: u64) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.len).collect();
        if self.shuffle {
            // One stream per (seed, epoch): epoch e's order never depends on the epochs before.
            let mut rng = Rng::new(self.seed ^ epoch.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            for i in (1..self.len).rev() {
                order.swap(i, rng.below(i + 1));
            }
        }
        order
    }

    /// The batches of `epoch`: [`Batches::order`] cut into runs of `batch` indices.
    pub fn epoch(&self, epoch: u64) -> Vec<Vec<usize>> {
        let order = self.order(epoch);
        order
            .chunks(self.batch)
            .filter(|c| !self.drop_last || c.len() == self.batch)
            .map(<[usize]>::to_vec)
            .collect()
    }
}

/// The rows `indices` of `data`, rows of `row` values each, one after another: data
/// (N, row), indices (B,) below N -> (B, row). An index past the data, a `row` of 0 or data
/// that is not whole rows is an error naming it.
pub fn gather_rows(data: &[f32], row: usize, indices: &[usize]) -> Result<Vec<f32>> {
    let op = "gather_rows";
    if row == 0 || !data.len().is_multiple_of(row) {
        return Err(Error::value(
            op,
            "row",
            format!("a positive divisor of the data's {} values", data.len()),
            row,
        ));
    }
    let rows = data.len() / row;
    let mut out = Vec::with_capacity(indices.len() * row);
    for &i in indices {
        if i >= rows {
            return Err(Error::value(
                op,
                "indices",
                format!("indices below {rows} (the rows)"),
                i,
            ));
        }
        out.extend_from_slice(&data[i * row..(i + 1) * row]);
    }
    Ok(out)
}
