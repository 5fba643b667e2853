//! Recording the matmul kernels: the operands' geometry as the kernels address it
//! ([`Operands`]: collapsed batch axes, row and column strides, vec4 alignment), the one
//! uniform of `shaders/ops/matmul/common.wgsl`, each kernel's workgroup grid and bindings, and the
//! split-K products with the dispatch that sums their slices.
//!
//! The path is already chosen ([`super::select`]); what fails here is a product the kernels
//! cannot address at all (more batch axes or workgroups than they take: `Error::Unsupported`).

use super::{Ep, MatmulPath};
use crate::error::{Error, Result};
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::shape::{broadcast_strides, collapse, Layout, MatmulShape};
use crate::tensor::Tensor;

const TILED16: KernelDef = KernelDef::new("ops/matmul/tiled16", shader!("ops/matmul/tiled16.wgsl"), "tiled16");

const REGISTER_TILED: KernelDef = KernelDef::new(
    "ops/matmul/register_tiled",
    shader!("ops/matmul/register_tiled.wgsl"),
    "register_tiled",
);

const LARGE_TILE: KernelDef = KernelDef::new(
    "ops/matmul/large_tile",
    shader!("ops/matmul/large_tile.wgsl"),
    "large_tile",
);

const COOPERATIVE: KernelDef = KernelDef::new(
    "ops/matmul/cooperative",
    shader!("ops/matmul/cooperative.wgsl"),
    "cooperative",
);

const COOPERATIVE_STAGED: KernelDef = KernelDef::new(
    "ops/matmul/cooperative_staged",
    shader!("ops/matmul/cooperative_staged.wgsl"),
    "cooperative_staged",
);

/// Workgroup memory of `cooperative_staged.wgsl`'s tiles: (2 x 256 x 6 + 2 x 128 x 6) words of
/// 8 bytes (the larger of each operand's two layouts).
const STAGED_WORKGROUP_BYTES: u32 = (2 * 256 * 6 + 2 * 128 * 6) * 8;
/// 256 x 128 tiles a product needs before the staged cooperative kernel takes it: fewer leave
/// a large GPU's multiprocessors idle, where the direct kernel's 64 x 64 tiles are four times
/// as many per output (an H200 has 132 multiprocessors).
const STAGED_MIN_TILES: usize = 128;

const MATVEC: KernelDef = KernelDef::new("ops/matmul/matvec", shader!("ops/matmul/matvec.wgsl"), "matvec");

const SPLIT_K_SUM: KernelDef = KernelDef::new(
    "ops/matmul/split_k_sum",
    shader!("ops/matmul/split_k_sum.wgsl"),
    "split_k_sum",
);

// No `enable subgroups;`: naga 30 rejects the directive and exposes the subgroup
// builtins whenever the device has the SUBGROUP feature.
const MATVEC_SUBGROUP: KernelDef = KernelDef::new(
    "ops/matmul/matvec_subgroup",
    shader!("ops/matmul/matvec_subgroup.wgsl"),
    "matvec_subgroup",
);

/// Batch axes the kernels address after merging dense ones.
const MAX_BATCH_RANK: usize = 4;
/// Workgroups along one dispatch axis.
const MAX_GROUPS: usize = 65535;

/// A product's operands as the kernels address them.
pub(super) struct Operands {
    /// Batch, M, N, K.
    pub(super) shape: MatmulShape,
    /// Product of the batch axes.
    pub(super) batch: usize,
    /// The batch axes after merging dense ones (at most [`MAX_BATCH_RANK`]).
    pub(super) dims: Vec<usize>,
    /// a's and b's strides over `dims` (0 where broadcast), in that order.
    pub(super) batch_strides: Vec<Vec<usize>>,
    /// a's (row, column) strides: over M, over K.
    pub(super) a_strides: (usize, usize),
    /// b's (row, column) strides: over K, over N.
    pub(super) b_strides: (usize, usize),
    /// a loads as whole vec4s (see [`Operands::new`]).
    pub(super) vec_a: bool,
    /// b loads as whole vec4s.
    pub(super) vec_b: bool,
    /// a, dense along M instead (a transpose), loads as whole vec4s of four rows
    /// (`register_tiled.wgsl`'s `VEC_A_T`).
    pub(super) vec_at: bool,
    /// b, dense along K instead, loads as whole vec4s of four K steps (`VEC_B_T`).
    pub(super) vec_bt: bool,
}

