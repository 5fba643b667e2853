//! Reference scans, accumulated in f64: the oracle of the GPU scans and the `cpu` side of the
//! dispatch seam.
//!
//! The `*_f64` cores work on flat row-major f64 slices (the finite-difference test of the
//! gradients runs on them); the array functions convert f32 arrays. Every one checks its
//! slices' lengths or its arrays' shapes and fails with [`Error`] naming the argument.
//!
//! Affine scan, t = 0..T-1: H_t = A_t H_{t-1} + B_t with H_{-1} = h0. Adjoint over dH:
//! G_t = dH_t + A_{t+1}^T G_{t+1}; dA_t = G_t H_{t-1}^T, dB_t = G_t, dh0 = A_0^T G_0.
//!
//! Log scan: z_{-1} = lv_0, z_t = logaddexp(lc_t + z_{t-1}, lv_{t+1}), h_t = exp(z_t), which
//! equals exp(a* + logcumsumexp(lv - a*))\[1:\] with a* the zero-padded cumsum of lc.

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::error::{Error, Result};
use crate::shape::product;

/// Dimensions of an affine scan: A (B, T, N, k, k), B and H (B, T, N, k, v), h0 (B, N, k, v).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AffineShape {
    /// Batch B.
    pub b: usize,
    /// Time steps T.
    pub t: usize,
    /// State blocks N.
    pub n: usize,
    /// Block rows k.
    pub k: usize,
    /// Block columns v.
    pub v: usize,
}

impl AffineShape {
    fn step(&self, b: usize, t: usize, n: usize) -> usize {
        (b * self.t + t) * self.n + n
    }

    /// Element counts of A (B T N k k), of B and H (B T N k v) and of h0 (B N k v), checked.
    fn lens(&self, op: &'static str) -> Result<(usize, usize, usize)> {
        let steps = product(op, "s", &[self.b, self.t, self.n])?;
        Ok((
            product(op, "s", &[steps, self.k, self.k])?,
            product(op, "s", &[steps, self.k, self.v])?,
            product(op, "s", &[self.b, self.n, self.k, self.v])?,
        ))
    }
}

/// Fails unless slice `arg` of `op` holds `want` values.
fn check_len(op: &'static str, arg: &'static str, want: usize, got: usize) -> Result<()> {
    if want != got {
        return Err(Error::value(op, arg, format!("{want} values (from the shape)"), got));
    }
    Ok(())
}

/// H (B, T, N, k, v) of the affine scan, in f64.
///
/// Errors ([`Error::Value`]): a, b or h0 of a length other than `s` gives, or `s`'s sizes
/// overflowing.
pub fn affine_forward_f64(s: &AffineShape, a: &[f64], b: &[f64], h0: Option<&[f64]>) -> Result<Vec<f64>> {
    const OP: &str = "reference::scan::affine_forward_f64";
    let (a_len, x_len, h0_len) = s.lens(OP)?;
    check_len(OP, "a", a_len, a.len())?;
    check_len(OP, "b", x_len, b.len())?;
    if let Some(h0) = h0 {
        check_len(OP, "h0", h0_len, h0.len())?;
    }
    let (k, v) = (s.k, s.v);
    let mut h = vec![0.0; s.b * s.t * s.n * k * v];
    let mut state = vec![0.0; k * v];
    let mut next = vec![0.0; k * v];
    for bi in 0..s.b {
        for n in 0..s.n {
            let lane = (bi * s.n + n) * k * v;
            match h0 {
                Some(h0) => state.copy_from_slice(&h0[lane..lane + k * v]),
                None => state.fill(0.0),
            }
            for t in 0..s.t {
                let st = s.step(bi, t, n);
                let (ab, xb) = (st * k * k, st * k * v);
                for i in 0..k {
                    for j in 0..v {
                        let mut acc = b[xb + i * v + j];
                        for l in 0..k {
                            acc += a[ab + i * k + l] * state[l * v + j];
                        }
                        next[i * v + j] = acc;
                    }
                }
                std::mem::swap(&mut state, &mut next);
                h[xb..xb + k * v].copy_from_slice(&state);
            }
        }
    }
    Ok(h)
}

