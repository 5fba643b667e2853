//! f64 reference of the minGRU mixers ([`crate::mixer`]): the plain sequential recurrence in
//! linear space with every step's transition written out, forward and backward (backprop
//! through time). It shares nothing with the GPU's log-space, gate, scan-op and angle-fused
//! formulations, which is what makes it their oracle.
//!
//! Every function checks its arrays' shapes (D a positive multiple of the block size, the
//! weights agreeing with x) and fails with [`Error`] naming the argument.

use ndarray::{Array2, Array3, ArrayD, ArrayView1, ArrayView2, ArrayView3, Ix3};

use super::MixerKind;
use crate::error::{Error, Result};

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// minGRU's positive value map and its derivative.
fn g(v: f64) -> f64 {
    if v >= 0.0 {
        v + 0.5
    } else {
        sigmoid(v)
    }
}

fn g_grad(v: f64) -> f64 {
    if v >= 0.0 {
        1.0
    } else {
        sigmoid(v) * (1.0 - sigmoid(v))
    }
}

/// Cosines and sines of block n's k - 1 angles in one step row of pre.
fn turns(row: &[f64], d: usize, k: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let nb = d / k;
    let theta = &row[d + nb + n * (k - 1)..d + nb + (n + 1) * (k - 1)];
    (
        theta.iter().map(|t| t.cos()).collect(),
        theta.iter().map(|t| t.sin()).collect(),
    )
}

/// u <- R_{k-2} .. R_0 u.
fn rotate(u: &mut [f64], c: &[f64], s: &[f64]) {
    for j in 0..c.len() {
        let (x, y) = (u[j], u[j + 1]);
        u[j] = c[j] * x - s[j] * y;
        u[j + 1] = s[j] * x + c[j] * y;
    }
}

/// Reverse mode through u_out = G u: u holds u_out (left as u_in), w holds dL/du_out (left as
/// G^T w); dL/dtheta is added to dtheta.
fn rotate_vjp(u: &mut [f64], w: &mut [f64], c: &[f64], s: &[f64], dtheta: &mut [f64]) {
    for j in (0..c.len()).rev() {
        let (x, y, wx, wy) = (u[j], u[j + 1], w[j], w[j + 1]);
        dtheta[j] += wy * x - wx * y;
        u[j] = c[j] * x + s[j] * y;
        u[j + 1] = -s[j] * x + c[j] * y;
        w[j] = c[j] * wx + s[j] * wy;
        w[j + 1] = -s[j] * wx + c[j] * wy;
    }
}

/// Block n's transition A (k x k, row-major) and injection b (k) from one step row (2D).
fn step(kind: MixerKind, row: &[f64], d: usize, n: usize) -> (Vec<f64>, Vec<f64>) {
    let k = kind.block();
    match kind {
        MixerKind::MinGru => {
            let z = sigmoid(row[n]);
            (vec![1.0 - z], vec![z * g(row[d + n])])
        }
        MixerKind::SignedMinGru => {
            let a = row[n].tanh();
            (vec![a], vec![(1.0 - a * a) * row[d + n]])
        }
        MixerKind::RotationMinGru | MixerKind::GivensMinGru { .. } => {
            let lambda = sigmoid(row[d + n]);
            let (c, s) = turns(row, d, k, n);
            let mut a = vec![0.0; k * k];
            for col in 0..k {
                let mut u = vec![0.0; k];
                u[col] = 1.0;
                rotate(&mut u, &c, &s);
                for r in 0..k {
                    a[r * k + col] = lambda * u[r];
                }
            }
            let b = (0..k).map(|i| (1.0 - lambda) * row[n * k + i]).collect();
            (a, b)
        }
    }
}

