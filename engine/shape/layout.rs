//! Shape, strides and offset of a tensor view, in elements.
//!
//! A view never copies: transposing swaps strides, slicing moves the offset and shrinks one
//! dimension. Kernels that need dense input call `Tensor::contiguous`, which copies only
//! when the view is not already dense from offset 0.

use super::{add, mul, numel};
use crate::error::{Error, Result};

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
    /// Dense row-major layout of `shape` from offset 0. `shape` has been checked by
    /// [`numel`](super::numel) (every tensor constructor does), so each stride, a sub-product of
    /// its dimensions, fits; an unchecked shape saturates instead of wrapping.
    pub fn contiguous(shape: &[usize]) -> Self {
        debug_assert!(numel("Layout::contiguous", "shape", shape).is_ok());
        let mut strides = vec![0; shape.len()];
        let mut acc: usize = 1;
        for i in (0..shape.len()).rev() {
            strides[i] = acc;
            acc = acc.saturating_mul(shape[i]);
        }
        Layout {
            shape: shape.to_vec(),
            strides,
            offset: 0,
        }
    }

    /// Number of elements (the shape was checked when the layout was built).
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
            acc = acc.saturating_mul(self.shape[i]); // a saturated product matches no stride
        }
        true
    }

    /// Dense and starting at element 0 of the buffer: what most kernels bind directly.
    pub fn is_contiguous(&self) -> bool {
        self.offset == 0 && self.is_dense()
    }

    /// One past the largest element index the view touches, or an error on overflow.
    pub fn extent(&self) -> Result<usize> {
        if self.is_empty() {
            return Ok(self.offset);
        }
        let mut end = add("Layout::extent", "offset", self.offset, 1)?;
        for (&n, &s) in self.shape.iter().zip(&self.strides) {
            end = add(
                "Layout::extent",
                "strides",
                end,
                mul("Layout::extent", "strides", n - 1, s)?,
            )?;
        }
        Ok(end)
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
            add(
                "narrow",
                "offset",
                self.offset,
                mul("narrow", "offset", start, self.strides[axis])?,
            )?
        };
        Ok(out)
    }
}
