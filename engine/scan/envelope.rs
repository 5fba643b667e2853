//! Shape checks of the four scans, before anything is recorded: a wrong rank, a disagreeing
//! batch or time axis, T = 0, a bad initial state or gradient shape is an error naming the
//! argument; a valid shape outside what the GPU kernels support is an [`Error::Fallback`].

use crate::error::{Error, Result};
use crate::shape::DType;
use crate::tensor::Tensor;

/// The dtype of one scan call: the first of `args` (`(name, tensor)`, absent ones skipped)
/// must be one of `accepted`, and every other one must have its dtype (a scan reads all its
/// inputs in one dtype and returns its outputs in it). An [`Error::DType`] names the
/// argument, what it got and what it could have been.
pub(crate) fn one_dtype(
    op: &'static str,
    args: &[(&'static str, Option<&Tensor>)],
    accepted: &[DType],
) -> Result<DType> {
    let mut args = args.iter().filter_map(|&(name, t)| t.map(|t| (name, t)));
    let Some((first, t)) = args.next() else {
        return Ok(DType::F32);
    };
    t.expect_dtype(op, first, accepted)?;
    let dtype = t.dtype();
    for (name, t) in args {
        if t.dtype() != dtype {
            return Err(Error::DType {
                op,
                arg: name,
                expected: format!("{dtype} (the dtype of `{first}`: one dtype for every input of a call)"),
                actual: t.dtype().to_string(),
            });
        }
    }
    Ok(dtype)
}

/// The block sizes the GPU kernels are specialised for (k and v each).
pub const BLOCK_SIZES: [usize; 5] = [1, 2, 4, 8, 16];

/// The affine scan's dimensions: batch, time, blocks, block rows k, columns v.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AffineDims {
    pub b: usize,
    pub t: usize,
    pub n: usize,
    pub k: usize,
    pub v: usize,
}

impl AffineDims {
    /// Lanes the kernels walk: one per (batch, block).
    pub fn lanes(&self) -> usize {
        self.b * self.n
    }
    /// H's shape (B, T, N, k, v).
    pub fn h_shape(&self) -> [usize; 5] {
        [self.b, self.t, self.n, self.k, self.v]
    }
    /// A's shape (B, T, N, k, k).
    pub fn a_shape(&self) -> [usize; 5] {
        [self.b, self.t, self.n, self.k, self.k]
    }
    /// h0's shape (B, N, k, v).
    pub fn h0_shape(&self) -> [usize; 4] {
        [self.b, self.n, self.k, self.v]
    }
}

/// Requires `t` to have rank `rank`, naming it `arg` and describing `layout` (e.g. "(B, T, D)").
pub(crate) fn rank(op: &'static str, arg: &'static str, t: &Tensor, rank: usize, layout: &str) -> Result<()> {
    if t.rank() != rank {
        return Err(Error::shape(op, arg, format!("rank {rank} {layout}"), t.shape()));
    }
    Ok(())
}

/// Requires `t` to have exactly `want`'s shape, naming it `arg`.
pub(crate) fn exact(op: &'static str, arg: &'static str, t: &Tensor, want: &[usize], layout: &str) -> Result<()> {
    if t.shape() != want {
        return Err(Error::shape(op, arg, format!("{want:?} {layout}"), t.shape()));
    }
    Ok(())
}

/// Requires T >= 1 (the time axis of `arg`).
pub(crate) fn nonempty_time(op: &'static str, arg: &'static str, t: &Tensor, time: usize) -> Result<()> {
    if time == 0 {
        return Err(Error::shape(
            op,
            arg,
            "T >= 1 (an empty time axis has no scan)",
            t.shape(),
        ));
    }
    Ok(())
}

/// Checks `matrix_affine_scan`'s A (B, T, N, k, k) against `b_name` (B, T, N, k, v): the
/// injections B forward, the output H backward.
pub(crate) fn affine(op: &'static str, a: &Tensor, b_name: &'static str, b: &Tensor) -> Result<AffineDims> {
    rank(op, "A", a, 5, "(B, T, N, k, k)")?;
    rank(op, b_name, b, 5, "(B, T, N, k, v)")?;
    let (s, u) = (a.shape(), b.shape());
    if s[3] != s[4] || s[3] == 0 {
        return Err(Error::shape(op, "A", "(B, T, N, k, k) with square blocks, k >= 1", s));
    }
    if s[..4] != u[..4] {
        return Err(Error::mismatch(op, "A", s, b_name, u));
    }
    if u[4] == 0 {
        return Err(Error::shape(op, b_name, "(B, T, N, k, v) with v >= 1", u));
    }
    nonempty_time(op, "A", a, s[1])?;
    Ok(AffineDims {
        b: s[0],
        t: s[1],
        n: s[2],
        k: s[3],
        v: u[4],
    })
}

/// The GPU kernels' envelope: k in {1, 2, 4, 8, 16}, v at most 16. The kernels are
/// specialised for [`BLOCK_SIZES`]; a v between two runs zero-padded to the next
/// (`scan::padded`, which says why k is not padded).
pub(crate) fn gpu_block_sizes(op: &'static str, d: &AffineDims) -> Result<()> {
    let largest = BLOCK_SIZES[BLOCK_SIZES.len() - 1];
    let reason = if !BLOCK_SIZES.contains(&d.k) {
        format!("k = {} is not one of {BLOCK_SIZES:?}", d.k)
    } else if d.v > largest {
        format!(
            "v = {} is larger than the GPU kernels' largest block size, {largest}",
            d.v
        )
    } else {
        return Ok(());
    };
    Err(Error::Fallback { op, reason })
}

/// The checks every affine backward shares: dL/dh has the output's shape, h0 (when given) has
/// `h0_shape`, and h, dL/dh and h0 live on the context of the transitions `a`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn backward_args(
    op: &'static str,
    a: &Tensor,
    h_name: &'static str,
    h: &Tensor,
    grad_h: &Tensor,
    h_layout: &str,
    h0: Option<&Tensor>,
    h0_shape: &[usize],
    h0_layout: &str,
) -> Result<()> {
    exact(op, "grad_h", grad_h, h.shape(), h_layout)?;
    if let Some(h0) = h0 {
        exact(op, "h0", h0, h0_shape, h0_layout)?;
    }
    for (name, t) in [(h_name, Some(h)), ("grad_h", Some(grad_h)), ("h0", h0)] {
        if let Some(t) = t {
            t.expect_context(a.context(), op, name)?;
        }
    }
    Ok(())
}