/// Gradients (dA, dB, dh0) of the affine scan given its A, h0, output H and dL/dH, in f64.
///
/// Errors ([`Error::Value`]): a, h0, h or g of a length other than `s` gives, or `s`'s sizes
/// overflowing.
pub fn affine_backward_f64(
    s: &AffineShape,
    a: &[f64],
    h0: Option<&[f64]>,
    h: &[f64],
    g: &[f64],
) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    const OP: &str = "reference::scan::affine_backward_f64";
    let (a_len, x_len, h0_len) = s.lens(OP)?;
    check_len(OP, "a", a_len, a.len())?;
    check_len(OP, "h", x_len, h.len())?;
    check_len(OP, "g", x_len, g.len())?;
    if let Some(h0) = h0 {
        check_len(OP, "h0", h0_len, h0.len())?;
    }
    let (k, v) = (s.k, s.v);
    let mut da = vec![0.0; a.len()];
    let mut db = vec![0.0; h.len()];
    let mut dh0 = vec![0.0; s.b * s.n * k * v];
    let mut adj = vec![0.0; k * v];
    let mut next = vec![0.0; k * v];
    // adj <- M^T adj for the k x k block at `ab`.
    let back = |adj: &[f64], next: &mut [f64], ab: usize| {
        for i in 0..k {
            for j in 0..v {
                next[i * v + j] = (0..k).map(|l| a[ab + l * k + i] * adj[l * v + j]).sum();
            }
        }
    };
    for bi in 0..s.b {
        for n in 0..s.n {
            let lane = (bi * s.n + n) * k * v;
            adj.fill(0.0);
            for t in (0..s.t).rev() {
                let st = s.step(bi, t, n);
                if t + 1 < s.t {
                    back(&adj, &mut next, s.step(bi, t + 1, n) * k * k);
                    std::mem::swap(&mut adj, &mut next);
                }
                let xb = st * k * v;
                for e in 0..k * v {
                    adj[e] += g[xb + e];
                }
                db[xb..xb + k * v].copy_from_slice(&adj);
                let prev: Option<&[f64]> = if t > 0 {
                    let pb = s.step(bi, t - 1, n) * k * v;
                    Some(&h[pb..pb + k * v])
                } else {
                    h0.map(|h0| &h0[lane..lane + k * v])
                };
                if let Some(prev) = prev {
                    let ab = st * k * k;
                    for i in 0..k {
                        for l in 0..k {
                            da[ab + i * k + l] = (0..v).map(|j| adj[i * v + j] * prev[l * v + j]).sum();
                        }
                    }
                }
            }
            if s.t == 0 {
                // No step: nothing depends on h0.
                continue;
            }
            back(&adj, &mut next, s.step(bi, 0, n) * k * k);
            dh0[lane..lane + k * v].copy_from_slice(&next);
        }
    }
    Ok((da, db, dh0))
}

/// Element counts of log_coeffs (B T D) and log_values (B (T+1) D), checked.
fn log_lens(op: &'static str, b: usize, t: usize, d: usize) -> Result<(usize, usize)> {
    let t1 = crate::shape::add(op, "t", t, 1)?;
    Ok((
        product(op, "b, t, d", &[b, t, d])?,
        product(op, "b, t, d", &[b, t1, d])?,
    ))
}

fn logaddexp(u: f64, w: f64) -> f64 {
    let m = u.max(w);
    m + (1.0 + (u.min(w) - m).exp()).ln()
}

