//! Matrix products over strided, batched views: `matmul`, `linear` (bias fused),
//! `linear_residual` (bias + residual add fused) and `linear_gelu` (bias + GELU fused into the
//! epilogue); for the crate, `matmul_scaled` (a scale, attention's scores) and
//! `matmul_accumulate` (a running sum added in the epilogue). The epilogue is this op's own
//! fusion and lives here with it ([`crate::fused`] says where the other fused kernels go).
//!
//! Six kernels and the split-K sum share one uniform (`shaders/ops/matmul/common.wgsl`): the
//! readable 16x16 shared-memory tile (`tiled16.wgsl`), a 64x64 block with 4x4 register tiles
//! and vec4 loads (`register_tiled.wgsl`), a 128x128 block with 8x8 register tiles
//! (`large_tile.wgsl`), a row-times-matrix kernel for M = 1 (`matvec.wgsl`, with a subgroup
//! variant `matvec_subgroup.wgsl` where the adapter has subgroups of <= 32), F16 products on
//! the matrix units (`cooperative.wgsl`, on request), and the sum over the K-slices of a
//! split-K product, with the epilogue (`split_k_sum.wgsl`). Operands are read through their
//! strides and offsets, so transposed and narrowed views never copy; batch axes broadcast
//! numpy-style. The output is dense. CPU context: `reference::matmul`.
//!
//! Dtypes: b (the weights) may be F16 or BF16 with a F32 or of b's dtype; the kernels read
//! each operand through its dtype slot (`kernel::dtype`), widen to f32 and accumulate in
//! f32; the output, bias and residual are F32.
//!
//! Three files, after burn's `kernel/matmul/{base, tune}`: this one holds the public ops,
//! their checks and the CPU path; `select` chooses the kernel ([`MatmulPath`]'s `Auto`
//! rules, the split-K decision, the cooperative kernel's refusals, the tuner seam);
//! `launch` records it (the uniform, the workgroup grid, the bindings, the split-K sum).

mod launch;
mod select;

pub use select::MatmulPath;

use crate::error::{Error, Result};
use crate::reference;
use crate::shape::{matmul_shapes, DType};
use crate::tensor::Tensor;

/// An item for [`crate::Context::tune`]: `a (..., M, K) @ b (..., K, N)` with `b` in `dtype`
/// (and `a` too when `dtype` is F32, else `a` F32), on dense inputs, as [`matmul`] and the
/// linear layers run it.
pub fn tune_matmul(a: &[usize], b: &[usize], dtype: DType) -> crate::context::TuneItem {
    let (a, b) = (a.to_vec(), b.to_vec());
    crate::context::TuneItem::new(
        crate::tune::Family::Matmul,
        format!("matmul {a:?} @ {b:?} {dtype}"),
        move |ctx| {
            let x = Tensor::zeros(ctx, &a)?;
            let w = Tensor::zeros(ctx, &b)?;
            let w = if dtype == DType::F32 { w } else { w.to_dtype(dtype)? };
            matmul(&x, &w).map(drop)
        },
    )
}

/// What the epilogue does to each output element after scaling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Epilogue {
    None = 0,
    Bias = 1,
    BiasGelu = 2,
    /// `+ bias[j] + residual[i, j]`, the residual a dense (M, N) view passed alongside.
    BiasResidual = 3,
    /// `+ residual[i, j]`: a product accumulated into a running sum ([`matmul_accumulate`]).
    Residual = 4,
}

/// The epilogue and the tensors it reads.
#[derive(Clone, Copy)]
struct Ep<'a> {
    kind: Epilogue,
    bias: Option<&'a Tensor>,
    residual: Option<&'a Tensor>,
}

impl Ep<'_> {
    const NONE: Ep<'static> = Ep {
        kind: Epilogue::None,
        bias: None,
        residual: None,
    };
}

/// `a @ b`. a (..., M, K), b (..., K, N) -> (..., M, N); batch axes broadcast; any strided
/// views (transposes, narrows) are read in place.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    matmul_with(a, b, MatmulPath::Auto)
}

/// [`matmul`] on a forced kernel (tests and benchmarks). `Matvec` needs M = 1.
pub fn matmul_with(a: &Tensor, b: &Tensor, path: MatmulPath) -> Result<Tensor> {
    gemm("matmul", a, b, 1.0, Ep::NONE, path)
}

/// `acc + a @ b` for 2-d a (M, K), b (K, N) and a dense acc (M, N): a sum of products kept
/// in one running tensor, the add in the product's epilogue (a separate add reads two (M, N)
/// tensors and writes a third).
pub(crate) fn matmul_accumulate(a: &Tensor, b: &Tensor, acc: &Tensor) -> Result<Tensor> {
    let op = "matmul_accumulate";
    let s = matmul_shapes(op, a.shape(), b.shape())?;
    for (arg, t) in [("a", a), ("b", b)] {
        if t.rank() != 2 {
            return Err(Error::shape(op, arg, "a matrix (2-d)", t.shape()));
        }
    }
    if acc.shape() != [s.m, s.n] || !acc.layout().is_dense() {
        return Err(Error::shape(
            op,
            "acc",
            format!("a dense [{}, {}] (a (M, K) @ b (K, N))", s.m, s.n),
            acc.shape(),
        ));
    }
    let ep = Ep {
        kind: Epilogue::Residual,
        bias: None,
        residual: Some(acc),
    };
    gemm(op, a, b, 1.0, ep, MatmulPath::Auto)
}

