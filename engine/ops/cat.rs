//! Concatenation along an axis: the output is allocated once and each input is written into
//! its slice of it by the strided copy (`copy_into`, one dispatch per non-empty input; an
//! empty one, empty along any axis, writes nothing), so any input view works and no kernel is
//! written for it. CPU context: the same copy on the host.

use crate::error::{Error, Result};
use crate::shape::DType;
use crate::tensor::{copy_into, Tensor};

/// The tensors joined along `axis`: every input of one rank, equal on every other axis, on
/// one context, F32. `tensors[i]` (..., n_i, ...) -> (..., sum n_i, ...), n_i at `axis`.
pub fn cat(tensors: &[&Tensor], axis: usize) -> Result<Tensor> {
    let op = "cat";
    let Some(first) = tensors.first() else {
        return Err(Error::value(op, "tensors", "at least one tensor", 0));
    };
    if axis >= first.rank() {
        return Err(Error::value(
            op,
            "axis",
            format!("an axis of tensors[0] {:?} (0..{})", first.shape(), first.rank()),
            axis,
        ));
    }
    let mut shape = first.shape().to_vec();
    shape[axis] = 0;
    for t in tensors {
        t.expect_context(first.context(), op, "tensors")?;
        t.expect_dtype(op, "tensors", &[DType::F32])?;
        let same_elsewhere = t.rank() == first.rank()
            && t.shape()
                .iter()
                .zip(first.shape())
                .enumerate()
                .all(|(d, (a, b))| d == axis || a == b);
        if !same_elsewhere {
            return Err(Error::mismatch(
                op,
                "tensors[0]",
                first.shape(),
                "tensors[i]",
                t.shape(),
            ));
        }
        shape[axis] = shape[axis]
            .checked_add(t.shape()[axis])
            .ok_or_else(|| Error::value(op, "tensors", "a total length that fits in usize", "overflow"))?;
    }
    let out = Tensor::uninit(first.context(), &shape, op)?;
    let mut at = 0;
    for t in tensors {
        let n = t.shape()[axis];
        if !t.is_empty() {
            copy_into(&out.narrow(axis, at, at + n)?, t)?;
        }
        at += n;
    }
    Ok(out)
}