/// Adds block n's dL/d row from dL/dA (k x k) and dL/db (k) of its step.
fn step_backward(kind: MixerKind, row: &[f64], d: usize, n: usize, da: &[f64], db: &[f64], drow: &mut [f64]) {
    let k = kind.block();
    match kind {
        MixerKind::MinGru => {
            let (z, v) = (sigmoid(row[n]), row[d + n]);
            drow[n] += (-da[0] + db[0] * g(v)) * z * (1.0 - z);
            drow[d + n] += db[0] * z * g_grad(v);
        }
        MixerKind::SignedMinGru => {
            let (a, v) = (row[n].tanh(), row[d + n]);
            drow[n] += (da[0] - 2.0 * a * v * db[0]) * (1.0 - a * a);
            drow[d + n] += (1.0 - a * a) * db[0];
        }
        MixerKind::RotationMinGru | MixerKind::GivensMinGru { .. } => {
            let nb = d / k;
            let lambda = sigmoid(row[d + n]);
            let (c, s) = turns(row, d, k, n);
            let mut dlambda = 0.0;
            let mut dtheta = vec![0.0; k - 1];
            for col in 0..k {
                let mut u = vec![0.0; k];
                u[col] = 1.0;
                rotate(&mut u, &c, &s);
                let mut w: Vec<f64> = (0..k).map(|r| da[r * k + col]).collect();
                dlambda += w.iter().zip(&u).map(|(w, u)| w * u).sum::<f64>();
                w.iter_mut().for_each(|w| *w *= lambda);
                rotate_vjp(&mut u, &mut w, &c, &s, &mut dtheta);
            }
            for i in 0..k {
                dlambda -= db[i] * row[n * k + i];
                drow[n * k + i] += (1.0 - lambda) * db[i];
            }
            drow[d + n] += dlambda * lambda * (1.0 - lambda);
            for (j, dt) in dtheta.iter().enumerate() {
                drow[d + nb + n * (k - 1) + j] += dt;
            }
        }
    }
}

fn dims(kind: MixerKind, pre: &ArrayView3<f64>) -> (usize, usize, usize, usize) {
    let (b, t, two_d) = pre.dim();
    let d = two_d / 2;
    (b, t, d, d / kind.block())
}

/// States h (B, T, D) from pre (B, T, 2D), h_{-1} = 0.
///
/// Errors: pre's last axis odd, or D not a positive multiple of the block size.
pub fn scan(kind: MixerKind, pre: &ArrayView3<f64>) -> Result<Array3<f64>> {
    check_pre(kind, "mixer::reference::scan", pre.shape())?;
    Ok(scan_checked(kind, pre))
}

fn scan_checked(kind: MixerKind, pre: &ArrayView3<f64>) -> Array3<f64> {
    let (bs, ts, d, nb) = dims(kind, pre);
    let k = kind.block();
    let mut h = Array3::zeros((bs, ts, d));
    for b in 0..bs {
        let mut state = vec![0.0; d];
        for t in 0..ts {
            let row = pre.slice(ndarray::s![b, t, ..]).to_vec();
            for n in 0..nb {
                let (a, inj) = step(kind, &row, d, n);
                let prev = &state[n * k..(n + 1) * k].to_vec();
                for r in 0..k {
                    state[n * k + r] = inj[r] + (0..k).map(|c| a[r * k + c] * prev[c]).sum::<f64>();
                }
            }
            for i in 0..d {
                h[[b, t, i]] = state[i];
            }
        }
    }
    h
}

/// dL/dpre (B, T, 2D) from pre (B, T, 2D) and dL/dh (B, T, D), by backprop through time:
/// g_t = dh_t + A_{t+1}^T g_{t+1}, dA_t = g_t h_{t-1}^T, db_t = g_t, then each step's local
/// derivative.
///
/// Errors: as [`scan`], and dh of another shape than (B, T, D).
pub fn scan_backward(kind: MixerKind, pre: &ArrayView3<f64>, dh: &ArrayView3<f64>) -> Result<Array3<f64>> {
    const OP: &str = "mixer::reference::scan_backward";
    let d = check_pre(kind, OP, pre.shape())?;
    check_dh(OP, pre.shape(), d, dh.shape())?;
    Ok(scan_backward_checked(kind, pre, dh))
}

/// Fails unless dh is (B, T, D) of pre (B, T, 2D).
fn check_dh(op: &'static str, pre: &[usize], d: usize, dh: &[usize]) -> Result<()> {
    let want = [pre[0], pre[1], d];
    if dh != want {
        return Err(Error::mismatch(op, "dh", dh, "(B, T, D) of pre", &want));
    }
    Ok(())
}

