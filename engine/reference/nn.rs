//! Reference neural-network ops (GELU, softmax, layer norm, argmax, embedding, attention),
//! computed in f64 and rounded once to f32.

use ndarray::{s, ArrayD, ArrayViewD, Axis, IxDyn};

use crate::error::{Error, Result};
use crate::shape::{attention_shapes, embedding_shapes};

/// `sqrt(2 / pi)`, the constant of the tanh form of GELU.
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;

/// GELU, tanh form: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
pub fn gelu_scalar(x: f64) -> f64 {
    0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)).tanh())
}

/// GELU (tanh form) elementwise. x (...) -> (...).
pub fn gelu(x: &ArrayViewD<f32>) -> ArrayD<f32> {
    x.mapv(|v| gelu_scalar(v as f64) as f32)
}

/// Applies `f` to every row (last axis) of `x`, the row index within the last-but-one axis
/// passed along (0 for rank 1).
fn map_rows(x: &ArrayViewD<f32>, mut f: impl FnMut(usize, &[f64], &mut [f32])) -> ArrayD<f32> {
    let mut out = ArrayD::zeros(x.raw_dim());
    if x.ndim() == 0 {
        return out;
    }
    let cols = x.shape()[x.ndim() - 1];
    let per_matrix = if x.ndim() >= 2 { x.shape()[x.ndim() - 2] } else { 1 };
    let last = Axis(x.ndim() - 1);
    for (r, (row, mut o)) in x.lanes(last).into_iter().zip(out.lanes_mut(last)).enumerate() {
        let v: Vec<f64> = row.iter().map(|&e| e as f64).collect();
        let mut buf = vec![0f32; cols];
        f(r % per_matrix.max(1), &v, &mut buf);
        o.iter_mut().zip(buf).for_each(|(o, b)| *o = b);
    }
    out
}

/// Softmax over the last axis. With `causal = Some(past)`, row i of the last-but-one axis
/// sees columns `0..=past + i` and the rest come out 0. x (..., n) -> (..., n).
pub fn softmax_last(x: &ArrayViewD<f32>, causal: Option<usize>) -> ArrayD<f32> {
    map_rows(x, |i, row, out| {
        let visible = causal.map_or(row.len(), |p| p.saturating_add(i + 1).min(row.len()));
        let max = row[..visible].iter().cloned().fold(f64::MIN, f64::max);
        let sum: f64 = row[..visible].iter().map(|v| (v - max).exp()).sum();
        for (c, o) in out.iter_mut().enumerate() {
            *o = if c < visible {
                ((row[c] - max).exp() / sum) as f32
            } else {
                0.0
            };
        }
    })
}

/// Layer norm over the last axis: `(x - mean) / sqrt(var + eps) * gamma + beta` with the
/// biased variance. x (..., n), gamma (n,), beta (n,) -> (..., n).
///
/// Errors: x of rank 0, gamma or beta of a shape other than (n,), eps negative or not finite.
pub fn layer_norm(
    x: &ArrayViewD<f32>,
    gamma: &ArrayViewD<f32>,
    beta: &ArrayViewD<f32>,
    eps: f32,
) -> Result<ArrayD<f32>> {
    const OP: &str = "reference::nn::layer_norm";
    let Some(&n) = x.shape().last() else {
        return Err(Error::shape(OP, "x", "rank >= 1", x.shape()));
    };
    for (name, t) in [("gamma", gamma), ("beta", beta)] {
        if t.shape() != [n] {
            return Err(Error::shape(OP, name, format!("[{n}] (the last axis of x)"), t.shape()));
        }
    }
    if !(eps >= 0.0 && eps.is_finite()) {
        return Err(Error::value(OP, "eps", "a finite value >= 0", eps));
    }
    let g: Vec<f64> = gamma.iter().map(|&v| v as f64).collect();
    let b: Vec<f64> = beta.iter().map(|&v| v as f64).collect();
    Ok(map_rows(x, |_, row, out| {
        let n = row.len() as f64;
        let mean = row.iter().sum::<f64>() / n;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        let rstd = 1.0 / (var + eps as f64).sqrt();
        for (c, o) in out.iter_mut().enumerate() {
            *o = ((row[c] - mean) * rstd * g[c] + b[c]) as f32;
        }
    }))
}

