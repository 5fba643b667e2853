//! The one-token projection of a compiled decode step, for any model
//! (`shaders/generate/ln_matvec*.wgsl`): `x (K) @ w (K, N) + bias`, x normalised first (a layer
//! or RMS norm) when asked, the result a new row, its GELU, an in-place residual add, or GPT-2's QKV split whose
//! keys and values go straight into the cache at the state's position. A workgroup owns a few
//! vec4 columns and splits K across its invocations, so even N = 768 fills a GPU
//! (`MatvecSplit`); the generic `ops::matmul` row product owns 32 columns a workgroup and
//! measured 59 us a projection on an H100 where this kernel takes 16 (the Llama decode plan,
//! `benches/results/raw/2026-12-06b/coop_llama_h100/llama_decode.txt`).

use super::device::DecodeState;
use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::tensor::Tensor;

const LN_MATVEC: KernelDef = KernelDef::new("generate/ln_matvec", shader!("generate/ln_matvec.wgsl"), "ln_matvec");

// No `enable subgroups;`: naga 30 rejects the directive and exposes the subgroup builtins
// whenever the device has the SUBGROUP feature.
const LN_MATVEC_SUBGROUP: KernelDef = KernelDef::new(
    "generate/ln_matvec_subgroup",
    shader!("generate/ln_matvec_subgroup.wgsl"),
    "ln_matvec_subgroup",
);

/// How a decode projection's kernel splits its work (`shaders/generate/ln_matvec_body.wgsl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MatvecSplit {
    /// CPU adapters: an invocation walks all of K for one vec4 of columns, 1024 columns a
    /// workgroup.
    WholeColumns,
    /// GPUs: `c4` vec4 columns a workgroup, K split into 256 / c4 slices whose partial sums
    /// are folded through subgroups or through shared memory.
    Split { c4: u32, subgroups: bool },
}

impl MatvecSplit {
    /// The shape for a projection on `info`'s adapter (`ln`: the layer norm is fused in):
    /// `ENGINE_MATVEC` when set
    /// (`whole`, or C4 then `s` for subgroups or `t` for the shared-memory tree: `1s`, `4t`;
    /// read once per process, for benchmarks), else the rule.
    ///
    /// Not a tuner family (`crate::tune`): the shapes split K into different slices (one, or
    /// 256 / c4) and fold the partial sums in different orders (subgroup sums or a
    /// shared-memory tree), so their results differ in the last bits, and the tuner only
    /// chooses between paths that give the same bits.
    fn pick(info: &crate::context::DeviceInfo, ln: bool) -> MatvecSplit {
        static FORCED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        let forced = FORCED.get_or_init(|| {
            // Kept as spelled: whether a subgroup shape fits is the adapter's, at each pick.
            crate::context::forced::forced("ENGINE_MATVEC", "whole, or 1, 2, 4 or 8 then s or t", |s| {
                MatvecSplit::parse(s, |_| true).map(|_| s.to_owned())
            })
        });
        if let Some(shape) = forced
            .as_deref()
            .and_then(|s| MatvecSplit::parse(s, |c4| MatvecSplit::subgroups_fit(info, c4)))
        {
            return shape;
        }
        if info.is_software() {
            return MatvecSplit::WholeColumns;
        }
        // Measured on the H200 (bench --only gemv, each ENGINE_MATVEC shape, GPT-2 124M's and
        // XL's projections; see benches/results/h200.md): subgroup sums at every shape; two
        // vec4 columns a workgroup for the products without a layer norm (XL's fc_proj 22.7
        // us against 26.1 at C4 = 4 and 38.0 at 8), four for those with one, where every
        // workgroup recomputes the row's moments and fewer workgroups pay that less often
        // (XL's qkv 22.2 us against 28.4 at C4 = 2; 124M's within 1% either way).
        let c4 = if ln { 4 } else { 2 };
        MatvecSplit::Split {
            c4,
            subgroups: MatvecSplit::subgroups_fit(info, c4),
        }
    }

