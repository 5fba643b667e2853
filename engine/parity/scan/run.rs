//! Running one scan case: its seeded inputs (drawn so values stay O(1) at any T), rounded to
//! the case's dtype, the kernel on the context and the f64 reference on the same values, and
//! the row that compares them.

use super::{ScanCase, ScanOp};
use crate::check::{gates, Rng};
use crate::context::Context;
use crate::error::Result;
use crate::parity::Row;
use crate::reference::scan as reference;
use crate::scan::{self, Route, ScanOptions};
use crate::shape::DType;
use crate::tensor::Tensor;

/// `x` rounded to `dtype` and widened back (exact): the values a kernel reads.
fn rounded(dtype: DType, x: &[f32]) -> Vec<f32> {
    match dtype {
        DType::F32 => x.to_vec(),
        d => x
            .iter()
            .map(|&v| crate::tensor::widen(d, crate::tensor::narrow(d, v)))
            .collect(),
    }
}

/// The inputs of a case, seeded: (transitions or log_coeffs, injections or log_values, h0).
pub fn inputs(c: &ScanCase) -> (Vec<f32>, Vec<f32>, Option<Vec<f32>>) {
    let mut rng = Rng::new(c.seed);
    let steps = c.b * c.t * c.n;
    match c.op {
        ScanOp::Log => {
            let lc = (0..steps)
                .map(|_| {
                    let x = rng.normal();
                    -(1.0 + x.exp()).ln() as f32
                })
                .collect();
            let lv = rng.vec_normal(c.b * (c.t + 1) * c.n, 0.5);
            (lc, lv, None)
        }
        ScanOp::Linear => {
            let a = rng.vec_range(steps, -0.9, 0.9);
            let b = rng.vec_range(steps, -1.0, 1.0);
            let h0 = c.h0.then(|| rng.vec_range(c.b * c.n, -1.0, 1.0));
            (a, b, h0)
        }
        ScanOp::Matrix | ScanOp::Affine => {
            let scale = 0.6 / (c.k as f64).sqrt();
            let a = rng.vec_range(steps * c.k * c.k, -scale, scale);
            let b = rng.vec_range(steps * c.k * c.v, -1.0, 1.0);
            let h0 = c.h0.then(|| rng.vec_range(c.b * c.n * c.k * c.v, -1.0, 1.0));
            (a, b, h0)
        }
    }
}

fn f64s(x: &[f32]) -> Vec<f64> {
    x.iter().map(|&v| v as f64).collect()
}

fn f32s(x: &[f64]) -> Vec<f32> {
    x.iter().map(|&v| v as f32).collect()
}

/// Runs one scan case on `ctx` (the GPU kernel, demanded; the reference on the CPU context).
pub async fn run_case(ctx: &Context, c: &ScanCase) -> Row {
    let f32_gate = match (c.op, c.backward) {
        (ScanOp::Log, false) => gates::SCAN_LOG,
        (ScanOp::Log, true) => gates::SCAN_LOG_BACKWARD,
        (_, false) => gates::SCAN_AFFINE,
        (_, true) => gates::SCAN_AFFINE_BACKWARD,
    };
    let gate = match c.dtype {
        DType::F32 => f32_gate,
        DType::F16 => gates::half_scan(f32_gate, gates::F16_ROUNDING),
        DType::BF16 => gates::half_scan(f32_gate, gates::BF16_ROUNDING),
    };
    let row = Row::pending(
        c.op.name().to_string(),
        crate::parity::direction(c.backward),
        c.shape(),
        c.strategy.to_string(),
        gate,
    );
    // Every output held to the gate at once: one (got, want) of them all, end to end.
    let joined = outputs(ctx, c).await.map(|pairs| {
        let (mut got, mut want) = (vec![], vec![]);
        for (g, w) in pairs {
            got.extend(g);
            want.extend(f32s(&w));
        }
        (got, want)
    });
    row.judged(joined)
}

