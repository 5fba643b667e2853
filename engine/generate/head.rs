//! The decode step's head, for any model (`shaders/generate/head.wgsl`): the final norm of
//! the row (a layer norm or an RMS norm) and an output matrix stored (V, C) row-major, GPT-2's
//! tied token embedding or a Hugging Face `lm_head.weight` as it is stored, in one launch.
//! Each logit is one contiguous dot product, and V / 64 workgroups keep the matrix's loads in
//! flight.

use super::project::{check_row, Prologue};
use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::tensor::Tensor;

const HEAD: KernelDef = KernelDef::new("generate/head", shader!("generate/head.wgsl"), "head");

/// How the head's kernel splits its rows (`shaders/generate/head.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeadShape {
    /// CPU adapters: an invocation takes whole rows, 2048 rows a workgroup.
    WholeRows,
    /// GPUs: each of a workgroup's eight groups of 32 lanes takes `rows` rows (1, 2, 4 or 8)
    /// along C, their partial sums folded through shared memory.
    Groups { rows: u32 },
}

impl HeadShape {
    /// The shape on `info`'s adapter: `ENGINE_HEAD` when set (`whole`, or the rows a group:
    /// `1`, `2`, `4`, `8`; read once per process, for benchmarks), else the rule.
    fn pick(info: &crate::context::DeviceInfo) -> HeadShape {
        static FORCED: std::sync::OnceLock<Option<HeadShape>> = std::sync::OnceLock::new();
        let forced = FORCED.get_or_init(|| {
            crate::context::forced::forced("ENGINE_HEAD", "whole, 1, 2, 4 or 8", |s| match s {
                "whole" => Some(HeadShape::WholeRows),
                r => r
                    .parse()
                    .ok()
                    .filter(|r| [1, 2, 4, 8].contains(r))
                    .map(|rows| HeadShape::Groups { rows }),
            })
        });
        if let Some(shape) = *forced {
            return shape;
        }
        if info.is_software() {
            HeadShape::WholeRows
        } else {
            HeadShape::Groups { rows: 8 }
        }
    }

    /// Rows one workgroup covers.
    fn rows(self) -> u32 {
        match self {
            HeadShape::WholeRows => 2048,
            HeadShape::Groups { rows } => 8 * rows,
        }
    }
}

/// Widest C the head kernel holds (`MAX_C` in `head.wgsl`: GPT-2 XL's 1600).
pub(crate) const HEAD_MAX_C: usize = 1600;

/// The final norm (`Prologue::Layer` or `Prologue::Rms`) and the head: x (1, C), w (V, C)
/// dense, F32, F16 or BF16 -> logits (1, V).
pub(crate) fn head(x: &Tensor, norm: Prologue, w: &Tensor) -> Result<Tensor> {
    let gpu = x.context().require_gpu("generate::head")?;
    head_in(x, norm, w, HeadShape::pick(&gpu.info))
}

/// [`head`] in a given shape.
fn head_in(x: &Tensor, norm: Prologue, w: &Tensor, shape: HeadShape) -> Result<Tensor> {
    let op = "generate::head";
    let ctx = x.context();
    let gpu = ctx.require_gpu(op)?;
    let &[v, c] = w.shape() else {
        return Err(Error::shape(op, "w", "(V, C)", w.shape()));
    };
    if !w.is_contiguous() || c % 4 != 0 || c > HEAD_MAX_C {
        return Err(Error::Unsupported {
            op,
            message: format!(
                "w {:?}: the head kernel needs a dense (V, C) with C % 4 == 0 and C <= {HEAD_MAX_C}",
                w.shape()
            ),
        });
    }
    // An unread slot takes x: it is bound read-only already.
    let (g, b, eps, rms) = match norm {
        Prologue::Layer((g, b, eps)) => (g, b, eps, false),
        Prologue::Rms(g, eps) => (g, x, eps, true),
        Prologue::None => return Err(Error::value(op, "norm", "a layer or RMS norm", "none")),
        Prologue::SwiGlu => return Err(Error::value(op, "norm", "a layer or RMS norm", "SwiGLU")),
    };
    for (arg, t) in [("x", x), ("norm weight", g), ("norm bias", b)] {
        check_row(op, arg, t, c)?;
        if t.layout().offset != 0 {
            return Err(Error::shape(op, arg, "a row at offset 0", t.shape()));
        }
    }
    let logits = Tensor::uninit(ctx, &[1, v], op)?;
    let params = Params::new().usize(v).f32(eps);
    let buffers = [
        x.gpu_buffer(op)?,
        g.gpu_buffer(op)?,
        b.gpu_buffer(op)?,
        w.typed_buffer(op)?,
        logits.gpu_buffer(op)?,
    ];
    let rows = shape.rows();
    let consts = [
        ("RMS", f64::from(u8::from(rms))),
        ("WHOLE_ROWS", f64::from(u8::from(shape == HeadShape::WholeRows))),
        ("ROWS", f64::from(rows)),
        ("C", c as f64),
    ];
    gpu.dispatch(
        &gpu.typed_kernel(&HEAD, &[("w", w.dtype())], &consts)?,
        &params,
        &buffers,
        groups_1d(v.div_ceil(rows as usize) as u32),
    )?;
    Ok(logits)
}