/// The backward of [`layer_norm`] (or with `rms` of [`rms_norm`], gamma its weight) from
/// dL/dy `g` (x's shape), in f64 per row: with xhat = (x - mean) rstd and dxhat = g gamma,
/// dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)); for `rms` mean = 0, rstd =
/// 1 / sqrt(mean(x^2) + eps) and no mean(dxhat) term. Also g xhat, whose column sums are
/// dL/dgamma. x, g (..., n), gamma (n,) -> (dx, g xhat), both (..., n).
pub fn norm_backward(
    x: &ArrayViewD<f32>,
    gamma: &ArrayViewD<f32>,
    g: &ArrayViewD<f32>,
    eps: f32,
    rms: bool,
) -> Result<(ArrayD<f32>, ArrayD<f32>)> {
    const OP: &str = "reference::nn::norm_backward";
    let Some(&n) = x.shape().last() else {
        return Err(Error::shape(OP, "x", "rank >= 1", x.shape()));
    };
    if gamma.shape() != [n] {
        return Err(Error::shape(
            OP,
            "gamma",
            format!("[{n}] (the last axis of x)"),
            gamma.shape(),
        ));
    }
    if g.shape() != x.shape() {
        return Err(Error::mismatch(OP, "x", x.shape(), "g", g.shape()));
    }
    let gm: Vec<f64> = gamma.iter().map(|&v| v as f64).collect();
    let grows: Vec<Vec<f64>> = g
        .lanes(Axis(g.ndim() - 1))
        .into_iter()
        .map(|r| r.iter().map(|&v| v as f64).collect())
        .collect();
    let mut gxhat = ArrayD::zeros(x.raw_dim());
    let mut lanes = gxhat.lanes_mut(Axis(x.ndim() - 1)).into_iter();
    let mut row_index = 0;
    let dx = map_rows(x, |_, row, out| {
        let len = row.len() as f64;
        let mean = if rms { 0.0 } else { row.iter().sum::<f64>() / len };
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / len;
        let rstd = 1.0 / (var + eps as f64).sqrt();
        let gr = &grows[row_index];
        row_index += 1;
        let xhat: Vec<f64> = row.iter().map(|v| (v - mean) * rstd).collect();
        let dxhat: Vec<f64> = gr.iter().zip(&gm).map(|(g, w)| g * w).collect();
        let m1 = if rms { 0.0 } else { dxhat.iter().sum::<f64>() / len };
        let m2 = dxhat.iter().zip(&xhat).map(|(d, h)| d * h).sum::<f64>() / len;
        for (c, o) in out.iter_mut().enumerate() {
            *o = (rstd * (dxhat[c] - m1 - xhat[c] * m2)) as f32;
        }
        if let Some(mut lane) = lanes.next() {
            for (c, o) in lane.iter_mut().enumerate() {
                *o = (gr[c] * xhat[c]) as f32;
            }
        }
    });
    drop(lanes);
    Ok((dx, gxhat))
}

/// `x / sqrt(mean(x^2) + eps) * weight` over the last axis, in f64. x (..., n), weight (n,).
pub fn rms_norm(x: &ArrayViewD<f32>, weight: &ArrayViewD<f32>, eps: f32) -> Result<ArrayD<f32>> {
    const OP: &str = "reference::nn::rms_norm";
    let Some(&n) = x.shape().last() else {
        return Err(Error::shape(OP, "x", "rank >= 1", x.shape()));
    };
    if weight.shape() != [n] {
        return Err(Error::shape(
            OP,
            "weight",
            format!("[{n}] (the last axis of x)"),
            weight.shape(),
        ));
    }
    if !(eps >= 0.0 && eps.is_finite()) {
        return Err(Error::value(OP, "eps", "a finite value >= 0", eps));
    }
    let w: Vec<f64> = weight.iter().map(|&v| v as f64).collect();
    Ok(map_rows(x, |_, row, out| {
        let ms = row.iter().map(|v| v * v).sum::<f64>() / row.len() as f64;
        let rstd = 1.0 / (ms + eps as f64).sqrt();
        for (c, o) in out.iter_mut().enumerate() {
            *o = (row[c] * rstd * w[c]) as f32;
        }
    }))
}

