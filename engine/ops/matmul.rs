//! Matrix products over strided, batched views: `matmul`, `linear` (bias fused) and
//! `linear_gelu` (bias + GELU fused into the epilogue).
//!
//! Three kernels share one uniform (`shaders/matmul/common.wgsl`): the readable 16x16
//! shared-memory tile (`tiled16.wgsl`), a 64x64 block with 4x4 register tiles and vec4 loads
//! (`register_tiled.wgsl`) and a row-times-matrix kernel for M = 1 (`matvec.wgsl`, with a
//! subgroup variant `matvec_subgroup.wgsl` where the adapter has subgroups of <= 32). Operands
//! are read through their strides and offsets, so transposed and narrowed views never copy;
//! batch axes broadcast numpy-style. The output is dense. CPU context: `reference::matmul`.
//!
//! Dtypes: b (the weights) may be F16 or BF16 with a F32 or of b's dtype; the kernels read
//! each operand through its dtype slot (`kernel::dtype`), widen to f32 and accumulate in
//! f32; the output, bias and residual are F32.

use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::reference;
use crate::shape::{broadcast_strides, collapse, matmul_shapes, DType, Layout, MatmulShape};
use crate::tensor::Tensor;

const TILED16: KernelDef = KernelDef::new("matmul/tiled16", shader!("matmul/tiled16.wgsl"), "tiled16");

const REGISTER_TILED: KernelDef = KernelDef::new(
    "matmul/register_tiled",
    shader!("matmul/register_tiled.wgsl"),
    "register_tiled",
);

const LARGE_TILE: KernelDef = KernelDef::new("matmul/large_tile", shader!("matmul/large_tile.wgsl"), "large_tile");

/// 128 x 128 tiles `Auto` wants before it picks [`MatmulPath::LargeTile`]: fewer leave a large
/// GPU's multiprocessors idle, where the 64 x 64 kernel's four times as many tiles fill it.
const LARGE_TILE_MIN_TILES: usize = 256;

const COOPERATIVE: KernelDef = KernelDef::new("matmul/cooperative", shader!("matmul/cooperative.wgsl"), "cooperative");

/// Why the cooperative-matrix kernel cannot take this product (`None`: it can). `strides` are
/// a's and b's (row, column) strides, `batch` their strides over the collapsed batch axes.
fn cooperative_refusal(
    gpu_has_it: bool,
    a: &Tensor,
    b: &Tensor,
    s: &MatmulShape,
    strides: [(usize, usize); 2],
    batch: [&[usize]; 2],
) -> Option<String> {
    if !gpu_has_it {
        return Some(format!(
            "this context has no cooperative matrices (they need ENGINE_EXPERIMENTAL={} and an adapter with 16x16x16 f16 -> f32)",
            crate::context::COOPERATIVE_MATRIX
        ));
    }
    if a.dtype() != DType::F16 || b.dtype() != DType::F16 {
        return Some(format!(
            "a {} and b {}: the kernel takes F16 operands",
            a.dtype(),
            b.dtype()
        ));
    }
    if !s.m.is_multiple_of(64) || !s.n.is_multiple_of(64) || !s.k.is_multiple_of(16) {
        return Some(format!(
            "M {}, N {}, K {}: the kernel takes M and N multiples of 64, K of 16",
            s.m, s.n, s.k
        ));
    }
    let offsets = [a.layout().offset, b.layout().offset];
    for (i, name) in ["a", "b"].into_iter().enumerate() {
        let (rs, cs) = strides[i];
        if cs != 1
            || !rs.is_multiple_of(8)
            || !offsets[i].is_multiple_of(8)
            || batch[i].iter().any(|v| !v.is_multiple_of(8))
        {
            return Some(format!(
                "{name}: strides ({rs}, {cs}), offset {}, batch strides {:?}: the kernel loads 16-byte rows (inner axis dense, the rest multiples of 8 elements)",
                offsets[i], batch[i]
            ));
        }
    }
    None
}

const MATVEC: KernelDef = KernelDef::new("matmul/matvec", shader!("matmul/matvec.wgsl"), "matvec");