/// h (B, T, D) of the log scan from log_coeffs (B, T, D) and log_values (B, T+1, D), in f64.
///
/// Errors ([`Error::Value`]): lc or lv of a length other than (b, t, d) give, or the sizes
/// overflowing.
pub fn log_forward_f64(b: usize, t: usize, d: usize, lc: &[f64], lv: &[f64]) -> Result<Vec<f64>> {
    const OP: &str = "reference::scan::log_forward_f64";
    let (lc_len, lv_len) = log_lens(OP, b, t, d)?;
    check_len(OP, "lc", lc_len, lc.len())?;
    check_len(OP, "lv", lv_len, lv.len())?;
    let mut h = vec![0.0; b * t * d];
    for bi in 0..b {
        for c in 0..d {
            let mut z = lv[bi * (t + 1) * d + c];
            for s in 0..t {
                let i = (bi * t + s) * d + c;
                z = logaddexp(lc[i] + z, lv[(bi * (t + 1) + s + 1) * d + c]);
                h[i] = z.exp();
            }
        }
    }
    Ok(h)
}

/// Gradients (d log_coeffs (B, T, D), d log_values (B, T+1, D)) of the log scan given its
/// inputs, its output h and dL/dh, in f64.
///
/// Errors ([`Error::Value`]): lc, h or g of a length other than (b, t, d), or lv other than
/// (b, t + 1, d), or the sizes overflowing.
pub fn log_backward_f64(
    b: usize,
    t: usize,
    d: usize,
    lc: &[f64],
    lv: &[f64],
    h: &[f64],
    g: &[f64],
) -> Result<(Vec<f64>, Vec<f64>)> {
    const OP: &str = "reference::scan::log_backward_f64";
    let (lc_len, lv_len) = log_lens(OP, b, t, d)?;
    check_len(OP, "lc", lc_len, lc.len())?;
    check_len(OP, "lv", lv_len, lv.len())?;
    check_len(OP, "h", lc_len, h.len())?;
    check_len(OP, "g", lc_len, g.len())?;
    if t == 0 {
        // No step: h is empty and nothing depends on the inputs.
        return Ok((vec![], vec![0.0; lv.len()]));
    }
    let mut dlc = vec![0.0; lc.len()];
    let mut dlv = vec![0.0; lv.len()];
    for bi in 0..b {
        for c in 0..d {
            let at = |s: usize| (bi * t + s) * d + c;
            let at_lv = |s: usize| (bi * (t + 1) + s) * d + c;
            let mut adj = 0.0;
            for s in (0..t).rev() {
                if s + 1 < t {
                    adj *= lc[at(s + 1)].exp();
                }
                adj += g[at(s)];
                let h_prev = if s > 0 { h[at(s - 1)] } else { lv[at_lv(0)].exp() };
                dlc[at(s)] = adj * lc[at(s)].exp() * h_prev;
                dlv[at_lv(s + 1)] = adj * lv[at_lv(s + 1)].exp();
            }
            dlv[at_lv(0)] = lc[at(0)].exp() * adj * lv[at_lv(0)].exp();
        }
    }
    Ok((dlc, dlv))
}

fn f64s(x: &ArrayViewD<f32>) -> Vec<f64> {
    x.iter().map(|&v| v as f64).collect()
}

#[allow(
    clippy::expect_used,
    reason = "the scan cores return one element per output position"
)]
fn array(shape: &[usize], data: Vec<f64>) -> ArrayD<f32> {
    ArrayD::from_shape_vec(IxDyn(shape), data.into_iter().map(|v| v as f32).collect())
        .expect("the core returns one element per output position")
}

/// The scan's dimensions from A (B, T, N, k, k) with v columns, checking A's rank and that
/// its blocks are square.
fn affine_shape(op: &'static str, a: &ArrayViewD<f32>, v: usize) -> Result<AffineShape> {
    let s = a.shape();
    if s.len() != 5 || s[3] != s[4] {
        return Err(Error::shape(op, "a", "(B, T, N, k, k)", s));
    }
    Ok(AffineShape {
        b: s[0],
        t: s[1],
        n: s[2],
        k: s[3],
        v,
    })
}