#[cfg(test)]
mod tests {
    use super::{head, head_in, HeadShape};
    use crate::check::Rng;
    use crate::generate::project::tests::reference;
    use crate::generate::project::Prologue;
    use crate::{Context, DType, Tensor};

    /// Every shape (the GPU ones too, on CPU adapters) at C whose vec4 count is no multiple
    /// of a trip's 32 or 128 (C = 200 and 1600, GPT-2 XL's), V no multiple of a workgroup's
    /// rows, both norms, f32 and f16 weights, against the f64 reference of the rounded
    /// weights.
    #[test]
    fn every_head_shape_matches_the_reference() {
        let ctx = Context::new().expect("a context");
        if ctx.require_gpu("test").is_err() {
            return;
        }
        let mut rng = Rng::new(5);
        for (c, v) in [(200, 301), (1600, 70)] {
            let wte = rng.vec_range(v * c, -1.0, 1.0);
            let g = rng.vec_range(c, 0.5, 1.5);
            let b = rng.vec_range(c, -0.5, 0.5);
            let x = rng.vec_range(c, -2.0, 3.0);
            let [gt, bt] = [&g, &b].map(|t| Tensor::from_slice(&ctx, &[c], t).unwrap());
            let xt = Tensor::from_slice(&ctx, &[1, c], &x).unwrap();
            for dtype in [DType::F32, DType::F16] {
                let wt = Tensor::from_slice(&ctx, &[v, c], &wte)
                    .unwrap()
                    .to_dtype(dtype)
                    .unwrap();
                let rounded = wt.to_vec().unwrap();
                let w: Vec<f32> = (0..c * v).map(|i| rounded[(i % v) * c + i / v]).collect();
                for rms in [false, true] {
                    let norm = if rms {
                        Prologue::Rms(&gt, 1e-5)
                    } else {
                        Prologue::Layer((&gt, &bt, 1e-5))
                    };
                    let want = if rms {
                        let ms = x.iter().map(|&e| f64::from(e).powi(2)).sum::<f64>() / c as f64;
                        let xn: Vec<f32> = (0..c)
                            .map(|i| (f64::from(x[i]) / (ms + 1e-5).sqrt() * f64::from(g[i])) as f32)
                            .collect();
                        reference(&xn, &g, &b, &w, &vec![0.0; v], false)
                    } else {
                        reference(&x, &g, &b, &w, &vec![0.0; v], true)
                    };
                    for shape in [1, 2, 4, 8]
                        .map(|rows| HeadShape::Groups { rows })
                        .into_iter()
                        .chain([HeadShape::WholeRows])
                    {
                        let got = head_in(&xt, norm, &wt, shape).unwrap().to_vec().unwrap();
                        for j in 0..v {
                            let ok = (f64::from(got[j]) - want[j]).abs() <= 1e-4 * (1.0 + want[j].abs());
                            assert!(
                                ok,
                                "C {c} V {v} {dtype:?} rms {rms} {shape:?}: logit {j} = {} against {}",
                                got[j], want[j]
                            );
                        }
                    }
                }
            }
        }
    }

    /// The head's layer norm on a row whose squares overflow f32 unless it is scaled first
    /// (values near 1e37) gives the logits of the f64 reference, as on a plain row.
    #[test]
    fn the_head_normalises_rows_near_f32_max() {
        let ctx = Context::new().expect("a context");
        if ctx.require_gpu("test").is_err() {
            return;
        }
        let (c, v) = (64, 300);
        let mut rng = Rng::new(11);
        let wte = rng.vec_range(v * c, -1.0, 1.0);
        let g = rng.vec_range(c, 0.5, 1.5);
        let b = rng.vec_range(c, -0.5, 0.5);
        let base = rng.vec_range(c, -2.0, 3.0);
        let [gt, bt] = [&g, &b].map(|t| Tensor::from_slice(&ctx, &[c], t).unwrap());
        let wt = Tensor::from_slice(&ctx, &[v, c], &wte).unwrap();
        for magnitude in [1.0f32, 3e37] {
            let x: Vec<f32> = base.iter().map(|x| x * magnitude).collect();
            let xt = Tensor::from_slice(&ctx, &[1, c], &x).unwrap();
            let got = head(&xt, Prologue::Layer((&gt, &bt, 1e-5)), &wt)
                .unwrap()
                .to_vec()
                .unwrap();
            // The head's logits are xn @ wte^T: the projection reference with w = wte^T.
            let w: Vec<f32> = (0..c * v).map(|i| wte[(i % v) * c + i / v]).collect();
            let want = reference(&x, &g, &b, &w, &vec![0.0; v], true);
            for j in 0..v {
                let ok = (f64::from(got[j]) - want[j]).abs() <= 1e-4 * (1.0 + want[j].abs());
                assert!(ok, "x ~ {magnitude}: logit {j} = {} against {}", got[j], want[j]);
            }
        }
    }
}