/// Rotary position embedding of x (T, heads, D) dense with cos, sin (T, D), in f64:
/// `x cos + R x sin`, R the rotate-half map ((R x)_j = -x_{j + D/2} for j < D/2, else
/// x_{j - D/2}); with `adjoint`, its adjoint `x cos + R^T (x sin)` (R^T = -R).
pub fn rope(x: &[f32], cos: &[f32], sin: &[f32], [t, heads, d]: [usize; 3], adjoint: bool) -> Vec<f32> {
    let h2 = d / 2;
    (0..t * heads * d)
        .map(|i| {
            let (j, row) = (i % d, i / (heads * d));
            let (partner, jp, sign) = if j < h2 {
                (i + h2, j + h2, -1.0)
            } else {
                (i - h2, j - h2, 1.0)
            };
            let at = |v: &[f32], k: usize| v[k] as f64;
            let rotated = match adjoint {
                false => sign * at(x, partner) * at(sin, row * d + j),
                true => -sign * at(x, partner) * at(sin, row * d + jp),
            };
            (at(x, i) * at(cos, row * d + j) + rotated) as f32
        })
        .collect()
}

/// Index of the largest of `xs` under the engine's one argmax rule (torch's): NaN is larger
/// than every number and the first NaN wins; -0.0 equals +0.0; the first index wins a tie.
/// 0 for an empty sequence. The GPU kernel (`shaders/ops/argmax.wgsl`) and GPT-2's greedy
/// pick follow the same rule.
pub fn argmax_index(xs: impl IntoIterator<Item = f32>) -> usize {
    let mut best: Option<(usize, f32)> = None;
    for (i, v) in xs.into_iter().enumerate() {
        let better = match best {
            None => true,
            Some((_, b)) => !b.is_nan() && (v.is_nan() || v > b),
        };
        if better {
            best = Some((i, v));
        }
    }
    best.map_or(0, |(i, _)| i)
}

/// Index of the largest element of each row as f32, under [`argmax_index`]'s rule (NaN wins,
/// first index on ties). x (..., n) -> (...).
pub fn argmax_last(x: &ArrayViewD<f32>) -> ArrayD<f32> {
    let last = Axis(x.ndim().saturating_sub(1));
    x.map_axis(last, |row| argmax_index(row.iter().copied()) as f32)
}

/// `wte[ids[t]] + wpe[pos_offset + t]`. wte (V, C), wpe (P, C) -> (T, C).
pub fn embedding(wte: &ArrayViewD<f32>, wpe: &ArrayViewD<f32>, ids: &[u32], pos_offset: usize) -> Result<ArrayD<f32>> {
    let op = "reference::embedding";
    let (v, c, p) = embedding_shapes(op, wte.shape(), wpe.shape())?;
    if pos_offset.checked_add(ids.len()).is_none_or(|end| end > p) {
        return Err(Error::value(
            op,
            "pos_offset",
            format!("pos_offset + {} tokens <= {p} positions of wpe", ids.len()),
            pos_offset,
        ));
    }
    if let Some(bad) = ids.iter().find(|&&id| id as usize >= v) {
        return Err(Error::value(
            op,
            "ids",
            format!("token ids below the vocabulary size {v}"),
            bad,
        ));
    }
    let mut out = ArrayD::zeros(IxDyn(&[ids.len(), c]));
    for (t, &id) in ids.iter().enumerate() {
        let w = wte.slice(s![id as usize, ..]);
        let p = wpe.slice(s![pos_offset + t, ..]);
        for j in 0..c {
            out[[t, j]] = (w[j] as f64 + p[j] as f64) as f32;
        }
    }
    Ok(out)
}

