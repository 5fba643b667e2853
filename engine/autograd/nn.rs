//! Network ops on variables: causal attention (composed of recorded ops, or from a packed
//! q | k | v projection with its backward written by hand), a table's rows by
//! id (`gather_rows`) and the token + position embedding of one sequence or of a batch of
//! rows (their backward a scatter-add, `ops::embedding_backward`, or over ids on the device
//! the linked-list kernels of `ops::embedding`; a batch's positions by a column sum), softmax cross-entropy
//! (its backward the gradient `ops::cross_entropy` computes with the loss), and a tied
//! output head fused with the cross-entropy in row blocks (`head_cross_entropy`).

use super::autocast::{operand, product_dtype};
use super::var::{rule, when, Var};
use crate::error::{Error, Result};
use crate::expr::Binary;
use crate::ops::matmul::{matmul_accumulate, matmul_scaled};
use crate::ops::{self, Ids};
use crate::shape::attention_shapes;
use crate::shape::{DType, Layout};
use crate::tensor::Tensor;

/// About the bytes of one block's logits in [`Var::head_cross_entropy`] (64 MiB: a few
/// hundred rows of GPT-2's 50257-token vocabulary).
pub const HEAD_BLOCK_BYTES: usize = 64 << 20;

/// How much larger [`Var::head_cross_entropy`] makes the logits' gradient for its backward
/// products inside `autocast(F16)`: 2^15, so |softmax - onehot| <= 1 stays finite in F16 and
/// the gradient of a mean over thousands of rows stays above F16's smallest normal value.
const HEAD_F16_GRADIENT_SCALE: f32 = 32768.0;

/// dL/d wpe (P, C) of `batch` rows of `t` positions each from g = dL/d out (batch t, C):
/// position j's row sums g's rows j, t + j, 2 t + j, ... from +0 in that order (the order of
/// `ops::embedding_backward` over the positions; past 64 rows, `sum_columns` sums chunks of 64
/// first), rows past t zero. Device ops only (a column sum, a fill, a copy): no upload, so a
/// compiled step can hold it.
fn positions_backward(g: &Tensor, batch: usize, t: usize, p: usize) -> Result<Tensor> {
    let c = g.shape()[1];
    // The B rows' gradients summed position by position, in row order: one column sum.
    let acc = ops::reduce::sum_columns(&g.contiguous()?.reshape(&[batch, t * c])?)?.reshape(&[t, c])?;
    let out = Tensor::zeros(g.context(), &[p, c])?;
    ops::copy_into(&out.narrow(0, 0, t)?, &acc)?;
    Ok(out)
}

impl Var {
    /// `softmax(q k^T / sqrt(D), causal) v` per head, as `ops::attention`, composed of
    /// recorded ops (scaled batched matmul, causal softmax, matmul) so that its backward is
    /// theirs. q (H, Tq, D), k, v (H, Tk, D) with `past + Tq <= Tk` -> (H, Tq, D).
    pub fn attention(q: &Var, k: &Var, v: &Var, past: usize) -> Result<Var> {
        let (_, _, _, d) = attention_shapes("attention", q.shape(), k.shape(), v.shape(), past)?;
        Var::composite("attention", || {
            let scores = q.matmul(&k.transpose(1, 2)?)?.scale(1.0 / (d as f32).sqrt())?; // (H, Tq, Tk)
            scores.softmax_last(Some(past))?.matmul(v) // (H, Tq, D)
        })
    }