fn scan_backward_checked(kind: MixerKind, pre: &ArrayView3<f64>, dh: &ArrayView3<f64>) -> Array3<f64> {
    let (bs, ts, d, nb) = dims(kind, pre);
    let k = kind.block();
    let h = scan_checked(kind, pre);
    let mut dpre = Array3::zeros(pre.dim());
    for b in 0..bs {
        let mut carry = vec![0.0; d]; // A_{t+1}^T g_{t+1}
        for t in (0..ts).rev() {
            let row = pre.slice(ndarray::s![b, t, ..]).to_vec();
            let mut drow = vec![0.0; 2 * d];
            let mut next = vec![0.0; d];
            for n in 0..nb {
                let (a, _) = step(kind, &row, d, n);
                let gt: Vec<f64> = (0..k).map(|i| dh[[b, t, n * k + i]] + carry[n * k + i]).collect();
                let hp: Vec<f64> = (0..k)
                    .map(|i| if t > 0 { h[[b, t - 1, n * k + i]] } else { 0.0 })
                    .collect();
                let da: Vec<f64> = (0..k * k).map(|e| gt[e / k] * hp[e % k]).collect();
                step_backward(kind, &row, d, n, &da, &gt, &mut drow);
                for c in 0..k {
                    next[n * k + c] = (0..k).map(|r| a[r * k + c] * gt[r]).sum();
                }
            }
            carry = next;
            for (i, v) in drow.into_iter().enumerate() {
                dpre[[b, t, i]] = v;
            }
        }
    }
    dpre
}

/// A whole mixer layer: y = scan(x W_in + b_in) W_out. x (B, T, Dm), w_in (Dm, 2D),
/// b_in (2D), w_out (D, Dm) -> y (B, T, Dm).
///
/// Errors: the weights' shapes not agreeing with x and each other, or D not a positive
/// multiple of the block size.
pub fn layer(
    kind: MixerKind,
    x: &ArrayView3<f64>,
    w_in: &ArrayView2<f64>,
    b_in: &ArrayView1<f64>,
    w_out: &ArrayView2<f64>,
) -> Result<Array3<f64>> {
    const OP: &str = "mixer::reference::layer";
    let (bs, ts, dm) = x.dim();
    let d = check_layer(kind, OP, x.shape(), w_in, b_in, w_out)?;
    let (_, pre) = pre_activations(OP, x, w_in, b_in)?;
    let h = scan_checked(kind, &pre.view());
    let h2 = h.into_shape_with_order((bs * ts, d)).map_err(|e| sizes(OP, e))?;
    h2.dot(w_out)
        .into_shape_with_order((bs, ts, dm))
        .map_err(|e| sizes(OP, e))
}

/// The error of a reshape whose sizes the checks have made agree.
fn sizes(op: &'static str, e: ndarray::ShapeError) -> Error {
    Error::value(op, "x", "sizes that agree", e)
}

/// Checks w_in (Dm, 2D), b_in (2D), w_out (D, Dm) against x (B, T, Dm) and D against the
/// block size; returns D.
fn check_layer(
    kind: MixerKind,
    op: &'static str,
    x: &[usize],
    w_in: &ArrayView2<f64>,
    b_in: &ArrayView1<f64>,
    w_out: &ArrayView2<f64>,
) -> Result<usize> {
    let dm = x[2];
    if w_in.nrows() != dm {
        return Err(Error::shape(
            op,
            "w_in",
            format!("({dm}, 2D): Dm rows like x"),
            w_in.shape(),
        ));
    }
    let d = check_pre(kind, op, &[x[0], x[1], w_in.ncols()])?;
    if b_in.len() != 2 * d {
        return Err(Error::shape(op, "b_in", format!("[{}] (2D)", 2 * d), b_in.shape()));
    }
    if w_out.dim() != (d, dm) {
        return Err(Error::shape(op, "w_out", format!("[{d}, {dm}] (D, Dm)"), w_out.shape()));
    }
    Ok(d)
}

/// x as (B T, Dm) and pre = x W_in + b_in as (B, T, 2D).
fn pre_activations(
    op: &'static str,
    x: &ArrayView3<f64>,
    w_in: &ArrayView2<f64>,
    b_in: &ArrayView1<f64>,
) -> Result<(Array2<f64>, Array3<f64>)> {
    let (bs, ts, dm) = x.dim();
    let x2 = x.to_shape((bs * ts, dm)).map_err(|e| sizes(op, e))?.to_owned();
    let pre: Array2<f64> = x2.dot(w_in) + b_in;
    let pre = pre
        .into_shape_with_order((bs, ts, w_in.ncols()))
        .map_err(|e| sizes(op, e))?;
    Ok((x2, pre))
}

fn to_f64(op: &'static str, arg: &'static str, a: &ArrayD<f32>) -> Result<Array3<f64>> {
    a.mapv(f64::from)
        .into_dimensionality::<Ix3>()
        .map_err(|_| Error::shape(op, arg, "rank 3", a.shape()))
}