/// The embedding's backward: row r of the result sums the rows t of `grad` with
/// `ids[t] = r` (f64 accumulation). grad (T, C) -> (rows, C).
pub fn embedding_backward(grad: &ArrayViewD<f32>, ids: &[u32], rows: usize) -> Result<ArrayD<f32>> {
    let op = "reference::embedding_backward";
    if grad.ndim() != 2 || grad.shape()[0] != ids.len() {
        return Err(Error::shape(
            op,
            "grad",
            format!("(T, C) with T = {} ids", ids.len()),
            grad.shape(),
        ));
    }
    if let Some(bad) = ids.iter().find(|&&id| id as usize >= rows) {
        return Err(Error::value(op, "ids", format!("row indices below {rows}"), bad));
    }
    let c = grad.shape()[1];
    let mut acc = vec![0f64; rows * c];
    for (t, &id) in ids.iter().enumerate() {
        for j in 0..c {
            acc[id as usize * c + j] += grad[[t, j]] as f64;
        }
    }
    let out: Vec<f32> = acc.into_iter().map(|v| v as f32).collect();
    ArrayD::from_shape_vec(IxDyn(&[rows, c]), out).map_err(|e| Error::value(op, "grad", "a (rows, C) result", e))
}

/// Causal scaled dot-product attention per head: `softmax(q k^T / sqrt(D), causal past) v`.
/// q (H, Tq, D), k (H, Tk, D), v (H, Tk, D) -> (H, Tq, D).
pub fn attention(q: &ArrayViewD<f32>, k: &ArrayViewD<f32>, v: &ArrayViewD<f32>, past: usize) -> Result<ArrayD<f32>> {
    let (h, tq, _, d) = attention_shapes("reference::attention", q.shape(), k.shape(), v.shape(), past)?;
    let scale = 1.0 / (d as f64).sqrt();
    let mut out = ArrayD::zeros(IxDyn(&[h, tq, d]));
    for hh in 0..h {
        for i in 0..tq {
            let visible = past + i + 1;
            let scores: Vec<f64> = (0..visible)
                .map(|j| (0..d).map(|e| q[[hh, i, e]] as f64 * k[[hh, j, e]] as f64).sum::<f64>() * scale)
                .collect();
            let max = scores.iter().cloned().fold(f64::MIN, f64::max);
            let w: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let sum: f64 = w.iter().sum();
            for e in 0..d {
                let acc: f64 = (0..visible).map(|j| w[j] * v[[hh, j, e]] as f64).sum();
                out[[hh, i, e]] = (acc / sum) as f32;
            }
        }
    }
    Ok(out)
}

/// Softmax cross-entropy per row and the gradient of the mean over rows:
/// logits (R, V), targets (R) -> (loss (R), dlogits (R, V)).
///
/// Errors: targets not one per row, or a target not below V.
pub fn cross_entropy(
    logits: &ndarray::ArrayView2<f32>,
    targets: &[u32],
) -> Result<(ndarray::Array1<f32>, ndarray::Array2<f32>)> {
    const OP: &str = "reference::nn::cross_entropy";
    let (rows, cols) = logits.dim();
    if targets.len() != rows {
        return Err(Error::value(
            OP,
            "targets",
            format!("{rows} indices (one per logits row)"),
            targets.len(),
        ));
    }
    if let Some((i, &t)) = targets.iter().enumerate().find(|(_, &t)| t as usize >= cols) {
        return Err(Error::value(
            OP,
            "targets",
            format!("class indices below V = {cols}"),
            format!("{t} at [{i}]"),
        ));
    }
    let mut loss = ndarray::Array1::zeros(rows);
    let mut grad = ndarray::Array2::zeros(logits.raw_dim());
    for (r, row) in logits.outer_iter().enumerate() {
        let m = row.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x as f64));
        let sum: f64 = row.iter().map(|&x| (x as f64 - m).exp()).sum();
        let t = targets[r] as usize;
        loss[r] = (m + sum.ln() - row[t] as f64) as f32;
        for (c, &x) in row.iter().enumerate() {
            let p = (x as f64 - m).exp() / sum - if c == t { 1.0 } else { 0.0 };
            grad[[r, c]] = (p / rows as f64) as f32;
        }
    }
    Ok((loss, grad))
}
