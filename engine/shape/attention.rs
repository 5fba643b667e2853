//! The shapes of attention over a KV cache: `q (H, Tq, D)`, `k` and `v (H, Tk, D)`, with
//! `past` cached positions before the queries.

use crate::error::{Error, Result};

/// Checks `q (H, Tq, D)`, `k (H, Tk, D)`, `v` (k's shape) and `past + Tq <= Tk`; returns
/// `(H, Tq, Tk, D)`.
pub fn attention_shapes(
    op: &'static str,
    q: &[usize],
    k: &[usize],
    v: &[usize],
    past: usize,
) -> Result<(usize, usize, usize, usize)> {
    if q.len() != 3 {
        return Err(Error::shape(op, "q", "(H, Tq, D)", q));
    }
    let (h, tq, d) = (q[0], q[1], q[2]);
    if k.len() != 3 || k[0] != h || k[2] != d {
        return Err(Error::mismatch(op, "q (H, Tq, D)", q, "k (H, Tk, D)", k));
    }
    if v != k {
        return Err(Error::mismatch(op, "k (H, Tk, D)", k, "v (H, Tk, D)", v));
    }
    let tk = k[1];
    if past.checked_add(tq).is_none_or(|end| end > tk) {
        return Err(Error::value(op, "past", format!("past + Tq ({tq}) <= Tk ({tk})"), past));
    }
    Ok((h, tq, tk, d))
}
