//! [`Ids`]: the token ids or class targets an op takes, from the host or already on the device.
//!
//! Host ids are checked by the op that takes them (each below the table's rows). Device ids are
//! a (T,) F32 tensor of exact whole values (below 2^24), written with [`Tensor::write_ids`],
//! which checks them: the op reads them as they are, so that a compiled step
//! (`train::CompiledStep`) holding `autograd::Var::embedding_rows` or
//! `Var::head_cross_entropy` can take a new batch each replay without an upload inside the plan.

use crate::context::Context;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Token ids or class targets: a host slice, or a (T,) F32 tensor of whole values on the
/// tensor's context (see the module).
#[derive(Clone, Copy, Debug)]
pub enum Ids<'a> {
    /// Ids on the host.
    Host(&'a [u32]),
    /// Ids on the device: (T,) F32, exact whole values.
    Device(&'a Tensor),
}

impl Ids<'_> {
    /// How many ids.
    pub fn len(&self) -> usize {
        match self {
            Ids::Host(v) => v.len(),
            Ids::Device(t) => t.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Device ids `start..end` as a dense tensor from offset 0 (a copy when not the whole).
    pub(crate) fn device_range(t: &Tensor, start: usize, end: usize) -> Result<Tensor> {
        t.narrow(0, start, end)?.contiguous()
    }

    /// Device ids checked to be a (T,) F32 tensor on `ctx`; `op` and `arg` name them.
    pub(crate) fn check_device(t: &Tensor, ctx: &Context, op: &'static str, arg: &'static str) -> Result<()> {
        t.expect_context(ctx, op, arg)?;
        t.expect_dtype(op, arg, &[crate::DType::F32])?;
        if t.rank() != 1 {
            return Err(Error::shape(op, arg, "(T,) ids", t.shape()));
        }
        Ok(())
    }

    /// Device ids read back for a host path (the CPU context's), each checked to be a whole
    /// number in [0, 2^24): a tensor filled by `Tensor::write` rather than `write_ids` is
    /// refused, not rounded.
    pub(crate) fn read_back(t: &Tensor, op: &'static str, arg: &'static str) -> Result<Vec<u32>> {
        // A CPU-context tensor's elements (its callers run on the CPU context only).
        t.host(op)?
            .iter()
            .enumerate()
            .map(|(i, &v)| match v >= 0.0 && v < (1 << 24) as f32 && v.fract() == 0.0 {
                true => Ok(v as u32),
                false => Err(Error::value(
                    op,
                    arg,
                    "whole ids in [0, 2^24) (Tensor::write_ids)",
                    format!("{v} at [{i}]"),
                )),
            })
            .collect()
    }
}

impl<'a> From<&'a [u32]> for Ids<'a> {
    fn from(v: &'a [u32]) -> Self {
        Ids::Host(v)
    }
}

impl<'a> From<&'a Vec<u32>> for Ids<'a> {
    fn from(v: &'a Vec<u32>) -> Self {
        Ids::Host(v)
    }
}

impl<'a, const N: usize> From<&'a [u32; N]> for Ids<'a> {
    fn from(v: &'a [u32; N]) -> Self {
        Ids::Host(v)
    }
}

impl<'a> From<&'a Tensor> for Ids<'a> {
    fn from(t: &'a Tensor) -> Self {
        Ids::Device(t)
    }
}