/// Fails unless argument `arg` of `op` has shape `want`.
fn check_shape(op: &'static str, arg: &'static str, want: &[usize], got: &[usize]) -> Result<()> {
    if want != got {
        return Err(Error::shape(op, arg, format!("{want:?}"), got));
    }
    Ok(())
}

/// `matrix_affine_scan`: A (B, T, N, k, k), B (B, T, N, k, v), h0 (B, N, k, v) -> H (B, T, N, k, v).
///
/// Errors: A not (B, T, N, k, k), B not (B, T, N, k, v) on A's leading axes, h0 not (B, N, k, v).
pub fn matrix_affine_scan(
    a: &ArrayViewD<f32>,
    b: &ArrayViewD<f32>,
    h0: Option<&ArrayViewD<f32>>,
) -> Result<ArrayD<f32>> {
    const OP: &str = "reference::scan::matrix_affine_scan";
    let bs = b.shape();
    if bs.len() != 5 {
        return Err(Error::shape(OP, "b", "(B, T, N, k, v)", bs));
    }
    let s = affine_shape(OP, a, bs[4])?;
    check_shape(OP, "b", &[s.b, s.t, s.n, s.k, s.v], bs)?;
    if let Some(h0) = h0 {
        check_shape(OP, "h0", &[s.b, s.n, s.k, s.v], h0.shape())?;
    }
    let h0 = h0.map(f64s);
    Ok(array(bs, affine_forward_f64(&s, &f64s(a), &f64s(b), h0.as_deref())?))
}

/// Gradients (dA, dB, dh0) of `matrix_affine_scan` from A, h0, the output H and dL/dH.
///
/// Errors: A not (B, T, N, k, k), H not (B, T, N, k, v) on A's leading axes, grad not H's
/// shape, h0 not (B, N, k, v).
pub fn matrix_affine_scan_backward(
    a: &ArrayViewD<f32>,
    h0: Option<&ArrayViewD<f32>>,
    h: &ArrayViewD<f32>,
    grad: &ArrayViewD<f32>,
) -> Result<(ArrayD<f32>, ArrayD<f32>, ArrayD<f32>)> {
    const OP: &str = "reference::scan::matrix_affine_scan_backward";
    let hs = h.shape();
    if hs.len() != 5 {
        return Err(Error::shape(OP, "h", "(B, T, N, k, v)", hs));
    }
    let s = affine_shape(OP, a, hs[4])?;
    check_shape(OP, "h", &[s.b, s.t, s.n, s.k, s.v], hs)?;
    check_shape(OP, "grad", hs, grad.shape())?;
    if let Some(h0) = h0 {
        check_shape(OP, "h0", &[s.b, s.n, s.k, s.v], h0.shape())?;
    }
    let h0 = h0.map(f64s);
    let (da, db, dh0) = affine_backward_f64(&s, &f64s(a), h0.as_deref(), &f64s(h), &f64s(grad))?;
    Ok((array(a.shape(), da), array(hs, db), array(&[s.b, s.n, s.k, s.v], dh0)))
}

/// `linear_scan`: a, b (B, T, D), h0 (B, D) -> h (B, T, D), h_t = a_t h_{t-1} + b_t.
///
/// Errors: a of rank other than 3, b of another shape than a, h0 of a shape other than (B, D).
pub fn linear_scan(a: &ArrayViewD<f32>, b: &ArrayViewD<f32>, h0: Option<&ArrayViewD<f32>>) -> Result<ArrayD<f32>> {
    const OP: &str = "reference::scan::linear_scan";
    let sh = a.shape();
    if sh.len() != 3 {
        return Err(Error::shape(OP, "a", "(B, T, D)", sh));
    }
    if b.shape() != sh {
        return Err(Error::mismatch(OP, "a", sh, "b", b.shape()));
    }
    if let Some(h0) = h0 {
        if h0.shape() != [sh[0], sh[2]] {
            return Err(Error::shape(
                OP,
                "h0",
                format!("[{}, {}] (B, D)", sh[0], sh[2]),
                h0.shape(),
            ));
        }
    }
    let s = AffineShape {
        b: sh[0],
        t: sh[1],
        n: sh[2],
        k: 1,
        v: 1,
    };
    let h0 = h0.map(f64s);
    Ok(array(sh, affine_forward_f64(&s, &f64s(a), &f64s(b), h0.as_deref())?))
}