const SPLIT_K_SUM: KernelDef = KernelDef::new("matmul/split_k_sum", shader!("matmul/split_k_sum.wgsl"), "split_k_sum");

// No `enable subgroups;`: naga 30 rejects the directive and exposes the subgroup
// builtins whenever the device has the SUBGROUP feature.
const MATVEC_SUBGROUP: KernelDef = KernelDef::new(
    "matmul/matvec_subgroup",
    shader!("matmul/matvec_subgroup.wgsl"),
    "matvec_subgroup",
);

/// Batch axes the kernels address after merging dense ones.
const MAX_BATCH_RANK: usize = 4;
/// Workgroups along one dispatch axis.
const MAX_GROUPS: usize = 65535;

/// Which matmul kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatmulPath {
    /// Picked by shape: `Vector` for one row, `LargeTile` for large products with both
    /// operands vec4-aligned, `RegisterTiled` when both M and N fill a 64 tile, `Tiled16`
    /// otherwise (the hand rule); then the tuner (`crate::tune`, `ENGINE_TUNE`) may give a
    /// tile kernel's product to another of [`MatmulPath::TILES`] measured faster here.
    Auto,
    /// The readable 16x16 shared-memory tile of seed 004.
    Tiled16,
    /// 64x64 block tile, 4x4 register tile per invocation, vec4 loads when aligned.
    RegisterTiled,
    /// 128x128 block tile, 8x8 register tile per invocation; both operands' inner axes dense
    /// and vec4-aligned (forced on other operands: `Error::Fallback`).
    LargeTile,
    /// Row times matrix; only for M = 1.
    Vector,
    /// F16 `a` and `b` on the adapter's matrix units through wgpu's experimental cooperative
    /// matrices (16 x 16 x 16 tiles, f32 accumulation, `shaders/matmul/cooperative.wgsl`),
    /// where the context has them ([`crate::context::DeviceInfo::cooperative_matrix`], on
    /// request: `ENGINE_EXPERIMENTAL=cooperative-matrix`). M and N multiples of 64, K of 16;
    /// both inner axes dense; offsets, row and batch strides multiples of 8 elements. `Auto`
    /// picks it for operands that qualify; forced on others: `Error::Fallback`.
    Cooperative,
}

impl MatmulPath {
    /// The paths that can be forced (every one but `Auto`), for tests and benchmarks.
    pub const FORCED: [MatmulPath; 4] = [Self::Tiled16, Self::RegisterTiled, Self::LargeTile, Self::Vector];

    /// The tile kernels the tuner chooses between (`crate::tune::Family::Matmul`). Each
    /// output element is one f32 accumulator walking K from 0 up with one `fma` per step
    /// (zero-padded past K: `fma(0, 0, acc)` is `acc`), then the one epilogue of
    /// `common.wgsl`: the same bits whichever runs. Not interchangeable with them, so never
    /// candidates: `Vector` (K split across a workgroup, then a tree sum), split-K (partial
    /// sums over K-slices) and `Cooperative` (the matrix units' own order).
    pub const TILES: [MatmulPath; 3] = [Self::Tiled16, Self::RegisterTiled, Self::LargeTile];

    /// The path's name in the tune cache, the plan dump and reports: its kernel's file name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Tiled16 => "tiled16",
            Self::RegisterTiled => "register_tiled",
            Self::LargeTile => "large_tile",
            Self::Vector => "matvec",
            Self::Cooperative => "cooperative",
        }
    }
}

/// The tuner's shape key of a product: batch, M, N, K bucketed with their classes mod 4, the
/// dtypes, and which operands load as vec4s (which decides whether `LargeTile` may run).
fn tune_key(s: &MatmulShape, batch: usize, dtypes: (DType, DType), vec: (bool, bool)) -> String {
    let (a, b) = (dtypes.0.to_string(), dtypes.1.to_string());
    crate::tune::key::shape_key(
        &[("b", batch), ("m", s.m), ("n", s.n), ("k", s.k)],
        &[("m", s.m), ("n", s.n), ("k", s.k)],
        &[
            &a,
            &b,
            if vec.0 { "vec_a" } else { "" },
            if vec.1 { "vec_b" } else { "" },
        ],
    )
}

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

