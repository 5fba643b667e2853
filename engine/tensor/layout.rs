//! Shape, strides and offset of a tensor view, in elements.
//!
//! A view never copies: transposing swaps strides, slicing moves the offset and shrinks one
//! dimension. Kernels that need dense input call `Tensor::contiguous`, which copies only
//! when the view is not already dense from offset 0.

use crate::error::{Error, Result};

/// Most elements one tensor may hold (2^32 - 1), on every context. Every product of a
/// shape's non-zero dimensions stays at or below it, so any sub-product (rows, columns,
/// batch) of a checked shape can be computed without overflow, even when another dimension
/// is 0. GPU tensors are further bounded by the device's storage binding limit.
pub const MAX_ELEMENTS: usize = u32::MAX as usize;

/// The number of elements of `shape`, checked: fails (naming `op` and `arg`) when the
/// product of its non-zero dimensions exceeds [`MAX_ELEMENTS`] (an overflow included).
pub fn numel(op: &'static str, arg: &'static str, shape: &[usize]) -> Result<usize> {
    let mut nonzero: usize = 1;
    let mut empty = false;
    for &d in shape {
        if d == 0 {
            empty = true;
            continue;
        }
        nonzero = match nonzero.checked_mul(d) {
            Some(n) if n <= MAX_ELEMENTS => n,
            _ => {
                return Err(Error::shape(
                    op,
                    arg,
                    format!("at most {MAX_ELEMENTS} elements (product of the non-zero dimensions)"),
                    shape,
                ))
            }
        };
    }
    Ok(if empty { 0 } else { nonzero })
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// Shape, strides and offset of a view into a buffer, in elements.
pub struct Layout {
    /// Size of each dimension.
    pub shape: Vec<usize>,
    /// Elements to step per index of each dimension.
    pub strides: Vec<usize>,
    /// Element index of the view's first element.
    pub offset: usize,
}

impl Layout {
    /// Dense row-major layout of `shape` from offset 0.
    pub fn contiguous(shape: &[usize]) -> Self {
        let mut strides = vec![0; shape.len()];
        let mut acc = 1;
        for i in (0..shape.len()).rev() {
            strides[i] = acc;
            acc *= shape[i];
        }
        Layout {
            shape: shape.to_vec(),
            strides,
            offset: 0,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when some dimension is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row-major dense (ignoring the offset); size-1 dimensions may have any stride.
    pub fn is_dense(&self) -> bool {
        let mut acc = 1;
        for i in (0..self.shape.len()).rev() {
            if self.shape[i] != 1 && self.strides[i] != acc {
                return false;
            }
            acc *= self.shape[i];
        }
        true
    }

    /// Dense and starting at element 0 of the buffer: what most kernels bind directly.
    pub fn is_contiguous(&self) -> bool {
        self.offset == 0 && self.is_dense()
    }

    /// One past the largest element index the view touches.
    pub fn extent(&self) -> usize {
        if self.is_empty() {
            return self.offset;
        }
        self.offset
            + self
                .shape
                .iter()
                .zip(&self.strides)
                .map(|(n, s)| (n - 1) * s)
                .sum::<usize>()
            + 1
    }

    /// Swaps two axes.
    pub fn transpose(&self, a: usize, b: usize) -> Result<Self> {
        let r = self.shape.len();
        if a >= r || b >= r {
            return Err(Error::value(
                "transpose",
                "axes",
                format!("axes below rank {r}"),
                format!("({a}, {b})"),
            ));
        }
        let mut out = self.clone();
        out.shape.swap(a, b);
        out.strides.swap(a, b);
        Ok(out)
    }

    /// Keeps `start..end` of `axis`.
    pub fn narrow(&self, axis: usize, start: usize, end: usize) -> Result<Self> {
        let r = self.shape.len();
        if axis >= r {
            return Err(Error::value("narrow", "axis", format!("below rank {r}"), axis));
        }
        if start > end || end > self.shape[axis] {
            return Err(Error::value(
                "narrow",
                "range",
                format!("within 0..{} of axis {axis}", self.shape[axis]),
                format!("{start}..{end}"),
            ));
        }
        let mut out = self.clone();
        out.shape[axis] = end - start;
        // An empty view touches nothing: its offset goes to 0 so it never points past the
        // end of its buffer (narrowing at the end of several axes would).
        out.offset = if out.is_empty() {
            0
        } else {
            self.offset + start * self.strides[axis]
        };
        Ok(out)
    }
}
