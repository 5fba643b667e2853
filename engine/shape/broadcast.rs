//! Broadcasting shapes, strides that read a view as a broadcast shape, merging the axes
//! that are dense in every operand so strided kernels loop over as few axes as possible, and
//! whether the merged layout lets a kernel read every operand four elements at a time.

use super::{numel, Layout};
use crate::error::{Error, Result};

/// Largest rank the strided elementwise kernels address (their uniforms hold two `vec4<u32>`
/// rows per shape or stride list).
pub const MAX_RANK: usize = 8;

/// The numpy-style broadcast of two shapes (aligned at the last axis; 1 stretches).
pub fn broadcast_shape(op: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let r = a.len().max(b.len());
    let mut out = vec![0; r];
    for i in 0..r {
        let da = if i + a.len() >= r { a[i + a.len() - r] } else { 1 };
        let db = if i + b.len() >= r { b[i + b.len() - r] } else { 1 };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return Err(Error::mismatch(op, "lhs", a, "rhs", b)),
        };
    }
    // The broadcast can hold far more elements than either operand ([n, 1] with [1, n]).
    numel(op, "broadcast shape", &out)?;
    Ok(out)
}

/// Strides that read `layout` as if it had `shape` (broadcast axes get stride 0).
///
/// Errors ([`Error::Shape`], op `shape::broadcast_strides`): `layout` with as many strides
/// as axes, of rank at most `shape`'s, each of its axes 1 or `shape`'s (numpy broadcasting
/// from the right), or it is refused.
pub fn broadcast_strides(layout: &Layout, shape: &[usize]) -> Result<Vec<usize>> {
    const OP: &str = "shape::broadcast_strides";
    let r = shape.len();
    let k = layout.shape.len();
    if layout.strides.len() != k {
        return Err(Error::shape(
            OP,
            "layout.strides",
            format!("{k} strides (one per axis of {:?})", layout.shape),
            &layout.strides,
        ));
    }
    let fits = k <= r
        && layout
            .shape
            .iter()
            .zip(&shape[r - k.min(r)..])
            .all(|(&l, &s)| l == 1 || l == s);
    if !fits {
        return Err(Error::shape(
            OP,
            "layout",
            format!("a shape that broadcasts to {shape:?}"),
            &layout.shape,
        ));
    }
    Ok((0..r)
        .map(|i| {
            if i + k < r {
                return 0;
            }
            let j = i + k - r;
            if layout.shape[j] == 1 && shape[i] != 1 {
                0
            } else {
                layout.strides[j]
            }
        })
        .collect())
}

/// Merges adjacent axes that are dense in every operand, and drops size-1 axes, so the
/// kernels loop over as few axes as possible (rank 1 for same-shape dense operands).
///
/// Errors ([`Error::Shape`], op `shape::collapse`): an operand's strides not one per axis of
/// `shape`.
pub fn collapse(shape: &[usize], strides: &[Vec<usize>]) -> Result<(Vec<usize>, Vec<Vec<usize>>)> {
    if let Some(bad) = strides.iter().find(|s| s.len() != shape.len()) {
        return Err(Error::shape(
            "shape::collapse",
            "strides",
            format!("{} strides per operand (one per axis of {shape:?})", shape.len()),
            bad,
        ));
    }
    let mut out_shape: Vec<usize> = vec![];
    let mut out_strides: Vec<Vec<usize>> = vec![vec![]; strides.len()];
    for d in 0..shape.len() {
        if shape[d] == 1 {
            continue;
        }
        let mergeable = !out_shape.is_empty()
            && strides
                .iter()
                .zip(&out_strides)
                .all(|(s, o)| o.last().is_some() && o.last().copied() == s[d].checked_mul(shape[d]));
        if let (true, Some(last)) = (mergeable, out_shape.last_mut()) {
            // A sub-product of `shape`, whose element count the caller checked.
            *last = last.saturating_mul(shape[d]);
            for (o, s) in out_strides.iter_mut().zip(strides) {
                if let Some(l) = o.last_mut() {
                    *l = s[d];
                }
            }
        } else {
            out_shape.push(shape[d]);
            for (o, s) in out_strides.iter_mut().zip(strides) {
                o.push(s[d]);
            }
        }
    }
    if out_shape.is_empty() {
        out_shape.push(1);
        for o in &mut out_strides {
            o.push(0);
        }
    }
    Ok((out_shape, out_strides))
}

/// How a kernel that computes four neighbouring elements per `vec4` register reads one
/// operand of a collapsed layout (see [`vec4_reads`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vec4Read {
    /// Dense along the last axis from a 16-byte aligned element: one `vec4` load.
    Vec4,
    /// Constant along the last axis (stride 0): one scalar load, splatted.
    Splat,
}

/// How each operand of a vec4 elementwise kernel reads its view, or `None` when some operand
/// cannot be read four elements at a time (the scalar kernel then runs). `dims` and
/// `strides` come from [`collapse`]; `offsets` are the operands' element offsets.
///
/// Groups of four outputs `4g..4g+3` stay inside one row when the last axis is a multiple of
/// 4 (or there is one axis: the kernel handles the `n % 4` elements past the last full group
/// one at a time). An operand reads such a group as one aligned `vec4` when its last stride is
/// 1 and its offset and every other stride are multiples of 4, or as one scalar when its last
/// stride is 0.
pub fn vec4_reads(dims: &[usize], strides: &[Vec<usize>], offsets: &[usize]) -> Option<Vec<Vec4Read>> {
    let inner = dims.last().copied().unwrap_or(1);
    if dims.len() > 1 && inner % 4 != 0 {
        return None;
    }
    strides
        .iter()
        .zip(offsets)
        .map(|(s, &offset)| match s.split_last() {
            // One element in all ([`collapse`] gives it stride 0): read like a dense row of
            // one, so a dense tensor of one element shares the kernel of longer ones.
            _ if inner == 1 && offset % 4 == 0 => Some(Vec4Read::Vec4),
            None | Some((0, _)) => Some(Vec4Read::Splat),
            Some((1, outer)) if offset % 4 == 0 && outer.iter().all(|o| o % 4 == 0) => Some(Vec4Read::Vec4),
            Some(_) => None,
        })
        .collect()
}

/// Fails when a view needs more axes than the kernels address, after collapsing.
pub fn check_rank(op: &'static str, shape: &[usize]) -> Result<()> {
    if shape.len() > MAX_RANK {
        return Err(Error::Unsupported {
            op,
            message: format!(
                "views of rank {} (after merging dense axes); at most {MAX_RANK}",
                shape.len()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_shapes() {
        assert_eq!(broadcast_shape("t", &[2, 3], &[3]).unwrap(), vec![2, 3]);
        assert_eq!(broadcast_shape("t", &[4, 1, 5], &[3, 1]).unwrap(), vec![4, 3, 5]);
        assert!(broadcast_shape("t", &[2, 3], &[4]).is_err());
    }

    #[test]
    fn collapse_merges_dense_axes() {
        let (s, st) = collapse(&[2, 3, 4], &[vec![12, 4, 1], vec![12, 4, 1]]).unwrap();
        assert_eq!(s, vec![24]);
        assert_eq!(st, vec![vec![1], vec![1]]);
        let (s, st) = collapse(&[2, 3, 4], &[vec![12, 4, 1], vec![0, 4, 1]]).unwrap();
        assert_eq!(s, vec![2, 12]);
        assert_eq!(st, vec![vec![12, 1], vec![0, 1]]);
    }
}