/// [`matmul`] on a forced kernel (tests and benchmarks). `Vector` needs M = 1.
pub fn matmul_with(a: &Tensor, b: &Tensor, path: MatmulPath) -> Result<Tensor> {
    gemm("matmul", a, b, 1.0, Ep::NONE, path)
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

/// `gelu_tanh(x @ w + bias)`, bias and GELU fused into the matmul's epilogue.
/// x (..., K), w (K, N), bias (N,) -> (..., N).
pub fn linear_gelu(x: &Tensor, w: &Tensor, bias: &Tensor) -> Result<Tensor> {
    linear_impl("linear_gelu", x, w, Some(bias), None, Epilogue::BiasGelu)
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

/// How many K-slices a 2-d product should be split into, when its output has too few 64 x 64
/// tiles to fill a GPU: the weight gradients of a layer ((Dm, B T) @ (B T, N): a 64 x 64
/// output over K = 8192 was one workgroup walking all of K) and GPT-2's prefill projections
/// (M = 64 rows: 12 to 48 tiles, the K = 3072 projection one walk of 3072 per tile). The
/// slices divide K evenly, each at least `MIN_SLICE` long and a multiple of 4 (so vec4 loads
/// stay aligned), and the tiles times the slices stay at most `TARGET` workgroups. `None`: no
/// split.
fn split_k(s: &MatmulShape) -> Option<usize> {
    const MIN_SLICE: usize = 64;
    const TARGET: usize = 512;
    let tiles = s.m.div_ceil(64) * s.n.div_ceil(64);
    // An empty output (m or n = 0) has no tiles and nothing to split.
    if !s.batch.is_empty() || s.m < 16 || s.n == 0 || tiles >= TARGET / 4 || s.k < 2 * MIN_SLICE {
        return None;
    }
    let mut splits = 1;
    while splits * 2 * tiles <= TARGET
        && s.k.is_multiple_of(splits * 2)
        && s.k / (splits * 2) >= MIN_SLICE
        && (s.k / (splits * 2)).is_multiple_of(4)
    {
        splits *= 2;
    }
    (splits > 1).then_some(splits)
}

/// a (M, K) @ b (K, N) as `splits` products over K-slices, a (S, M, K/S) @ b (S, K/S, N)
/// viewed in place, then summed over the slices with the product's epilogue applied
/// (`split_k_sum.wgsl`): every element's sum is split, not rounded worse.
fn gemm_split_k(
    op: &'static str,
    a: &Tensor,
    b: &Tensor,
    s: &MatmulShape,
    splits: usize,
    alpha: f32,
    ep: Ep,
) -> Result<Tensor> {
    let parts = slice_products(op, a, b, s, splits)?; // (S, M, N)
    let ctx = a.context();
    let gpu = ctx.require_gpu(op)?;
    let out = Tensor::uninit(ctx, &[s.m, s.n], op)?;
    let (bias_offset, bias_stride) = ep.bias.map_or((0, 0), |t| (t.layout().offset, t.layout().strides[0]));
    let res_offset = ep.residual.map_or(0, |t| t.layout().offset);
    let mut params = Params::new().usize(s.m).usize(s.n).usize(splits).usize(1);
    for _ in 0..7 {
        params = params.u32(0);
    }
    params = params
        .f32(alpha)
        .usize(bias_offset)
        .usize(bias_stride)
        .usize(res_offset)
        .u32(0);
    for _ in 0..3 * MAX_BATCH_RANK {
        params = params.u32(1);
    }
    let parts_buffer = parts.gpu_buffer(op)?;
    let bias_buffer = match ep.bias {
        Some(t) => t.gpu_buffer(op)?,
        None => parts_buffer,
    };
    let residual_buffer = match ep.residual {
        Some(t) => t.gpu_buffer(op)?,
        None => parts_buffer,
    };
    let buffers = [
        parts_buffer,
        parts_buffer,
        bias_buffer,
        out.gpu_buffer(op)?,
        residual_buffer,
    ];
    let kernel = gpu.kernel(&SPLIT_K_SUM, &[("EPILOGUE", ep.kind as u32 as f64)])?;
    gpu.dispatch_items(&kernel, &params, &buffers, s.m * s.n)?;
    Ok(out)
}

/// The S products a (S, M, K/S) @ b (S, K/S, N) over K-slices of a 2-d a @ b, viewed in
/// place and run as one batched product -> (S, M, N) dense.
fn slice_products(op: &'static str, a: &Tensor, b: &Tensor, s: &MatmulShape, splits: usize) -> Result<Tensor> {
    let slice = s.k / splits;
    let view = |t: &Tensor, rows: usize, cols: usize, k_axis: usize| {
        let l = t.layout();
        let (rs, cs) = (l.strides[0], l.strides[1]);
        let k_stride = if k_axis == 0 { rs } else { cs };
        t.with_layout(Layout {
            shape: vec![splits, rows, cols],
            strides: vec![slice * k_stride, rs, cs],
            offset: l.offset,
        })
    };
    gemm(
        op,
        &view(a, s.m, slice, 1),
        &view(b, slice, s.n, 0),
        1.0,
        Ep::NONE,
        MatmulPath::Auto,
    )
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
    match split_k(&s) {
        Some(splits) if x.context().is_gpu() => slice_products(op, x, w, &s, splits),
        _ => gemm(op, x, w, 1.0, Ep::NONE, MatmulPath::Auto)?.reshape(&[1, s.m, s.n]),
    }
}

/// Element strides of `layout`'s batch axes (all but the last two) broadcast to `batch`.
fn batch_strides(layout: &Layout, batch: &[usize]) -> Result<Vec<usize>> {
    let r = layout.shape.len() - 2;
    let inner = Layout {
        shape: layout.shape[..r].to_vec(),
        strides: layout.strides[..r].to_vec(),
        offset: 0,
    };
    broadcast_strides(&inner, batch)
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

fn gemm(op: &'static str, a: &Tensor, b: &Tensor, alpha: f32, ep: Ep, path: MatmulPath) -> Result<Tensor> {
    let requested = path;
    let ctx = a.context();
    b.expect_context(ctx, op, "b")?;
    let (bias, epilogue) = (ep.bias, ep.kind);
    if let Some(t) = bias {
        t.expect_context(ctx, op, "bias")?;
    }
    if let Some(t) = ep.residual {
        t.expect_context(ctx, op, "residual")?;
    }
    check_dtypes(op, a, b, ep)?;
    let s = matmul_shapes(op, a.shape(), b.shape())?;
    if path == MatmulPath::Vector && s.m != 1 {
        return Err(Error::shape(op, "a", "M = 1 for MatmulPath::Vector", a.shape()));
    }
    let mut out_shape = s.batch.clone();
    out_shape.extend([s.m, s.n]);
    let Some(gpu) = ctx.gpu() else {
        let (ah, bh) = (a.host_widened(op)?, b.host_widened(op)?);
        let mut y = reference::matmul::matmul(&ah.view(), &bh.view())?;
        let bias = bias.map(|t| t.host(op)).transpose()?;
        let last = ndarray::Axis(y.ndim() - 1);
        for mut row in y.lanes_mut(last) {
            for (j, v) in row.iter_mut().enumerate() {
                let x = *v as f64 * alpha as f64 + bias.as_ref().map_or(0.0, |b| b[[j]] as f64);
                *v = match epilogue {
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
        return Tensor::from_host(ctx, y);
    };
    if path == MatmulPath::Auto {
        if let Some(splits) = split_k(&s) {
            return gemm_split_k(op, a, b, &s, splits, alpha, ep);
        }
    }
    let out = Tensor::uninit(ctx, &out_shape, op)?;
    if out.is_empty() {
        return Ok(out);
    }
    let batch: usize = s.batch.iter().product();
    let (dims, strides) = collapse(
        &s.batch,
        &[
            batch_strides(a.layout(), &s.batch)?,
            batch_strides(b.layout(), &s.batch)?,
        ],
    )?;
    if dims.len() > MAX_BATCH_RANK {
        return Err(Error::Unsupported {
            op,
            message: format!(
                "a {:?} @ b {:?}: the batch views need {} axes after merging dense ones; the kernels address {MAX_BATCH_RANK}",
                a.shape(),
                b.shape(),
                dims.len()
            ),
        });
    }
    if batch > MAX_GROUPS || s.m.div_ceil(16) > MAX_GROUPS || s.n.div_ceil(16) > MAX_GROUPS {
        return Err(Error::Unsupported {
            op,
            message: format!(
                "a {:?} @ b {:?}: batch {batch}, M {} and N {} exceed the kernels' grid ({MAX_GROUPS} workgroups per axis)",
                a.shape(),
                b.shape(),
                s.m,
                s.n
            ),
        });
    }
    let (al, bl) = (a.layout(), b.layout());
    let ra = al.strides.len();
    let rb = bl.strides.len();
    let (a_rs, a_cs) = (al.strides[ra - 2], al.strides[ra - 1]);
    let (b_rs, b_cs) = (bl.strides[rb - 2], bl.strides[rb - 1]);
    let (bias_offset, bias_stride) = bias.map_or((0, 0), |t| (t.layout().offset, t.layout().strides[0]));
    let mut params = Params::new()
        .usize(s.m)
        .usize(s.n)
        .usize(s.k)
        .usize(batch)
        .usize(al.offset)
        .usize(a_rs)
        .usize(a_cs)
        .usize(dims.len())
        .usize(bl.offset)
        .usize(b_rs)
        .usize(b_cs)
        .f32(alpha)
        .usize(bias_offset)
        .usize(bias_stride)
        .usize(ep.residual.map_or(0, |t| t.layout().offset))
        .u32(0);
    for v in [&dims, &strides[0], &strides[1]] {
        for d in 0..MAX_BATCH_RANK {
            params = params.usize(v.get(d).copied().unwrap_or(1));
        }
    }
    // Whole vec4s load at once when the operand's inner axis is dense with every row and
    // batch start a multiple of 4.
    let aligned = |rs: usize, cs: usize, offset: usize, bs: &[usize], inner: usize, rows: usize| {
        cs == 1
            && (rs.is_multiple_of(4) || rows == 1)
            && offset.is_multiple_of(4)
            && inner.is_multiple_of(4)
            && bs.iter().all(|s| s.is_multiple_of(4))
    };
    let vec_a = aligned(a_rs, a_cs, al.offset, &strides[0], s.k, s.m);
    let vec_b = aligned(b_rs, b_cs, bl.offset, &strides[1], s.n, s.k);
    let large_tiles = s.m.div_ceil(128) * s.n.div_ceil(128) * batch;
    let coop_refusal = || {
        cooperative_refusal(
            gpu.info.cooperative_matrix,
            a,
            b,
            &s,
            [(a_rs, a_cs), (b_rs, b_cs)],
            [&strides[0], &strides[1]],
        )
    };
    let path = match path {
        MatmulPath::Auto if s.m == 1 => MatmulPath::Vector,
        MatmulPath::Auto if gpu.info.cooperative_matrix && coop_refusal().is_none() => MatmulPath::Cooperative,
        MatmulPath::Cooperative => {
            if let Some(reason) = coop_refusal() {
                return Err(Error::Fallback { op, reason });
            }
            MatmulPath::Cooperative
        }
        MatmulPath::Auto if vec_a && vec_b && large_tiles >= LARGE_TILE_MIN_TILES => MatmulPath::LargeTile,
        MatmulPath::Auto if s.m >= 64 && s.n >= 64 => MatmulPath::RegisterTiled,
        MatmulPath::Auto => MatmulPath::Tiled16,
        MatmulPath::LargeTile if !(vec_a && vec_b) => {
            return Err(Error::Fallback {
                op,
                reason: format!(
                    "the large-tile kernel reads both operands as vec4s; a {:?} (strides {:?}, offset {}) @ b {:?} (strides {:?}, offset {}) are not both aligned",
                    a.shape(),
                    al.strides,
                    al.offset,
                    b.shape(),
                    bl.strides,
                    bl.offset
                ),
            })
        }
        p => p,
    };
    // The tuner may give the hand rule's tile kernel's product to another tile kernel: the
    // same bits (`MatmulPath::TILES`), measured faster on this adapter.
    let path = match path {
        p if requested == MatmulPath::Auto && MatmulPath::TILES.contains(&p) => {
            let others: Vec<MatmulPath> = MatmulPath::TILES
                .into_iter()
                .filter(|&o| o != p && (o != MatmulPath::LargeTile || (vec_a && vec_b)))
                .collect();
            ctx.choose(
                crate::tune::Family::Matmul,
                || tune_key(&s, batch, (a.dtype(), b.dtype()), (vec_a, vec_b)),
                p,
                &others,
                MatmulPath::name,
                |c| gemm(op, a, b, alpha, ep, c).map(drop),
            )
        }
        p => p,
    };
    let residual = ep.residual;
    let ep = ("EPILOGUE", epilogue as u32 as f64);
    let slots = [("a", a.dtype()), ("b", b.dtype())];
    let (kernel, groups) = match path {
        MatmulPath::Tiled16 => (
            gpu.typed_kernel(&TILED16, &slots, &[ep])?,
            [s.n.div_ceil(16) as u32, s.m.div_ceil(16) as u32, batch as u32],
        ),
        MatmulPath::RegisterTiled => {
            let consts = [ep, ("VEC_A", vec_a as u32 as f64), ("VEC_B", vec_b as u32 as f64)];
            (
                gpu.typed_kernel(&REGISTER_TILED, &slots, &consts)?,
                [s.n.div_ceil(64) as u32, s.m.div_ceil(64) as u32, batch as u32],
            )
        }
        MatmulPath::LargeTile => (
            gpu.typed_kernel(&LARGE_TILE, &slots, &[ep])?,
            [s.n.div_ceil(128) as u32, s.m.div_ceil(128) as u32, batch as u32],
        ),
        MatmulPath::Cooperative => (
            gpu.kernel(&COOPERATIVE, &[ep])?,
            [(s.n / 64) as u32, (s.m / 64) as u32, batch as u32],
        ),
        MatmulPath::Vector | MatmulPath::Auto => {
            // A dense K axis in b turns each column into one coalesced dot product.
            let dot = b_rs == 1 && b_cs != 1;
            let cols_per_group = if dot { 8 } else { 32 };
            let [x, y, _] = groups_1d(s.n.div_ceil(cols_per_group) as u32);
            // Subgroups of at most 32 never straddle the 32 invocations of one column.
            let (lo, hi) = gpu.info.subgroup_size;
            let kernel = if dot && gpu.info.subgroups && lo >= 1 && hi <= 32 {
                gpu.typed_kernel(&MATVEC_SUBGROUP, &slots, &[ep])?
            } else {
                gpu.typed_kernel(&MATVEC, &slots, &[ep, ("DOT", dot as u32 as f64)])?
            };
            (kernel, [x, y, batch as u32])
        }
    };
    let bias_buffer = match bias {
        Some(t) => t.gpu_buffer(op)?,
        // Unread when there is no bias; `a` is already bound read-only (binding `out` twice
        // would be a read/write usage conflict).
        None => a.typed_buffer(op)?,
    };
    let residual_buffer = match residual {
        Some(t) => t.gpu_buffer(op)?,
        None => a.typed_buffer(op)?,
    };
    let mut buffers = vec![
        a.typed_buffer(op)?,
        b.typed_buffer(op)?,
        bias_buffer,
        out.gpu_buffer(op)?,
        residual_buffer,
    ];
    // The cooperative kernel starts its accumulators from a 16 x 16 tile of zeros.
    let zeros = match path {
        MatmulPath::Cooperative => Some(Tensor::zeros(ctx, &[256])?),
        _ => None,
    };
    if let Some(z) = &zeros {
        buffers.push(z.gpu_buffer(op)?);
    }
    gpu.dispatch(&kernel, &params, &buffers, groups)?;
    Ok(out)
}
