//! The shapes of a token + position embedding: `wte (V, C)`, `wpe (P, C)`.

use crate::error::{Error, Result};

/// Checks `wte (V, C)` and `wpe (P, C)` (ranks 2, the same C); returns `(V, C, P)`.
pub fn embedding_shapes(op: &'static str, wte: &[usize], wpe: &[usize]) -> Result<(usize, usize, usize)> {
    if wte.len() != 2 {
        return Err(Error::shape(op, "wte", "(V, C)", wte));
    }
    if wpe.len() != 2 || wpe[1] != wte[1] {
        return Err(Error::mismatch(op, "wte (V, C)", wte, "wpe (P, C)", wpe));
    }
    Ok((wte[0], wte[1], wpe[0]))
}
