//! The bench's element-scan suite (`bench --only element_scans`): the bodies of
//! `benches/jax_element_scans.py`, the same shapes and inputs, so the two read side by side.
//!
//! | body | program | inputs |
//! | --- | --- | --- |
//! | seed_tanh | `h = tanh(x + a h)` (the spec's first example) | x, a: (B, T, D); h0: (B, D) |
//! | gru | `z = sigmoid(xz)`, `h = (1 - z) h + z tanh(xh + a h)` | xz, xh, a: (B, T, D); h0: (B, D) |
//! | norm16 | `y = a h + x`, `h = y / max(1, |y|)` over 16 values (the spec's vector state) | x: (B, T, H, 16); a: (B, T, H, 1); h0 = 0 |
//!
//! Shapes: lab B128 T64 D256, large B16 T4096 D4096 (norm16: H = D / 16). The forward is one
//! `ElementScan::run`; forward+backward is `run` then `grad_tensor` (the gradients of the sum
//! of the outputs, every input's). Bandwidth: every input read once and the output written
//! once, over the forward time. Keys `element_scan_<body>_<case>_fwd_ms`, `_fwdbwd_ms`,
//! `_fwd_gbps`.

use wgsl_compute::check::Rng;
use wgsl_compute::element_scan::spec_programs::{NORM_CAPPED_SCAN, TANH_SCAN};
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::{Context, Result, Tensor};

/// The GRU-style gated body, in the spec's s-expression form.
const GRU_SCAN: &str = "(element-scan (lambda (h xz xh a)
                (let ((z (sigmoid xz)))
                  (+ (* (- 1.0 z) h) (* z (tanh (+ xh (* a h)))))))
              initial
              (list xz xh a)
              :axis 1)";

/// One timed program: its name, case and the bytes a forward must move.
pub struct ElementCase {
    pub body: &'static str,
    pub case: &'static str,
    pub shape: Vec<usize>,
    pub scan: ElementScan,
    pub bytes: f64,
}

fn normal(ctx: &Context, rng: &mut Rng, shape: &[usize], scale: f64) -> Result<Tensor> {
    let n = shape.iter().product();
    let v: Vec<f32> = rng
        .vec_normal(n, 1.0)
        .iter()
        .map(|&x| (f64::from(x) * scale) as f32)
        .collect();
    Tensor::from_slice(ctx, shape, &v)
}

/// sigmoid(N(0, 1)): decays in (0, 1).
fn decay(ctx: &Context, rng: &mut Rng, shape: &[usize]) -> Result<Tensor> {
    let n = shape.iter().product();
    let v: Vec<f32> = rng
        .vec_normal(n, 1.0)
        .iter()
        .map(|&x| 1.0 / (1.0 + (-x).exp()))
        .collect();
    Tensor::from_slice(ctx, shape, &v)
}

/// The three bodies at the lab shape (and the large one unless `quick`).
pub fn cases(ctx: &Context, quick: bool) -> Result<Vec<ElementCase>> {
    let shapes: &[(&str, [usize; 3])] = if quick {
        &[("lab", [128, 64, 256])]
    } else {
        &[("lab", [128, 64, 256]), ("large", [16, 4096, 4096])]
    };
    let mut rng = Rng::new(11);
    let mut out = vec![];
    for &(case, [b, t, d]) in shapes {
        let seq = [b, t, d];
        let elements = (b * t * d) as f64;
        let h0 = normal(ctx, &mut rng, &[b, d], 1.0)?;
        let (x, a) = (normal(ctx, &mut rng, &seq, 1.0)?, decay(ctx, &mut rng, &seq)?);
        let bindings = Bindings::new()
            .device("initial", &h0)
            .device("x", &x)
            .device("decay", &a);
        out.push(ElementCase {
            body: "seed_tanh",
            case,
            shape: seq.to_vec(),
            scan: ElementScan::from_sexpr(TANH_SCAN, &bindings)?,
            bytes: 4.0 * 3.0 * elements,
        });
        let xz = normal(ctx, &mut rng, &seq, 1.0)?;
        let bindings = Bindings::new()
            .device("initial", &h0)
            .device("xz", &xz)
            .device("xh", &x)
            .device("a", &a);
        out.push(ElementCase {
            body: "gru",
            case,
            shape: seq.to_vec(),
            scan: ElementScan::from_sexpr(GRU_SCAN, &bindings)?,
            bytes: 4.0 * 4.0 * elements,
        });
        let heads = d / 16;
        let x16 = normal(ctx, &mut rng, &[b, t, heads, 16], 0.25)?;
        let a16 = decay(ctx, &mut rng, &[b, t, heads, 1])?;
        let bindings = Bindings::new()
            .number("batch", b as f64)
            .number("time", t as f64)
            .number("heads", heads as f64)
            .device("x", &x16)
            .device("decay", &a16);
        out.push(ElementCase {
            body: "norm16",
            case,
            shape: vec![b, t, heads, 16],
            scan: ElementScan::from_sexpr(NORM_CAPPED_SCAN, &bindings)?,
            bytes: 4.0 * elements * (2.0 + 1.0 / 16.0),
        });
    }
    Ok(out)
}

/// The gradients' seed: ones of the output's shape (the gradient of the outputs' sum).
pub fn ones(ctx: &Context, c: &ElementCase) -> Result<Tensor> {
    Tensor::full(ctx, c.scan.shape(), 1.0)
}