/// `matrix_scan`: A (B, T, N, k, k), b (B, T, N, k), h0 (B, N, k) -> h (B, T, N, k) (the
/// engine's matrix scan has k = 2).
///
/// Errors: A not (B, T, N, k, k), b not (B, T, N, k) on A's leading axes, h0 not (B, N, k).
pub fn matrix_scan(a: &ArrayViewD<f32>, b: &ArrayViewD<f32>, h0: Option<&ArrayViewD<f32>>) -> Result<ArrayD<f32>> {
    const OP: &str = "reference::scan::matrix_scan";
    let s = affine_shape(OP, a, 1)?;
    check_shape(OP, "b", &[s.b, s.t, s.n, s.k], b.shape())?;
    if let Some(h0) = h0 {
        check_shape(OP, "h0", &[s.b, s.n, s.k], h0.shape())?;
    }
    let h0 = h0.map(f64s);
    Ok(array(
        b.shape(),
        affine_forward_f64(&s, &f64s(a), &f64s(b), h0.as_deref())?,
    ))
}

/// (B, T, D) of log_coeffs, checking its rank and that log_values is (B, T + 1, D).
fn log_dims(op: &'static str, lc: &[usize], lv: &[usize]) -> Result<(usize, usize, usize)> {
    if lc.len() != 3 {
        return Err(Error::shape(op, "log_coeffs", "(B, T, D)", lc));
    }
    let t1 = crate::shape::add(op, "log_coeffs", lc[1], 1)?;
    check_shape(op, "log_values", &[lc[0], t1, lc[2]], lv)?;
    Ok((lc[0], lc[1], lc[2]))
}

/// `parallel_scan_log`: log_coeffs (B, T, D), log_values (B, T+1, D) -> h (B, T, D).
///
/// Errors: log_coeffs not of rank 3, log_values not (B, T + 1, D).
pub fn parallel_scan_log(log_coeffs: &ArrayViewD<f32>, log_values: &ArrayViewD<f32>) -> Result<ArrayD<f32>> {
    let s = log_coeffs.shape();
    let (b, t, d) = log_dims("reference::scan::parallel_scan_log", s, log_values.shape())?;
    Ok(array(
        s,
        log_forward_f64(b, t, d, &f64s(log_coeffs), &f64s(log_values))?,
    ))
}

/// Gradients (d log_coeffs (B, T, D), d log_values (B, T+1, D)) of `parallel_scan_log`.
///
/// Errors: as [`parallel_scan_log`], and h or grad of another shape than log_coeffs.
pub fn parallel_scan_log_backward(
    log_coeffs: &ArrayViewD<f32>,
    log_values: &ArrayViewD<f32>,
    h: &ArrayViewD<f32>,
    grad: &ArrayViewD<f32>,
) -> Result<(ArrayD<f32>, ArrayD<f32>)> {
    const OP: &str = "reference::scan::parallel_scan_log_backward";
    let s = log_coeffs.shape();
    let (b, t, d) = log_dims(OP, s, log_values.shape())?;
    check_shape(OP, "h", s, h.shape())?;
    check_shape(OP, "grad", s, grad.shape())?;
    let (dlc, dlv) = log_backward_f64(b, t, d, &f64s(log_coeffs), &f64s(log_values), &f64s(h), &f64s(grad))?;
    Ok((array(s, dlc), array(log_values.shape(), dlv)))
}