/// `alpha * (a @ b)` (attention scores), the scale fused into the epilogue.
pub(crate) fn matmul_scaled(a: &Tensor, b: &Tensor, alpha: f32) -> Result<Tensor> {
    gemm("matmul", a, b, alpha, Ep::NONE, MatmulPath::Auto)
}

/// `x @ w + bias` (HF Conv1D stores w as (in, out)). x (..., K), w (K, N), bias (N,) ->
/// (..., N). The bias add is fused into the matmul's epilogue.
pub fn linear(x: &Tensor, w: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    let epilogue = if bias.is_some() { Epilogue::Bias } else { Epilogue::None };
    linear_impl("linear", x, w, bias, None, epilogue)
}

/// `residual + x @ w + bias`, bias and the residual add fused into the matmul's epilogue
/// (the transformer block's output projections). x (..., K), w (K, N), bias (N,),
/// residual (..., N) dense -> (..., N).
pub fn linear_residual(x: &Tensor, w: &Tensor, bias: &Tensor, residual: &Tensor) -> Result<Tensor> {
    linear_impl(
        "linear_residual",
        x,
        w,
        Some(bias),
        Some(residual),
        Epilogue::BiasResidual,
    )
}

/// `gelu_tanh(x @ w + bias)`, bias and GELU fused into the matmul's epilogue; the bias is
/// optional as in [`linear`] (without one, the matmul and then `ops::gelu`: two dispatches,
/// since the epilogue's GELU reads a bias). x (..., K), w (K, N), bias (N,) -> (..., N).
pub fn linear_gelu(x: &Tensor, w: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
    match bias {
        Some(b) => linear_impl("linear_gelu", x, w, Some(b), None, Epilogue::BiasGelu),
        None => crate::ops::gelu(&linear_impl("linear_gelu", x, w, None, None, Epilogue::None)?),
    }
}

fn linear_impl(
    op: &'static str,
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    residual: Option<&Tensor>,
    kind: Epilogue,
) -> Result<Tensor> {
    let Some((&k, lead)) = x.shape().split_last() else {
        return Err(Error::shape(op, "x", "rank >= 1 (..., K)", x.shape()));
    };
    if w.rank() != 2 || w.shape()[0] != k {
        return Err(Error::mismatch(op, "x (..., K)", x.shape(), "w (K, N)", w.shape()));
    }
    let n = w.shape()[1];
    if let Some(b) = bias {
        if b.shape() != [n] {
            return Err(Error::shape(
                op,
                "bias",
                format!("[{n}] (N of w {:?})", w.shape()),
                b.shape(),
            ));
        }
    }
    // One (rows, K) matrix when x's leading axes merge without a copy (the common case);
    // otherwise the strided view goes in as a batch and w broadcasts over it.
    let rows: usize = lead.iter().product();
    let x2 = if x.layout().is_dense() {
        x.reshape(&[rows, k])?
    } else if x.rank() >= 2 {
        x.clone()
    } else {
        x.reshape(&[1, k])?
    };
    let mut shape = lead.to_vec();
    shape.push(n);
    let residual = match residual {
        Some(r) if r.shape() != shape.as_slice() || !r.layout().is_dense() => {
            return Err(Error::shape(
                op,
                "residual",
                format!("a dense {shape:?} like the output"),
                r.shape(),
            ));
        }
        Some(r) => Some(r.reshape(&[rows, n])?),
        None => None,
    };
    let ep = Ep {
        kind,
        bias,
        residual: residual.as_ref(),
    };
    let y = gemm(op, &x2, w, 1.0, ep, MatmulPath::Auto)?;
    y.reshape(&shape)
}

/// `x @ w` as the partial products a fused consumer sums itself: x (M, K), w (K, N) ->
/// (S, M, N), the products over S K-slices (S = 1 when the product is not split; see
/// `split_k`). A consumer that adds `sum_s parts[s] + bias` in slice order gets what
/// [`linear`] computes, and saves the dispatch that would sum the slices.
pub(crate) fn linear_parts(op: &'static str, x: &Tensor, w: &Tensor) -> Result<Tensor> {
    let s = matmul_shapes(op, x.shape(), w.shape())?;
    if x.rank() != 2 {
        return Err(Error::shape(op, "x", "(M, K)", x.shape()));
    }
    match select::split_k(&s) {
        Some(splits) if x.context().is_gpu() => launch::slice_products(op, x, w, &s, splits),
        _ => gemm(op, x, w, 1.0, Ep::NONE, MatmulPath::Auto)?.reshape(&[1, s.m, s.n]),
    }
}