impl Operands {
    /// The geometry of `a @ b` of shape `s`; `Error::Unsupported` past the kernels' batch rank
    /// or grid.
    pub(super) fn new(op: &'static str, a: &Tensor, b: &Tensor, s: MatmulShape) -> Result<Operands> {
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
        // The other orientation: the axes' roles swapped (a dense along M, b along K).
        let vec_at = !vec_a && aligned(a_cs, a_rs, al.offset, &strides[0], s.m, s.k);
        let vec_bt = !vec_b && aligned(b_cs, b_rs, bl.offset, &strides[1], s.k, s.n);
        Ok(Operands {
            shape: s,
            batch,
            dims,
            batch_strides: strides,
            a_strides: (a_rs, a_cs),
            b_strides: (b_rs, b_cs),
            vec_a,
            vec_b,
            vec_at,
            vec_bt,
        })
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

/// Records `out = epilogue(alpha * (a @ b))` on the kernel of `path` (not `Auto`). Six kernels
/// and the split-K sum share the one uniform of `common.wgsl` (the tile kernels, the
/// cooperative kernel, both matvec kernels; see [`gemm_split_k`] for the sum).
pub(super) fn record(
    op: &'static str,
    (a, b): (&Tensor, &Tensor),
    alpha: f32,
    ep: Ep,
    path: MatmulPath,
    o: &Operands,
    out: &Tensor,
) -> Result<()> {
    let gpu = a.context().require_gpu(op)?;
    let s = &o.shape;
    let (al, bl) = (a.layout(), b.layout());
    let ((a_rs, a_cs), (b_rs, b_cs)) = (o.a_strides, o.b_strides);
    let (bias_offset, bias_stride) = ep.bias.map_or((0, 0), |t| (t.layout().offset, t.layout().strides[0]));
    let mut params = Params::new()
        .usize(s.m)
        .usize(s.n)
        .usize(s.k)
        .usize(o.batch)
        .usize(al.offset)
        .usize(a_rs)
        .usize(a_cs)
        .usize(o.dims.len())
        .usize(bl.offset)
        .usize(b_rs)
        .usize(b_cs)
        .f32(alpha)
        .usize(bias_offset)
        .usize(bias_stride)
        .usize(ep.residual.map_or(0, |t| t.layout().offset))
        .u32(0);
    for v in [&o.dims, &o.batch_strides[0], &o.batch_strides[1]] {
        for d in 0..MAX_BATCH_RANK {
            params = params.usize(v.get(d).copied().unwrap_or(1));
        }
    }
    let (vec_a, vec_b, batch) = (o.vec_a, o.vec_b, o.batch);
    let epilogue = ("EPILOGUE", ep.kind as u32 as f64);
    // The cooperative kernels read a view dense along its other axis (a's M, b's K) as
    // column-major blocks (`select::cooperative_refusal` lets only such views through).
    let trans = (
        ("TRANS_A", (a_cs != 1) as u32 as f64),
        ("TRANS_B", (b_cs != 1) as u32 as f64),
    );
    let slots = [("a", a.dtype()), ("b", b.dtype())];
    let (kernel, groups) = match path {
        MatmulPath::Tiled16 => (
            gpu.typed_kernel(&TILED16, &slots, &[epilogue])?,
            [s.n.div_ceil(16) as u32, s.m.div_ceil(16) as u32, batch as u32],
        ),
        MatmulPath::RegisterTiled => {
            let consts = [
                epilogue,
                ("VEC_A", vec_a as u32 as f64),
                ("VEC_B", vec_b as u32 as f64),
                ("VEC_A_T", o.vec_at as u32 as f64),
                ("VEC_B_T", o.vec_bt as u32 as f64),
            ];
            (
                gpu.typed_kernel(&REGISTER_TILED, &slots, &consts)?,
                [s.n.div_ceil(64) as u32, s.m.div_ceil(64) as u32, batch as u32],
            )
        }
        MatmulPath::LargeTile => (
            gpu.typed_kernel(&LARGE_TILE, &slots, &[epilogue])?,
            [s.n.div_ceil(128) as u32, s.m.div_ceil(128) as u32, batch as u32],
        ),
        // The staged kernel's eight subgroups each own a 64 x 64 part of the tile, which
        // needs subgroups of exactly 32.
        MatmulPath::Cooperative
            if s.m.is_multiple_of(256)
                && s.n.is_multiple_of(128)
                && (s.m / 256) * (s.n / 128) * batch >= STAGED_MIN_TILES
                && gpu.info.subgroup_size == (32, 32)
                && gpu.info.max_workgroup_memory >= STAGED_WORKGROUP_BYTES =>
        {
            (
                gpu.kernel(&COOPERATIVE_STAGED, &[epilogue, trans.0, trans.1])?,
                [(s.n / 128) as u32, (s.m / 256) as u32, batch as u32],
            )
        }
        MatmulPath::Cooperative => (
            gpu.kernel(&COOPERATIVE, &[epilogue, trans.0, trans.1])?,
            [(s.n / 64) as u32, (s.m / 64) as u32, batch as u32],
        ),
        MatmulPath::Matvec | MatmulPath::Auto => {
            // A dense K axis in b turns each column into one coalesced dot product.
            let dot = b_rs == 1 && b_cs != 1;
            let cols_per_group = if dot { 8 } else { 32 };
            let [x, y, _] = groups_1d(s.n.div_ceil(cols_per_group) as u32);
            // Subgroups of at most 32 never straddle the 32 invocations of one column.
            let (lo, hi) = gpu.info.subgroup_size;
            let kernel = if dot && gpu.info.subgroups && lo >= 1 && hi <= 32 {
                gpu.typed_kernel(&MATVEC_SUBGROUP, &slots, &[epilogue])?
            } else {
                gpu.typed_kernel(&MATVEC, &slots, &[epilogue, ("DOT", dot as u32 as f64)])?
            };
            (kernel, [x, y, batch as u32])
        }
    };
    let bias_buffer = match ep.bias {
        Some(t) => t.gpu_buffer(op)?,
        // Unread when there is no bias; `a` is already bound read-only (binding `out` twice
        // would be a read/write usage conflict).
        None => a.typed_buffer(op)?,
    };
    let residual_buffer = match ep.residual {
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
        MatmulPath::Cooperative => Some(Tensor::zeros(a.context(), &[256])?),
        _ => None,
    };
    if let Some(z) = &zeros {
        buffers.push(z.gpu_buffer(op)?);
    }
    gpu.dispatch(&kernel, &params, &buffers, groups)
}

/// a (M, K) @ b (K, N) as `splits` products over K-slices, a (S, M, K/S) @ b (S, K/S, N)
/// viewed in place, then summed over the slices with the product's epilogue applied
/// (`split_k_sum.wgsl`): every element's sum is split, not rounded worse.
pub(super) fn gemm_split_k(
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
    // The uniform of `common.wgsl` read as (M, N, S, 1): the slices are its batch.
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
pub(super) fn slice_products(
    op: &'static str,
    a: &Tensor,
    b: &Tensor,
    s: &MatmulShape,
    splits: usize,
) -> Result<Tensor> {
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
    super::gemm(
        op,
        &view(a, s.m, slice, 1),
        &view(b, slice, s.n, 0),
        1.0,
        Ep::NONE,
        MatmulPath::Auto,
    )
}