    /// Causal self-attention from a packed projection: qkv (B T, 3C) holds each position's
    /// q, k and v side by side (GPT-2's `c_attn` output), `batch` rows of T positions, C =
    /// `heads` D -> (B T, C): `softmax(q k^T / sqrt(D), causal) v` per row and head, the
    /// heads side by side. The products, scale and softmax of [`Var::attention`], with the
    /// backward written out so that q, k and v are strided views of qkv going in and dq, dk
    /// and dv are written into one (B T, 3C) gradient: the tape's views copied q, k and v
    /// forward and, backward, copied each gradient twice into a zero-filled (B T, 3C) tensor
    /// and added the three. Inside [`super::autocast`] the products read half operands, as
    /// `matmul`'s do.
    pub fn packed_attention(qkv: &Var, batch: usize, heads: usize) -> Result<Var> {
        let op = "packed_attention";
        let &[rows, c3] = qkv.shape() else {
            return Err(Error::shape(op, "qkv", "(B T, 3C)", qkv.shape()));
        };
        if c3 == 0 || c3 % 3 != 0 || heads == 0 || (c3 / 3) % heads != 0 {
            return Err(Error::shape(
                op,
                "qkv",
                format!("(B T, 3C) with C a multiple of heads = {heads}"),
                qkv.shape(),
            ));
        }
        if batch == 0 || rows == 0 || rows % batch != 0 {
            return Err(Error::shape(
                op,
                "qkv",
                format!("(B T, 3C) with B = batch = {batch} rows of T > 0"),
                qkv.shape(),
            ));
        }
        let c = c3 / 3;
        let dims = (batch, rows / batch, heads, c / heads);
        let scale = 1.0 / (dims.3 as f32).sqrt();
        Var::record(op, &[qkv], |t| {
            let dtype = product_dtype();
            // In the products' dtype once (one conversion, not one per view), then q, k, v
            // as views of it.
            let x = operand(&t[0].contiguous()?, dtype)?; // (B T, 3C)
            let [q, k, v] = [0, 1, 2].map(|j| head_view(&x, j, dims)); // (B, H, T, D) views

            // The scale rides in the products' epilogue: no pass over the (B, H, T, T) scores.
            let s = matmul_scaled(&q, &k.transpose(2, 3)?, scale)?; // (B, H, T, T)
            let p = ops::softmax_last(&s, Some(0))?;
            let pp = operand(&p, dtype)?;
            let y = ops::matmul(&pp, &v)?.transpose(1, 2)?.reshape(&[rows, c])?; // (B T, C)
            let ctx = x.context().clone();
            Ok((
                y,
                rule(move |g, need| {
                    Ok(vec![when(need[0], || {
                        let (b, t, h, d) = dims;
                        let gy = operand(&g.contiguous()?.reshape(&[b, t, h, d])?.transpose(1, 2)?, dtype)?; // (B, H, T, D)
                        let dv = ops::matmul(&pp.transpose(2, 3)?, &gy)?;
                        let dp = ops::matmul(&gy, &v.transpose(2, 3)?)?; // (B, H, T, T)
                        let ds = operand(&ops::softmax_backward(&p, &dp)?, dtype)?; // dL/ds / scale
                        let dq = matmul_scaled(&ds, &k, scale)?;
                        let dk = matmul_scaled(&ds.transpose(2, 3)?, &q, scale)?;
                        let out = Tensor::uninit(&ctx, &[b * t, 3 * c], op)?; // (B T, 3C), every element written
                        for (j, dj) in [dq, dk, dv].iter().enumerate() {
                            ops::copy_into(&head_view(&out, j, dims), dj)?;
                        }
                        Ok(out)
                    })?])
                }),
            ))
        })
    }

    /// Rotary position embedding (`ops::rope`): x (T, heads, D), cos and sin (T, D)
    /// constants -> (T, heads, D). dx = `ops::rope_adjoint(g, cos, sin)`.
    pub fn rope(&self, cos: &Tensor, sin: &Tensor) -> Result<Var> {
        Var::record("rope", &[self], |t| {
            let y = ops::rope(t[0], cos, sin)?;
            let (cos, sin) = (cos.clone(), sin.clone());
            Ok((
                y,
                rule(move |g, need| Ok(vec![when(need[0], || ops::rope_adjoint(g, &cos, &sin))?])),
            ))
        })
    }