    /// `ENGINE_MATVEC`'s spelling; a subgroup shape the adapter cannot run (`fits(c4)` false)
    /// falls back to the tree.
    fn parse(s: &str, fits: impl Fn(u32) -> bool) -> Option<MatvecSplit> {
        if s == "whole" {
            return Some(MatvecSplit::WholeColumns);
        }
        // Suffixes, not a split at len - 1: that byte may fall inside a character (a panic).
        let (c4, subgroups) = match (s.strip_suffix('s'), s.strip_suffix('t')) {
            (Some(c4), _) => (c4, true),
            (_, Some(c4)) => (c4, false),
            _ => return None,
        };
        let c4: u32 = c4.parse().ok().filter(|c| [1, 2, 4, 8].contains(c))?;
        Some(MatvecSplit::Split {
            c4,
            subgroups: subgroups && fits(c4),
        })
    }

    /// Whether the subgroup kernel runs correctly with `c4` columns: every subgroup holds at
    /// least max(c4, 4) invocations (see `ln_matvec_subgroup.wgsl`).
    fn subgroups_fit(info: &crate::context::DeviceInfo, c4: u32) -> bool {
        let (lo, hi) = info.subgroup_size;
        info.subgroups && lo >= c4.max(4) && hi <= 256
    }

    /// Every shape the adapter can run (the tests run each one).
    #[cfg(test)]
    fn all(info: &crate::context::DeviceInfo) -> Vec<MatvecSplit> {
        let mut v = vec![MatvecSplit::WholeColumns];
        for c4 in [1, 2, 4, 8] {
            v.push(MatvecSplit::Split { c4, subgroups: false });
            if MatvecSplit::subgroups_fit(info, c4) {
                v.push(MatvecSplit::Split { c4, subgroups: true });
            }
        }
        v
    }

    /// Columns one workgroup covers.
    fn columns(self) -> usize {
        match self {
            MatvecSplit::WholeColumns => 1024,
            MatvecSplit::Split { c4, .. } => 4 * c4 as usize,
        }
    }
}

pub(crate) fn check_row(op: &'static str, arg: &'static str, t: &Tensor, len: usize) -> Result<()> {
    let l = t.layout();
    if t.len() != len || !l.is_dense() {
        return Err(Error::shape(op, arg, format!("a dense row of {len} values"), t.shape()));
    }
    Ok(())
}

/// A layer norm applied to the matvec's input: weight (K,), bias (K,), epsilon.
pub(crate) type Norm<'a> = (&'a Tensor, &'a Tensor, f32);

