//! Shape algebra, the bottom layer: element types ([`DType`]) and element counts, view layouts (shape, strides, offset),
//! numpy broadcasting, merging dense axes, the rank limit of the strided kernels, and the
//! shapes of a batched matmul, of an embedding and of attention. Nothing here touches a device or a
//! tensor; `tensor/`, `ops/`, `reference/` and the kernels' launch code all get their shape
//! rules from here.
//!
//! Every product of dimensions and every offset is checked: an overflow is an
//! [`Error`] naming the op and the argument, never a wrap.
//!
//! ```
//! use wgsl_compute::shape::{broadcast_shape, matmul_shapes, numel};
//! assert_eq!(broadcast_shape("add", &[4, 1, 5], &[3, 1])?, vec![4, 3, 5]);
//! let s = matmul_shapes("matmul", &[2, 1, 8, 16], &[3, 16, 4])?; // (2,1,M,K) @ (3,K,N)
//! assert_eq!((s.batch, s.m, s.k, s.n), (vec![2, 3], 8, 16, 4));
//! assert!(numel("t", "shape", &[1 << 20, 1 << 20]).is_err());   // more than 2^32 - 1
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

mod attention;
mod broadcast;
mod dtype;
mod embedding;
mod layout;
mod matmul;

pub use attention::attention_shapes;
pub use broadcast::{broadcast_shape, broadcast_strides, check_rank, collapse, vec4_reads, Vec4Read, MAX_RANK};
pub use dtype::DType;
pub use embedding::embedding_shapes;
pub use layout::Layout;
pub use matmul::{matmul_shapes, MatmulShape};

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

/// `a * b` for a size or an offset of `op`'s argument `arg`, or an error when it overflows.
pub fn mul(op: &'static str, arg: &'static str, a: usize, b: usize) -> Result<usize> {
    a.checked_mul(b)
        .ok_or_else(|| Error::value(op, arg, "a product that fits usize", format!("{a} * {b}")))
}

/// `a + b` for a size or an offset of `op`'s argument `arg`, or an error when it overflows.
pub fn add(op: &'static str, arg: &'static str, a: usize, b: usize) -> Result<usize> {
    a.checked_add(b)
        .ok_or_else(|| Error::value(op, arg, "a sum that fits usize", format!("{a} + {b}")))
}

/// The product of `dims` (a batch, a row length), or an error when it overflows.
pub fn product(op: &'static str, arg: &'static str, dims: &[usize]) -> Result<usize> {
    dims.iter().try_fold(1usize, |acc, &d| mul(op, arg, acc, d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_arithmetic_fails_instead_of_wrapping() {
        assert_eq!(numel("t", "s", &[3, 0, 5]).unwrap(), 0);
        assert!(numel("t", "s", &[usize::MAX, 2]).is_err());
        assert!(numel("t", "s", &[1 << 16, 1 << 16]).is_err());
        assert_eq!(product("t", "s", &[2, 3, 4]).unwrap(), 24);
        assert!(product("t", "s", &[usize::MAX, 2]).is_err());
        assert!(add("t", "s", usize::MAX, 1).is_err());
        assert!(mul("t", "s", usize::MAX / 2 + 1, 2).is_err());
    }
}
