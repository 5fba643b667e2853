//! Writing host data into an existing tensor, in place: every tensor sharing its buffer sees
//! the new values. The way to change a plan's inputs between replays (the plan binds the
//! buffer, not its contents).

use ndarray::{ArrayViewD, IxDyn};

use super::{copy_into, Storage, Tensor};
use crate::context::op_scope::in_op;
use crate::error::{Error, Result};
use crate::shape::DType;

impl Tensor {
    /// Overwrites this tensor's elements with `data` (row-major over the view), in place. An
    /// F32 tensor; `data.len()` must equal [`Tensor::len`]. A dense view is one upload into
    /// its byte range; any other view uploads `data` and copies it in with `copy_into` (a
    /// view that addresses one element twice, a stride-0 axis, is refused). Ordered after the
    /// ops recorded before it (their commands are submitted first), so a replayed plan reads
    /// the new values on its next replay. Inside a plan capture it is an error, as every
    /// upload is. self (...), data (len) -> ().
    ///
    /// ```
    /// use wgsl_compute::{Context, Tensor};
    /// let ctx = Context::cpu();
    /// let x = Tensor::zeros(&ctx, &[2, 2])?;
    /// x.write(&[1., 2., 3., 4.])?;
    /// assert_eq!(x.to_vec()?, vec![1., 2., 3., 4.]);
    /// assert!(x.write(&[1., 2.]).is_err()); // 2 values for 4 elements
    /// # Ok::<(), wgsl_compute::Error>(())
    /// ```
    pub fn write(&self, data: &[f32]) -> Result<()> {
        let op = "Tensor::write";
        self.expect_dtype(op, "self", &[DType::F32])?;
        if data.len() != self.len() {
            return Err(Error::value(
                op,
                "data",
                format!("{} values for shape {:?}", self.len(), self.shape()),
                data.len(),
            ));
        }
        if self.is_empty() {
            return Ok(());
        }
        match (&self.storage, self.ctx.gpu()) {
            (Storage::Cpu(_), _) => {
                let src = ArrayViewD::from_shape(IxDyn(self.shape()), data)
                    .map_err(|e| Error::value(op, "data", "values that fill the shape", e))?;
                let l = self.layout();
                if l.shape.iter().zip(&l.strides).any(|(&n, &s)| n > 1 && s == 0) {
                    // The strided host write would refuse it less clearly; copy_into names it.
                    return copy_into(self, &Tensor::from_slice(&self.ctx, self.shape(), data)?);
                }
                self.host_write(&src, op)
            }
            (Storage::Gpu(b), Some(gpu)) if self.layout.is_dense() => {
                let offset = (self.layout.offset * 4) as u64;
                in_op(op, || gpu.write(b.buffer(), offset, bytemuck::cast_slice(data)));
                Ok(())
            }
            _ => in_op(op, || {
                copy_into(self, &Tensor::from_slice(&self.ctx, self.shape(), data)?)
            }),
        }
    }
}

impl Tensor {
    /// Overwrites this (T,) F32 tensor with the ids `ids` as exact f32 values, after checking
    /// each: below `below` (a table's rows or the classes) and below 2^24 (exact in f32). The
    /// way to hand a compiled step its batch (`ops::Ids::Device`): the ops that read
    /// device ids cannot check them. self (T,), ids (T) -> ().
    ///
    /// ```
    /// use wgsl_compute::{Context, Tensor};
    /// let ctx = Context::cpu();
    /// let ids = Tensor::zeros(&ctx, &[3])?;
    /// ids.write_ids(&[5, 0, 9], 10)?;
    /// assert_eq!(ids.to_vec()?, vec![5., 0., 9.]);
    /// assert!(ids.write_ids(&[5, 0, 10], 10).is_err()); // 10 is not below 10
    /// # Ok::<(), wgsl_compute::Error>(())
    /// ```
    pub fn write_ids(&self, ids: &[u32], below: usize) -> Result<()> {
        let op = "Tensor::write_ids";
        if self.rank() != 1 {
            return Err(Error::shape(op, "self", "(T,) ids", self.shape()));
        }
        if ids.len() != self.len() {
            return Err(Error::value(
                op,
                "ids",
                format!("{} ids (the tensor's length)", self.len()),
                ids.len(),
            ));
        }
        if let Some((i, &bad)) = ids
            .iter()
            .enumerate()
            .find(|(_, &id)| id as usize >= below || id >= 1 << 24)
        {
            return Err(Error::value(
                op,
                "ids",
                format!("ids below {} (and below 2^24)", below.min(1 << 24)),
                format!("{bad} at [{i}]"),
            ));
        }
        let values: Vec<f32> = ids.iter().map(|&i| i as f32).collect();
        in_op(op, || self.write(&values))
    }
}