/// The normalisation applied to the projection's input row first, if any.
#[derive(Clone, Copy)]
pub(crate) enum Prologue<'a> {
    /// x as it is.
    None,
    /// GPT-2's layer norm.
    Layer(Norm<'a>),
    /// Llama's RMS norm: weight (K,), epsilon (`ops::rms_norm`).
    Rms(&'a Tensor, f32),
    /// SwiGLU: x is a (2K,) row of gate then up, and the input is `silu(gate) * up`
    /// (`ops::swiglu`), so Llama's MLP gate needs no launch of its own.
    SwiGlu,
}

/// Where the projection's result goes.
pub(crate) enum Project<'a> {
    /// A new row (N,): `y`, or `gelu_tanh(y)`.
    New { gelu: bool },
    /// Added in place into this row (N,): the residual stream.
    Residual(&'a Tensor),
    /// The QKV split: q into a new row (C,), k and v into layer `layer` of the caches
    /// (L, H, P, D) at position state.pos; both caches are views of one buffer (`KvCache`).
    Qkv {
        k_cache: &'a Tensor,
        v_cache: &'a Tensor,
        layer: usize,
    },
}

/// `x (K) @ w (K, N) + bias (N)` (w F32, F16 or BF16; everything else F32), x normalised
/// first as `norm` says, the result stored as `to` says, by the kernel of shape `shape` (None:
/// the one [`MatvecSplit::pick`] picks for the device; the tests name each). Returns the new
/// row (N,) or (C,) for `New` and `Qkv`.
pub(crate) fn ln_matvec(
    x: &Tensor,
    norm: Prologue,
    w: &Tensor,
    bias: &Tensor,
    to: Project,
    st: &DecodeState,
    shape: Option<MatvecSplit>,
) -> Result<Option<Tensor>> {
    let op = "generate::ln_matvec";
    let ctx = x.context();
    let gpu = ctx.require_gpu(op)?;
    let shape =
        shape.unwrap_or_else(|| MatvecSplit::pick(&gpu.info, matches!(norm, Prologue::Layer(..) | Prologue::Rms(..))));
    let l = w.layout();
    if w.rank() != 2 || l.strides[1] != 1 || l.strides[0] != w.shape()[1] {
        return Err(Error::shape(op, "w", "a dense (K, N) matrix", w.shape()));
    }
    let (k, n) = (w.shape()[0], w.shape()[1]);
    if !n.is_multiple_of(4) || !l.offset.is_multiple_of(4) {
        return Err(Error::Unsupported {
            op,
            message: format!(
                "w {:?} at offset {}: N and the offset must be multiples of 4",
                w.shape(),
                l.offset
            ),
        });
    }
    let swiglu = matches!(norm, Prologue::SwiGlu);
    check_row(op, "x", x, if swiglu { 2 * k } else { k })?;
    check_row(op, "bias", bias, n)?;
    // An unread slot takes x: it is bound read-only already, so no usage conflict.
    let (ln_w, ln_b, eps) = match norm {
        Prologue::Layer((g, b, eps)) => {
            check_row(op, "ln weight", g, k)?;
            check_row(op, "ln bias", b, k)?;
            (g, b, eps)
        }
        Prologue::Rms(g, eps) => {
            check_row(op, "rms weight", g, k)?;
            (g, x, eps)
        }
        Prologue::None | Prologue::SwiGlu => (x, x, 0.0),
    };
    let (mut c, mut d, mut positions, mut k_off, mut v_off) = (0, 0, 0, 0, 0);
    let (epilogue, out, kv) = match to {
        // The cache slot is unused here but must not alias `out`: browsers reject two
        // writable bindings of one buffer in a dispatch.
        Project::New { gelu } => (
            u32::from(gelu),
            Tensor::uninit(ctx, &[n], op)?,
            Tensor::uninit(ctx, &[1], op)?,
        ),
        Project::Residual(r) => {
            check_row(op, "residual", r, n)?;
            (2, r.clone(), Tensor::uninit(ctx, &[1], op)?)
        }
        Project::Qkv {
            k_cache,
            v_cache,
            layer,
        } => {
            let s = k_cache.shape();
            (c, d, positions) = (n / 3, s[3], s[2]);
            let dense = |t: &Tensor| t.layout().is_dense() && t.shape() == s;
            if s.len() != 4 || !dense(k_cache) || !dense(v_cache) || k_cache.buffer() != v_cache.buffer() {
                return Err(Error::mismatch(
                    op,
                    "k_cache (L, H, P, D)",
                    s,
                    "v_cache in the same buffer",
                    v_cache.shape(),
                ));
            }
            if !n.is_multiple_of(3) || s[1] * s[3] != c || layer >= s[0] {
                return Err(Error::shape(
                    op,
                    "k_cache",
                    format!("(L > {layer}, H, P, D) with H * D = {}", n / 3),
                    s,
                ));
            }
            let per_layer = s[1] * s[2] * s[3];
            k_off = k_cache.layout().offset + layer * per_layer;
            v_off = v_cache.layout().offset + layer * per_layer;
            (3, Tensor::uninit(ctx, &[c], op)?, k_cache.clone())
        }
    };
    let params = Params::new()
        .usize(n)
        .usize(x.layout().offset)
        .usize(l.offset / 4)
        .usize(bias.layout().offset)
        .usize(out.layout().offset)
        .usize(ln_w.layout().offset)
        .usize(ln_b.layout().offset)
        .f32(eps)
        .usize(c)
        .usize(d)
        .usize(positions)
        .usize(k_off)
        .usize(v_off);
    let (def, c4) = match shape {
        MatvecSplit::WholeColumns => (&LN_MATVEC, 1),
        MatvecSplit::Split { c4, subgroups: true } => (&LN_MATVEC_SUBGROUP, c4),
        MatvecSplit::Split { c4, subgroups: false } => (&LN_MATVEC, c4),
    };
    let kernel = gpu.typed_kernel(
        def,
        &[("w", w.dtype())],
        &[
            (
                "LN",
                f64::from(u8::from(matches!(norm, Prologue::Layer(..) | Prologue::Rms(..)))),
            ),
            ("RMS", f64::from(u8::from(matches!(norm, Prologue::Rms(..))))),
            ("SWIGLU", f64::from(u8::from(swiglu))),
            ("EPILOGUE", f64::from(epilogue)),
            ("WHOLE_COLUMNS", f64::from(u8::from(shape == MatvecSplit::WholeColumns))),
            ("K", k as f64),
            ("C4", f64::from(c4)),
        ],
    )?;
    let buffers = [
        st.state.gpu_buffer(op)?,
        x.gpu_buffer(op)?,
        ln_w.gpu_buffer(op)?,
        ln_b.gpu_buffer(op)?,
        w.typed_buffer(op)?,
        bias.gpu_buffer(op)?,
        out.gpu_buffer(op)?,
        kv.gpu_buffer(op)?,
    ];
    gpu.dispatch(
        &kernel,
        &params,
        &buffers,
        groups_1d(n.div_ceil(shape.columns()) as u32),
    )?;
    Ok((epilogue != 2).then_some(out))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{ln_matvec, MatvecSplit, Project, Prologue};
    use crate::check::Rng;
    use crate::generate::device::{DecodeState, DeviceSampling};
    use crate::{Context, DType, Tensor};

    /// y = xn @ w + bias (f64), xn the layer-normed x when `ln`.
    pub(crate) fn reference(x: &[f32], g: &[f32], b: &[f32], w: &[f32], bias: &[f32], ln: bool) -> Vec<f64> {
        let k = x.len();
        let n = bias.len();
        let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / k as f64;
        let var = x.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / k as f64;
        let rstd = 1.0 / (var + 1e-5).sqrt();
        let xn: Vec<f64> = (0..k)
            .map(|i| {
                let v = f64::from(x[i]);
                if ln {
                    (v - mean) * rstd * f64::from(g[i]) + f64::from(b[i])
                } else {
                    v
                }
            })
            .collect();
        (0..n)
            .map(|j| (0..k).map(|i| xn[i] * f64::from(w[i * n + j])).sum::<f64>() + f64::from(bias[j]))
            .collect()
    }

    /// `ENGINE_MATVEC`'s spellings, and values it refuses without a panic (a character of
    /// more than one byte at the end among them).
    #[test]
    fn the_forced_projection_shape_parses_or_refuses() {
        let parse = |s| MatvecSplit::parse(s, |_| true);
        assert_eq!(parse("whole"), Some(MatvecSplit::WholeColumns));
        assert_eq!(parse("4s"), Some(MatvecSplit::Split { c4: 4, subgroups: true }));
        assert_eq!(
            parse("2t"),
            Some(MatvecSplit::Split {
                c4: 2,
                subgroups: false
            })
        );
        assert_eq!(
            MatvecSplit::parse("8s", |_| false),
            Some(MatvecSplit::Split {
                c4: 8,
                subgroups: false
            })
        );
        for bad in ["", "s", "3s", "4x", "4é", "é", "16t"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    /// Every kernel shape the adapter runs (the GPU shapes too, on CPU adapters) at K that is
    /// no multiple of 4, of a slice count or of a chunk, with and without the layer norm, f32
    /// and f16 weights, and the GELU and residual epilogues on one shape (each case is a
    /// pipeline of its own, which lavapipe takes a while to compile), against an f64 reference.
    /// The last case covers many workgroups of every shape.
    #[test]
    fn every_projection_shape_matches_the_reference() {
        let ctx = Context::new().expect("a context");
        if ctx.require_gpu("test").is_err() {
            return;
        }
        let st = DecodeState::new(&ctx, 4).unwrap();
        st.reset(
            0,
            0,
            DeviceSampling {
                top_k: 1,
                temperature: 1.0,
                seed: 0,
            },
        )
        .unwrap();
        let shapes = MatvecSplit::all(ctx.info());
        eprintln!("projection shapes on {}: {shapes:?}", ctx.info().name);
        let mut rng = Rng::new(31);
        // (K, N, layer norm, weights, x's magnitude): the last, a row whose squares overflow
        // f32 unless the kernel scales it first.
        let cases = [
            (300, 36, true, DType::F32, 1.0),
            (515, 12, false, DType::F16, 1.0),
            (300, 36, true, DType::F16, 1.0),
            (769, 1028, true, DType::F32, 1.0),
            (300, 36, true, DType::F32, 1e37),
        ];
        for (case, &(k, n, ln, dtype, magnitude)) in cases.iter().enumerate() {
            let x: Vec<f32> = rng.vec_range(k, -2.0, 3.0).iter().map(|v| v * magnitude).collect();
            let g = rng.vec_range(k, 0.5, 1.5);
            let b = rng.vec_range(k, -0.5, 0.5);
            let w = rng.vec_range(k * n, -1.0, 1.0);
            let bias = rng.vec_range(n, -1.0, 1.0);
            let r0 = rng.vec_range(n, -1.0, 1.0);
            let [xt, gt, bt, biast] = [&x, &g, &b, &bias].map(|v| Tensor::from_slice(&ctx, &[v.len()], v).unwrap());
            let wt = Tensor::from_slice_as(&ctx, &[k, n], &w, dtype).unwrap();
            // The weights as the kernel sees them (rounded to f16 for the half case).
            let wv = wt.to_vec().unwrap();
            let want = reference(&x, &g, &b, &wv, &bias, ln);
            let norm = if ln {
                Prologue::Layer((&gt, &bt, 1e-5))
            } else {
                Prologue::None
            };
            // Sums of k terms of magnitude up to ~3 each, in f32.
            let tol = 4e-5 * k as f64;
            let close = |got: f32, want: f64| (f64::from(got) - want).abs() <= tol * (1.0 + want.abs());
            // Llama's RMS norm in front, on the CPU shape and the first GPU one.
            if ln {
                let ms = x.iter().map(|&v| f64::from(v).powi(2)).sum::<f64>() / k as f64;
                let rstd = 1.0 / (ms + 1e-5).sqrt();
                for &shape in &shapes[..shapes.len().min(2)] {
                    let to = Project::New { gelu: false };
                    let y = ln_matvec(&xt, Prologue::Rms(&gt, 1e-5), &wt, &biast, to, &st, Some(shape));
                    let y = y.unwrap().unwrap().to_vec().unwrap();
                    for j in 0..n {
                        let dot = (0..k).map(|i| f64::from(x[i]) * rstd * f64::from(g[i]) * f64::from(wv[i * n + j]));
                        let want = dot.sum::<f64>() + f64::from(bias[j]);
                        assert!(
                            close(y[j], want),
                            "K {k} N {n} {shape:?} rms: y[{j}] = {} against {want}",
                            y[j]
                        );
                    }
                }
            }
            // The SwiGLU prologue: x and a second row as gate and up, on the same two shapes.
            if !ln {
                let up = rng.vec_range(k, -2.0, 2.0);
                let gate_up = Tensor::from_slice(&ctx, &[2 * k], &[x.clone(), up.clone()].concat()).unwrap();
                let gated: Vec<f64> = (0..k)
                    .map(|i| {
                        let g = f64::from(x[i]);
                        g / (1.0 + (-g).exp()) * f64::from(up[i])
                    })
                    .collect();
                for &shape in &shapes[..shapes.len().min(2)] {
                    let to = Project::New { gelu: false };
                    let y = ln_matvec(&gate_up, Prologue::SwiGlu, &wt, &biast, to, &st, Some(shape));
                    let y = y.unwrap().unwrap().to_vec().unwrap();
                    for j in 0..n {
                        let dot = (0..k).map(|i| gated[i] * f64::from(wv[i * n + j])).sum::<f64>();
                        let want = dot + f64::from(bias[j]);
                        assert!(
                            close(y[j], want),
                            "K {k} N {n} {shape:?} swiglu: y[{j}] = {} against {want}",
                            y[j]
                        );
                    }
                }
            }
            // The epilogues run in the first case, on the CPU shape and the first GPU one.
            for &shape in &shapes {
                let what = format!("K {k} N {n} {dtype:?} {shape:?} ln {ln}");
                let project = |to| ln_matvec(&xt, norm, &wt, &biast, to, &st, Some(shape)).unwrap();
                let y = project(Project::New { gelu: false }).unwrap().to_vec().unwrap();
                for j in 0..n {
                    assert!(close(y[j], want[j]), "{what}: y[{j}] = {} against {}", y[j], want[j]);
                }
                if case != 0 || !shapes[..2].contains(&shape) {
                    continue;
                }
                let gelu = project(Project::New { gelu: true }).unwrap().to_vec().unwrap();
                let res = Tensor::from_slice(&ctx, &[n], &r0).unwrap();
                project(Project::Residual(&res));
                let res = res.to_vec().unwrap();
                for j in 0..n {
                    let y0 = want[j];
                    let c = (2.0 / std::f64::consts::PI).sqrt();
                    let gl = 0.5 * y0 * (1.0 + (c * (y0 + 0.044715 * y0.powi(3))).tanh());
                    assert!(close(gelu[j], gl), "{what}: gelu[{j}] = {} against {gl}", gelu[j]);
                    let r = f64::from(r0[j]) + y0;
                    assert!(close(res[j], r), "{what}: residual[{j}] = {} against {r}", res[j]);
                }
            }
        }
    }
}