/// Checks `pre` is (B, T, 2D) with D a multiple of `kind`'s block size (and the block size
/// one the kind accepts); returns D.
fn check_pre(kind: MixerKind, op: &'static str, pre: &[usize]) -> Result<usize> {
    if pre.len() != 3 || !pre[2].is_multiple_of(2) {
        return Err(Error::shape(
            op,
            "pre",
            "(B, T, 2D): rank 3 with an even last axis",
            pre,
        ));
    }
    kind.blocks(pre[2] / 2)?;
    Ok(pre[2] / 2)
}

/// [`scan`] on f32 arrays (the CPU context's mixer forward). pre (B, T, 2D) -> h (B, T, D).
///
/// Errors: pre not of rank 3 with an even last axis, or D not a multiple of the block size.
pub fn scan_f32(kind: MixerKind, pre: &ArrayD<f32>) -> Result<ArrayD<f32>> {
    const OP: &str = "mixer::reference::scan_f32";
    check_pre(kind, OP, pre.shape())?;
    Ok(scan_checked(kind, &to_f64(OP, "pre", pre)?.view())
        .mapv(|v| v as f32)
        .into_dyn())
}

/// [`scan_backward`] on f32 arrays (the CPU context's mixer backward). pre (B, T, 2D),
/// dh (B, T, D) -> dpre (B, T, 2D).
///
/// Errors: as [`scan_f32`], and dh of another shape than (B, T, D).
pub fn scan_backward_f32(kind: MixerKind, pre: &ArrayD<f32>, dh: &ArrayD<f32>) -> Result<ArrayD<f32>> {
    const OP: &str = "mixer::reference::scan_backward_f32";
    let d = check_pre(kind, OP, pre.shape())?;
    check_dh(OP, pre.shape(), d, dh.shape())?;
    Ok(
        scan_backward_checked(kind, &to_f64(OP, "pre", pre)?.view(), &to_f64(OP, "dh", dh)?.view())
            .mapv(|v| v as f32)
            .into_dyn(),
    )
}

/// Gradients of [`layer`]'s loss: dL/dx (B, T, Dm), dL/dw_in (Dm, 2D), dL/db_in (2D),
/// dL/dw_out (D, Dm).
pub struct LayerGrads {
    /// dL/dx (B, T, Dm).
    pub x: Array3<f64>,
    /// dL/dw_in (Dm, 2D).
    pub w_in: Array2<f64>,
    /// dL/db_in (2D,).
    pub b_in: ndarray::Array1<f64>,
    /// dL/dw_out (D, Dm).
    pub w_out: Array2<f64>,
}

/// Backward of [`layer`] from dL/dy (B, T, Dm).
///
/// Errors: as [`layer`], and dy of another shape than x.
pub fn layer_backward(
    kind: MixerKind,
    x: &ArrayView3<f64>,
    w_in: &ArrayView2<f64>,
    b_in: &ArrayView1<f64>,
    w_out: &ArrayView2<f64>,
    dy: &ArrayView3<f64>,
) -> Result<LayerGrads> {
    const OP: &str = "mixer::reference::layer_backward";
    let d = check_layer(kind, OP, x.shape(), w_in, b_in, w_out)?;
    if dy.shape() != x.shape() {
        return Err(Error::mismatch(OP, "dy", dy.shape(), "x", x.shape()));
    }
    let (bs, ts, dm) = x.dim();
    let rows = bs * ts;
    let two_d = 2 * d;
    let (x2, pre) = pre_activations(OP, x, w_in, b_in)?;
    let dy2 = dy.to_shape((rows, dm)).map_err(|e| sizes(OP, e))?.to_owned();
    let h2 = scan_checked(kind, &pre.view())
        .into_shape_with_order((rows, d))
        .map_err(|e| sizes(OP, e))?;
    let dh = dy2
        .dot(&w_out.t())
        .into_shape_with_order((bs, ts, d))
        .map_err(|e| sizes(OP, e))?;
    let dpre = scan_backward_checked(kind, &pre.view(), &dh.view())
        .into_shape_with_order((rows, two_d))
        .map_err(|e| sizes(OP, e))?;
    Ok(LayerGrads {
        x: dpre
            .dot(&w_in.t())
            .into_shape_with_order((bs, ts, dm))
            .map_err(|e| sizes(OP, e))?,
        w_in: x2.t().dot(&dpre),
        b_in: dpre.sum_axis(ndarray::Axis(0)),
        w_out: h2.t().dot(&dy2),
    })
}