    /// SwiGLU's gate `silu(gate) * up` (`ops::swiglu`), composed of the tape's ops.
    pub fn swiglu(gate: &Var, up: &Var) -> Result<Var> {
        Var::composite("swiglu", || gate.mul(&gate.sigmoid()?)?.mul(up))
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

    /// The rows `table[ids[t]]` (a token embedding without positions: `ops::embedding` with
    /// a zero position table). table (V, C), T ids below V -> (T, C). The backward sums the
    /// rows of dL/d out into d table by id (`ops::embedding_backward`).
    pub fn gather_rows(table: &Var, ids: &[u32]) -> Result<Var> {
        let op = "gather_rows";
        if table.shape().len() != 2 {
            return Err(Error::shape(op, "table", "(V, C)", table.shape()));
        }
        Var::record(op, &[table], |t| {
            let (v, c) = (t[0].shape()[0], t[0].shape()[1]);
            let zero = Tensor::zeros(t[0].context(), &[ids.len().max(1), c])?; // (T, C)
            let y = ops::embedding(t[0], &zero, ids, 0)?;
            let ids = ids.to_vec();
            Ok((
                y,
                rule(move |g, need| Ok(vec![when(need[0], || ops::embedding_backward(g, &ids, v))?])),
            ))
        })
    }

    /// [`Var::embedding`] over `batch` rows of `ids` (row after row, positions restarting
    /// at 0 in each): wte (V, C), wpe (P, C) -> (rows T, C). The backward sums every row's
    /// gradient into dwte by token id and into dwpe by position. `ids` are a host slice or a
    /// (B T,) tensor written by `Tensor::write_ids` ([`Ids`]): with ids on the device nothing
    /// is uploaded, so a compiled step (`train::CompiledStep`) can hold the op, and the
    /// gradients are the host path's bits.
    pub fn embedding_rows<'i>(wte: &Var, wpe: &Var, ids: impl Into<Ids<'i>>, batch: usize) -> Result<Var> {
        let op = "embedding_rows";
        let ids: Ids = ids.into();
        let n = ids.len();
        if n == 0 {
            return Err(Error::value(op, "ids", "at least one id", 0));
        }
        if batch == 0 || !n.is_multiple_of(batch) {
            return Err(Error::value(
                op,
                "batch",
                format!("a positive divisor of the {n} ids"),
                batch,
            ));
        }
        if let Ids::Device(t) = ids {
            Ids::check_device(t, wte.tensor().context(), op, "ids")?;
        }
        let t = n / batch;
        Var::record(op, &[wte, wpe], |w| {
            let y = ops::embedding::embedding_rows(w[0], w[1], &ids, t)?; // (B T, C), one launch
            let (v, p) = (w[0].shape()[0], w[1].shape()[0]);
            // The ids as the forward read them: the caller may write the next batch's into
            // the same tensor before this backward runs (a copy is a kernel: a plan holds it).
            let ids = match ids {
                Ids::Host(h) => Ok(h.to_vec()),
                Ids::Device(d) => {
                    let snapshot = Tensor::uninit(d.context(), &[n], op)?;
                    ops::copy_into(&snapshot, d)?;
                    Err(snapshot)
                }
            };
            Ok((
                y,
                rule(move |g, need| {
                    let dwte = when(need[0], || match &ids {
                        Ok(h) => ops::embedding_backward(g, h, v),
                        Err(d) => ops::embedding::embedding_backward_of(g, d, v),
                    })?;
                    let dwpe = when(need[1], || positions_backward(g, batch, t, p))?;
                    Ok(vec![dwte, dwpe])
                }),
            ))
        })
    }

