//! Network ops on variables: causal attention (composed of recorded ops), the token +
//! position embedding, of one sequence or of a batch of rows (its backward a scatter-add,
//! `ops::embedding_backward`) and softmax
//! cross-entropy (its backward the gradient `ops::cross_entropy` computes with the loss).

use super::var::{rule, when, Var};
use crate::error::{Error, Result};
use crate::ops;
use crate::shape::attention_shapes;
use crate::tensor::Tensor;

impl Var {
    /// `softmax(q k^T / sqrt(D), causal) v` per head, as `ops::attention`, composed of
    /// recorded ops (scaled batched matmul, causal softmax, matmul) so that its backward is
    /// theirs. q (H, Tq, D), k, v (H, Tk, D) with `past + Tq <= Tk` -> (H, Tq, D).
    pub fn attention(q: &Var, k: &Var, v: &Var, past: usize) -> Result<Var> {
        let (_, _, _, d) = attention_shapes("attention", q.shape(), k.shape(), v.shape(), past)?;
        let scores = q.matmul(&k.transpose(1, 2)?)?.scale(1.0 / (d as f32).sqrt())?; // (H, Tq, Tk)
        scores.softmax_last(Some(past))?.matmul(v) // (H, Tq, D)
    }

    /// `wte[ids[t]] + wpe[pos_offset + t]` (`ops::embedding`). wte (V, C), wpe (P, C) ->
    /// (T, C). dwte sums the rows of dL/d out by token id, dwpe places them at their positions.
    pub fn embedding(wte: &Var, wpe: &Var, ids: &[u32], pos_offset: usize) -> Result<Var> {
        Var::record("embedding", &[wte, wpe], |t| {
            let y = ops::embedding(t[0], t[1], ids, pos_offset)?;
            let (v, p) = (t[0].shape()[0], t[1].shape()[0]);
            let ids = ids.to_vec();
            let positions: Vec<u32> = (0..ids.len()).map(|i| (pos_offset + i) as u32).collect();
            Ok((
                y,
                rule(move |g, need| {
                    let dwte = when(need[0], || ops::embedding_backward(g, &ids, v))?;
                    let dwpe = when(need[1], || ops::embedding_backward(g, &positions, p))?;
                    Ok(vec![dwte, dwpe])
                }),
            ))
        })
    }

    /// [`Var::embedding`] over `batch` rows of `ids` (row after row, positions restarting
    /// at 0 in each): wte (V, C), wpe (P, C) -> (rows T, C). The backward sums every row's
    /// gradient into dwte by token id and into dwpe by position.
    pub fn embedding_rows(wte: &Var, wpe: &Var, ids: &[u32], batch: usize) -> Result<Var> {
        let op = "embedding_rows";
        if batch == 0 || ids.len() % batch != 0 {
            return Err(Error::value(
                op,
                "batch",
                format!("a positive divisor of the {} ids", ids.len()),
                batch,
            ));
        }
        let t = ids.len() / batch;
        Var::record(op, &[wte, wpe], |w| {
            let rows = ids
                .chunks(t.max(1))
                .map(|row| ops::embedding(w[0], w[1], row, 0))
                .collect::<Result<Vec<_>>>()?;
            let y = match rows.as_slice() {
                [one] => one.clone(),
                _ => ops::cat(&rows.iter().collect::<Vec<_>>(), 0)?,
            };
            let (v, p) = (w[0].shape()[0], w[1].shape()[0]);
            let ids = ids.to_vec();
            let positions: Vec<u32> = (0..ids.len()).map(|i| (i % t.max(1)) as u32).collect();
            Ok((
                y,
                rule(move |g, need| {
                    let dwte = when(need[0], || ops::embedding_backward(g, &ids, v))?;
                    let dwpe = when(need[1], || ops::embedding_backward(g, &positions, p))?;
                    Ok(vec![dwte, dwpe])
                }),
            ))
        })
    }

    /// The mean softmax cross-entropy of logits (R, V) against `targets` (R class indices),
    /// from `ops::cross_entropy`, whose gradient of the mean is the backward. -> ().
    pub fn cross_entropy(&self, targets: &[u32]) -> Result<Var> {
        Var::record("cross_entropy", &[self], |t| {
            let ce = ops::cross_entropy(t[0], targets)?;
            let rows = t[0].shape()[0].max(1);
            let scale = Tensor::full(t[0].context(), &[], 1.0 / rows as f32)?;
            let loss = ops::mul(&ops::sum_last(&ce.loss)?, &scale)?; // ()
            let grad = ce.grad; // (R, V): d mean / d logits
            Ok((
                loss,
                rule(move |g, need| Ok(vec![when(need[0], || ops::mul(&grad, g))?])),
            ))
        })
    }
}