/// The operand dtypes the kernels take: b F32, F16 or BF16; a F32 or b's dtype; the bias
/// and the residual F32.
fn check_dtypes(op: &'static str, a: &Tensor, b: &Tensor, ep: Ep) -> Result<()> {
    if a.dtype() != DType::F32 && a.dtype() != b.dtype() {
        return Err(Error::DType {
            op,
            arg: "a",
            expected: format!("F32, or b's dtype ({})", b.dtype()),
            actual: a.dtype().to_string(),
        });
    }
    for (arg, t) in [("bias", ep.bias), ("residual", ep.residual)] {
        if let Some(t) = t {
            t.expect_dtype(op, arg, &[DType::F32])?;
        }
    }
    Ok(())
}

/// `epilogue(alpha * (a @ b))` on `path`: the checks every product shares, then the CPU
/// reference, or on a GPU the split-K products (`Auto` with few output tiles) or the kernel
/// [`select::choose`] picks, recorded by [`launch::record`].
fn gemm(op: &'static str, a: &Tensor, b: &Tensor, alpha: f32, ep: Ep, path: MatmulPath) -> Result<Tensor> {
    let ctx = a.context();
    b.expect_context(ctx, op, "b")?;
    if let Some(t) = ep.bias {
        t.expect_context(ctx, op, "bias")?;
    }
    if let Some(t) = ep.residual {
        t.expect_context(ctx, op, "residual")?;
    }
    check_dtypes(op, a, b, ep)?;
    let s = matmul_shapes(op, a.shape(), b.shape())?;
    if path == MatmulPath::Matvec && s.m != 1 {
        return Err(Error::shape(op, "a", "M = 1 for MatmulPath::Matvec", a.shape()));
    }
    let Some(gpu) = ctx.gpu() else {
        return host_gemm(op, a, b, alpha, ep);
    };
    let operands = launch::Operands::new(op, a, b, s.clone())?;
    let cooperative = path == MatmulPath::Auto && select::refusal_of(gpu, (a, b), &operands).is_none();
    if path == MatmulPath::Auto {
        // The slices' batched product takes the matrix units where the whole would have.
        let splits = match cooperative {
            true => select::split_k_cooperative(&s),
            false => select::split_k(&s),
        };
        if let Some(splits) = splits {
            return launch::gemm_split_k(op, a, b, &s, splits, alpha, ep);
        }
    }
    let mut out_shape = s.batch.clone();
    out_shape.extend([s.m, s.n]);
    let out = Tensor::uninit(ctx, &out_shape, op)?;
    if out.is_empty() {
        return Ok(out);
    }
    // The matrix units read transposes as they lie: no dense copies for them.
    let (da, db) = match path {
        MatmulPath::Auto if !cooperative => select::densify(&s, &operands, a, b),
        _ => (false, false),
    };
    let (a, b) = (
        &if da { a.contiguous()? } else { a.clone() },
        &if db { b.contiguous()? } else { b.clone() },
    );
    let operands = if da || db {
        launch::Operands::new(op, a, b, s)?
    } else {
        operands
    };
    // `choose` would take the matrix units for these operands too: its check is made once.
    let chosen = match cooperative {
        true => MatmulPath::Cooperative,
        false => select::choose(op, gpu, (a, b), alpha, ep, path, &operands)?,
    };
    launch::record(op, (a, b), alpha, ep, chosen, &operands, &out)?;
    Ok(out)
}

/// [`gemm`] on the CPU context: the reference product, then the epilogue in f64.
fn host_gemm(op: &'static str, a: &Tensor, b: &Tensor, alpha: f32, ep: Ep) -> Result<Tensor> {
    // Borrowed views, not copies: a decode step's products read every weight once.
    let mut y = if a.shares_host_buffer(b) {
        let ah = a.host_widened(op)?;
        b.with_host_view(op, |bv| reference::matmul::matmul(&ah.view(), &bv))?
    } else {
        a.with_host_view(op, |av| b.with_host_view(op, |bv| reference::matmul::matmul(&av, &bv)))?
    };
    let bias = ep.bias.map(|t| t.host(op)).transpose()?;
    let last = ndarray::Axis(y.ndim() - 1);
    for mut row in y.lanes_mut(last) {
        for (j, v) in row.iter_mut().enumerate() {
            let x = *v as f64 * alpha as f64 + bias.as_ref().map_or(0.0, |b| b[[j]] as f64);
            *v = match ep.kind {
                Epilogue::BiasGelu => reference::nn::gelu_scalar(x),
                _ => x,
            } as f32;
        }
    }
    if let Some(r) = ep.residual {
        y = (&y
            + &r.host(op)?
                .into_shape_with_order(y.raw_dim())
                .map_err(|e| Error::Map(e.to_string()))?)
            .as_standard_layout()
            .to_owned();
    }
    Tensor::from_host(a.context(), y)
}