/// Every output of the case as (got, reference) pairs.
async fn outputs(ctx: &Context, c: &ScanCase) -> Result<Vec<(Vec<f32>, Vec<f64>)>> {
    let route = if ctx.is_gpu() { Route::Gpu } else { Route::Cpu };
    let opts = ScanOptions {
        route: Some(route),
        strategy: c.strategy,
    };
    let dtype = c.dtype;
    let (x, y, h0) = inputs(c);
    let (x, y, h0) = (rounded(dtype, &x), rounded(dtype, &y), h0.map(|h| rounded(dtype, &h)));
    let (b, t, n, k, v) = (c.b, c.t, c.n, c.k, c.v);
    let g = rounded(dtype, &Rng::new(c.seed ^ 0x5eed).vec_normal(b * t * n * k * v, 1.0));
    let up = |shape: &[usize], data: &[f32]| Tensor::from_slice_as(ctx, shape, data, dtype);
    // A half backward row takes h = the reference forward rounded (see the module docs);
    // the reference then reads the same values.
    let h_input = |h: Tensor, want: &mut Vec<f64>, shape: &[usize]| -> Result<Tensor> {
        if dtype == DType::F32 {
            return Ok(h);
        }
        let r = rounded(dtype, &f32s(want));
        *want = f64s(&r);
        up(shape, &r)
    };
    if c.op == ScanOp::Log {
        let (lc, lv) = (up(&[b, t, n], &x)?, up(&[b, t + 1, n], &y)?);
        let mut want_h = reference::log_forward_f64(b, t, n, &f64s(&x), &f64s(&y))?;
        let h = scan::parallel_scan_log_with(&lc, &lv, &opts)?;
        if !c.backward {
            return Ok(vec![(h.to_vec_async().await?, want_h)]);
        }
        let h = h_input(h, &mut want_h, &[b, t, n])?;
        let gr = scan::parallel_scan_log_backward_with(&lc, &lv, &h, &up(&[b, t, n], &g)?, &opts)?;
        let (dlc, dlv) = reference::log_backward_f64(b, t, n, &f64s(&x), &f64s(&y), &want_h, &f64s(&g))?;
        return Ok(vec![
            (gr.d_log_coeffs.to_vec_async().await?, dlc),
            (gr.d_log_values.to_vec_async().await?, dlv),
        ]);
    }
    let s = c.affine_shape();
    let mut want_h = reference::affine_forward_f64(&s, &f64s(&x), &f64s(&y), h0.as_deref().map(f64s).as_deref())?;
    let (a_shape, b_shape, h0_shape): (Vec<usize>, Vec<usize>, Vec<usize>) = match c.op {
        ScanOp::Linear => (vec![b, t, n], vec![b, t, n], vec![b, n]),
        ScanOp::Matrix => (vec![b, t, n, 2, 2], vec![b, t, n, 2], vec![b, n, 2]),
        _ => (vec![b, t, n, k, k], vec![b, t, n, k, v], vec![b, n, k, v]),
    };
    let a = up(&a_shape, &x)?;
    let bt = up(&b_shape, &y)?;
    let h0t = h0.as_ref().map(|h| up(&h0_shape, h)).transpose()?;
    let h0r = h0t.as_ref();
    let h = match c.op {
        ScanOp::Linear => scan::linear_scan_with(&a, &bt, h0r, &opts)?,
        ScanOp::Matrix => scan::matrix_scan_with(&a, &bt, h0r, &opts)?,
        _ => scan::matrix_affine_scan_with(&a, &bt, h0r, &opts)?,
    };
    if !c.backward {
        return Ok(vec![(h.to_vec_async().await?, want_h)]);
    }
    let h = h_input(h, &mut want_h, &b_shape)?;
    let gt = up(&b_shape, &g)?;
    let gr = match c.op {
        ScanOp::Linear => scan::linear_scan_backward_with(&a, h0r, &h, &gt, &opts)?,
        ScanOp::Matrix => scan::matrix_scan_backward_with(&a, h0r, &h, &gt, &opts)?,
        _ => scan::matrix_affine_scan_backward_with(&a, h0r, &h, &gt, &opts)?,
    };
    let h0f = h0.as_deref().map(f64s);
    let (da, db, dh0) = reference::affine_backward_f64(&s, &f64s(&x), h0f.as_deref(), &want_h, &f64s(&g))?;
    Ok(vec![
        (gr.da.to_vec_async().await?, da),
        (gr.db.to_vec_async().await?, db),
        (gr.dh0.to_vec_async().await?, dh0),
    ])
}
