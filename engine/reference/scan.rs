//! Reference scans, accumulated in f64: the oracle of the GPU scans and the `cpu` side of the
//! dispatch seam.
//!
//! The `*_f64` cores work on flat row-major f64 slices (the finite-difference test of the
//! gradients runs on them); the array functions convert f32 arrays whose shapes the caller
//! has checked (`wgsl_compute::scan` checks them before calling).
//!
//! Affine scan, t = 0..T-1: H_t = A_t H_{t-1} + B_t with H_{-1} = h0. Adjoint over dH:
//! G_t = dH_t + A_{t+1}^T G_{t+1}; dA_t = G_t H_{t-1}^T, dB_t = G_t, dh0 = A_0^T G_0.
//!
//! Log scan: z_{-1} = lv_0, z_t = logaddexp(lc_t + z_{t-1}, lv_{t+1}), h_t = exp(z_t), which
//! equals exp(a* + logcumsumexp(lv - a*))\[1:\] with a* the zero-padded cumsum of lc.

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::error::{Error, Result};

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
}

/// H (B, T, N, k, v) of the affine scan, in f64.
pub fn affine_forward_f64(s: &AffineShape, a: &[f64], b: &[f64], h0: Option<&[f64]>) -> Vec<f64> {
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
    h
}

/// Gradients (dA, dB, dh0) of the affine scan given its A, h0, output H and dL/dH, in f64.
pub fn affine_backward_f64(
    s: &AffineShape,
    a: &[f64],
    h0: Option<&[f64]>,
    h: &[f64],
    g: &[f64],
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
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
            back(&adj, &mut next, s.step(bi, 0, n) * k * k);
            dh0[lane..lane + k * v].copy_from_slice(&next);
        }
    }
    (da, db, dh0)
}

fn logaddexp(u: f64, w: f64) -> f64 {
    let m = u.max(w);
    m + (1.0 + (u.min(w) - m).exp()).ln()
}

/// h (B, T, D) of the log scan from log_coeffs (B, T, D) and log_values (B, T+1, D), in f64.
pub fn log_forward_f64(b: usize, t: usize, d: usize, lc: &[f64], lv: &[f64]) -> Vec<f64> {
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
    h
}

/// Gradients (d log_coeffs (B, T, D), d log_values (B, T+1, D)) of the log scan given its
/// inputs, its output h and dL/dh, in f64.
pub fn log_backward_f64(
    b: usize,
    t: usize,
    d: usize,
    lc: &[f64],
    lv: &[f64],
    h: &[f64],
    g: &[f64],
) -> (Vec<f64>, Vec<f64>) {
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
    (dlc, dlv)
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

fn affine_shape(a: &ArrayViewD<f32>, v: usize) -> AffineShape {
    let s = a.shape();
    AffineShape {
        b: s[0],
        t: s[1],
        n: s[2],
        k: s[3],
        v,
    }
}

/// `matrix_affine_scan`: A (B, T, N, k, k), B (B, T, N, k, v), h0 (B, N, k, v) -> H (B, T, N, k, v).
pub fn matrix_affine_scan(a: &ArrayViewD<f32>, b: &ArrayViewD<f32>, h0: Option<&ArrayViewD<f32>>) -> ArrayD<f32> {
    let s = affine_shape(a, b.shape()[4]);
    let h0 = h0.map(f64s);
    array(b.shape(), affine_forward_f64(&s, &f64s(a), &f64s(b), h0.as_deref()))
}

/// Gradients (dA, dB, dh0) of `matrix_affine_scan` from A, h0, the output H and dL/dH.
pub fn matrix_affine_scan_backward(
    a: &ArrayViewD<f32>,
    h0: Option<&ArrayViewD<f32>>,
    h: &ArrayViewD<f32>,
    grad: &ArrayViewD<f32>,
) -> (ArrayD<f32>, ArrayD<f32>, ArrayD<f32>) {
    let s = affine_shape(a, h.shape()[4]);
    let h0 = h0.map(f64s);
    let (da, db, dh0) = affine_backward_f64(&s, &f64s(a), h0.as_deref(), &f64s(h), &f64s(grad));
    (
        array(a.shape(), da),
        array(h.shape(), db),
        array(&[s.b, s.n, s.k, s.v], dh0),
    )
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
    Ok(array(sh, affine_forward_f64(&s, &f64s(a), &f64s(b), h0.as_deref())))
}

/// `matrix_scan`: A (B, T, N, 2, 2), b (B, T, N, 2), h0 (B, N, 2) -> h (B, T, N, 2).
pub fn matrix_scan(a: &ArrayViewD<f32>, b: &ArrayViewD<f32>, h0: Option<&ArrayViewD<f32>>) -> ArrayD<f32> {
    let s = affine_shape(a, 1);
    let h0 = h0.map(f64s);
    array(b.shape(), affine_forward_f64(&s, &f64s(a), &f64s(b), h0.as_deref()))
}

/// `parallel_scan_log`: log_coeffs (B, T, D), log_values (B, T+1, D) -> h (B, T, D).
pub fn parallel_scan_log(log_coeffs: &ArrayViewD<f32>, log_values: &ArrayViewD<f32>) -> ArrayD<f32> {
    let s = log_coeffs.shape();
    array(
        s,
        log_forward_f64(s[0], s[1], s[2], &f64s(log_coeffs), &f64s(log_values)),
    )
}

/// Gradients (d log_coeffs (B, T, D), d log_values (B, T+1, D)) of `parallel_scan_log`.
pub fn parallel_scan_log_backward(
    log_coeffs: &ArrayViewD<f32>,
    log_values: &ArrayViewD<f32>,
    h: &ArrayViewD<f32>,
    grad: &ArrayViewD<f32>,
) -> (ArrayD<f32>, ArrayD<f32>) {
    let s = log_coeffs.shape();
    let (dlc, dlv) = log_backward_f64(
        s[0],
        s[1],
        s[2],
        &f64s(log_coeffs),
        &f64s(log_values),
        &f64s(h),
        &f64s(grad),
    );
    (array(s, dlc), array(log_values.shape(), dlv))
}