    /// The mean softmax cross-entropy of the logits `x w^T` against `targets`, where w
    /// (V, C) is an output embedding (GPT-2's tied head), without the logits ever held
    /// whole: the rows go through in blocks of `block` rows (None: a multiple of 64 whose
    /// logits stay near [`HEAD_BLOCK_BYTES`]), and
    /// each block's gradients of x and w are taken as it passes (the logits' gradient is
    /// known once their softmax is), so the forward keeps dL/dx (R, C) and dL/dw (V, C) in
    /// place of two (R, V) tensors (the softmax and its gradient). The same products and sums
    /// as `x.matmul(&w.transpose(0, 1)?)?.cross_entropy(targets)`, blocked.
    /// x (R, C), w (V, C), R targets below V -> (). The targets are a host slice or an (R,)
    /// tensor written by `Tensor::write_ids` ([`Ids`]; on the device nothing is uploaded).
    pub fn head_cross_entropy<'i>(x: &Var, w: &Var, targets: impl Into<Ids<'i>>, block: Option<usize>) -> Result<Var> {
        let op = "head_cross_entropy";
        let targets: Ids = targets.into();
        if let Ids::Device(t) = targets {
            Ids::check_device(t, x.tensor().context(), op, "targets")?;
        }
        let (xs, ws) = (x.shape().to_vec(), w.shape().to_vec());
        if xs.len() != 2 || ws.len() != 2 || xs[1] != ws[1] {
            return Err(Error::value(
                op,
                "x, w",
                "x (R, C) and w (V, C) with one C",
                format!("x {xs:?}, w {ws:?}"),
            ));
        }
        let (rows, v) = (xs[0], ws[0]);
        if targets.len() != rows {
            return Err(Error::value(
                op,
                "targets",
                format!("{rows} indices (one per row of x)"),
                targets.len(),
            ));
        }
        let wants = (x.is_variable(), w.is_variable());
        // Inside `autocast` the three products read their operands in its dtype (below).
        let dtype = product_dtype();
        // Rows per block: a multiple of 64 with its (block, V) logits near the byte bound.
        let block = match block {
            Some(0) => return Err(Error::value(op, "block", "at least 1 row", 0)),
            Some(b) => b,
            // F16 products go to the matrix units, whose staged kernel takes 256-row tiles.
            None => {
                let unit = if dtype == Some(DType::F16) { 256 } else { 64 };
                ((HEAD_BLOCK_BYTES / (4 * v.max(1))) / unit * unit).clamp(unit.min(64), rows.max(64))
            }
        };
        Var::record(op, &[x, w], |t| {
            let (x, w) = (t[0], t[1]);
            // The logits' gradient, (softmax - onehot) / R, is mostly below F16's normal
            // range, so for F16 products it is made H times larger and dx, dw are scaled back
            // by 1 / H below (H = 2^15 keeps |softmax - onehot| <= 1 finite in F16).
            // w^T with zero columns up to Vp, a multiple of 64 (C, Vp): every product below
            // then loads vec4s (GPT-2's V = 50257 is odd), and dx's, whose output is one
            // block's few tiles over a K of Vp, can split K (`ops::matmul`'s split-K). For
            // F16 products (the matrix units) a multiple of 512, so that K splits into 32
            // slices of a multiple of 16.
            let unit = if dtype == Some(DType::F16) { 512 } else { 64 };
            let (ctx, c, vp) = (x.context(), w.shape()[1], v.next_multiple_of(unit));
            let wt = Tensor::zeros(ctx, &[c, vp])?;
            ops::copy_into(&wt.narrow(1, 0, v)?, &w.transpose(0, 1)?)?;
            let h = if dtype == Some(DType::F16) {
                HEAD_F16_GRADIENT_SCALE
            } else {
                1.0
            };
            let wt = operand(&wt, dtype)?;
            let (mut total, mut dx_blocks, mut dw) = (None::<Tensor>, vec![], None::<Tensor>);
            for start in (0..rows).step_by(block) {
                let end = (start + block).min(rows);
                let xb = operand(&x.narrow(0, start, end)?, dtype)?; // (rb, C)
                let logits = ops::matmul(&xb, &wt)?; // (rb, Vp), the padding's columns 0
                let block_ids;
                let block_targets = match targets {
                    Ids::Host(h) => Ids::Host(&h[start..end]),
                    Ids::Device(d) => {
                        block_ids = Ids::device_range(d, start, end)?;
                        Ids::Device(&block_ids)
                    }
                };
                // The losses (rb,) and d(mean over all rows)/d logits (rb, Vp), its padding
                // columns 0 like wt's: one launch over the padded tile, no copy of either.
                let (losses, g) = ops::cross_entropy::cross_entropy_padded(&logits, v, block_targets, h / rows as f32)?;
                drop(logits);
                let g = operand(&g, dtype)?; // (rb, Vp), H times d(mean)/d logits
                let sum = ops::sum_last(&losses)?; // ()
                total = Some(match total {
                    Some(t) => ops::add(&t, &sum)?,
                    None => sum,
                });
                if !(wants.0 || wants.1) {
                    continue;
                }
                if wants.0 {
                    dx_blocks.push(ops::matmul(&g, &wt.transpose(0, 1)?)?); // (rb, C)
                }
                if wants.1 {
                    // dw in w's own (V, C) orientation, each block's product added to the
                    // running sum in its epilogue: no (C, Vp) transpose copy and no adds.
                    let gt = g.transpose(0, 1)?; // (Vp, rb) view
                    dw = Some(match dw {
                        Some(acc) => matmul_accumulate(&gt, &xb, &acc)?,
                        None => ops::matmul(&gt, &xb)?,
                    }); // (Vp, C)
                }
            }
            // The first V rows of (Vp, C): a dense view, no copy.
            let dw = dw.map(|d| d.narrow(0, 0, v)).transpose()?; // (V, C)
            let loss = match total {
                Some(t) => ops::binary_scalar(Binary::Mul, &t, 1.0 / rows as f32)?,
                None => Tensor::zeros(x.context(), &[])?,
            };
            let dx = match dx_blocks.as_slice() {
                [] => None,
                [one] => Some(one.clone()),
                many => Some(ops::cat(&many.iter().collect::<Vec<_>>(), 0)?),
            };
            Ok((
                loss,
                rule(move |g, need| {
                    // dx and dw were taken H times larger (F16 products, above).
                    let g = &if h == 1.0 {
                        g.clone()
                    } else {
                        ops::binary_scalar(Binary::Mul, g, 1.0 / h)?
                    };
                    let scale = |d: &Option<Tensor>, want: bool| -> Result<Option<Tensor>> {
                        match (d, want) {
                            (Some(d), true) => Ok(Some(ops::mul(d, g)?)),
                            _ => Ok(None),
                        }
                    };
                    Ok(vec![scale(&dx, need[0])?, scale(&dw, need[1])?])
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

/// Part j (0: q, 1: k, 2: v) of a dense (B T, 3C) tensor as (B, H, T, D), a view (no copy).
fn head_view(x: &Tensor, j: usize, (b, t, h, d): (usize, usize, usize, usize)) -> Tensor {
    let c = h * d;
    x.with_layout(Layout {
        shape: vec![b, h, t, d],
        strides: vec![t * 3 * c, d, 3 * c, 1],
        offset: x.layout().offset + j * c,
    })
}
