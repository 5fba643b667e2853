//! Which kernel takes a product: [`MatmulPath`] and its `Auto` rules, the split-K decision,
//! the cooperative kernel's refusals, and the tuner seam that may hand a tile kernel's
//! product to another tile kernel measured faster on this adapter.
//!
//! Nothing here records a command: the choice reads the operands' shapes, strides and
//! alignment ([`Operands`]) and the adapter's features, and returns a path (or the
//! `Error::Fallback` of a forced path that cannot run); [`super::launch`] records it.

use super::launch::Operands;
use super::Ep;
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::shape::{DType, MatmulShape};
use crate::tensor::Tensor;

/// 128 x 128 tiles `Auto` wants before it picks [`MatmulPath::LargeTile`]: fewer leave a large
/// GPU's multiprocessors idle, where the 64 x 64 kernel's four times as many tiles fill it.
const LARGE_TILE_MIN_TILES: usize = 256;

/// Which matmul kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatmulPath {
    /// Picked by shape: `Matvec` for one row, `LargeTile` for large products with both
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
    Matvec,
    /// F16 `a` and `b` on the adapter's matrix units through wgpu's experimental cooperative
    /// matrices (16 x 16 x 16 tiles, f32 accumulation: `shaders/ops/matmul/cooperative.wgsl`,
    /// and `cooperative_staged.wgsl`, its tiles staged in workgroup memory, for products of
    /// many 256 x 128 blocks where subgroups are 32 wide),
    /// where the context has them ([`crate::context::DeviceInfo::cooperative_matrix`], on
    /// request: `ENGINE_EXPERIMENTAL=cooperative-matrix`). M and N multiples of 64, K of 16;
    /// each operand dense along one axis (a transpose is read as it lies); offsets, the other
    /// strides and batch strides multiples of 8 elements. `Auto` picks it for operands that
    /// qualify (split-K's slices too), without copying transposes; forced on others:
    /// `Error::Fallback`.
    Cooperative,
}

impl MatmulPath {
    /// The paths that can be forced (every one but `Auto`), for tests and benchmarks.
    pub const FORCED: [MatmulPath; 4] = [Self::Tiled16, Self::RegisterTiled, Self::LargeTile, Self::Matvec];

    /// The tile kernels the tuner chooses between (`crate::tune::Family::Matmul`). Each
    /// output element is one f32 accumulator walking K from 0 up with one `fma` per step
    /// (zero-padded past K: `fma(0, 0, acc)` is `acc`), then the one epilogue of
    /// `common.wgsl`: the same bits whichever runs. Not interchangeable with them, so never
    /// candidates: `Matvec` (K split across a workgroup, then a tree sum), split-K (partial
    /// sums over K-slices) and `Cooperative` (the matrix units' own order).
    pub const TILES: [MatmulPath; 3] = [Self::Tiled16, Self::RegisterTiled, Self::LargeTile];

    /// The path's name in the tune cache, the plan dump and reports: its kernel's file name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Tiled16 => "tiled16",
            Self::RegisterTiled => "register_tiled",
            Self::LargeTile => "large_tile",
            Self::Matvec => "matvec",
            Self::Cooperative => "cooperative",
        }
    }
}

/// How many K-slices a 2-d product should be split into, when its output has too few 64 x 64
/// tiles to fill a GPU (fewer than `TARGET / 2`): the weight gradients of a layer ((Dm, B T)
/// @ (B T, N): a 64 x 64 output over K = 8192 was one workgroup walking all of K; GPT-2
/// 124M's (768, 2048) @ (2048, 768), 144 tiles, ran unsplit at 6.8 TFLOP/s on the H200) and
/// GPT-2's prefill projections (M = 64 rows: 12 to 48 tiles, the K = 3072 projection one
/// walk of 3072 per tile). The slices divide K evenly, each at least `MIN_SLICE` (64) long
/// and a multiple of 4 (so vec4 loads stay aligned), and the tiles times the slices stay at
/// most `TARGET` (512) workgroups. `None`: no split.
///
/// `ENGINE_SPLIT_K` (read once, for benchmarks) replaces the rule's `(TARGET, MIN_SLICE)`:
/// `off`, `TARGET` or `TARGET/MIN_SLICE`.
pub(super) fn split_k(s: &MatmulShape) -> Option<usize> {
    let (target, min_slice) = split_k_rule();
    split_k_by(s, target, min_slice, 4)
}

/// Split-K for a product the matrix units take ([`MatmulPath::Cooperative`]): each 64 x 64
/// block is one subgroup there, so a product of a few hundred blocks (GPT-2's 2048 x 768)
/// leaves most of a large GPU's subgroup slots empty. Its K slices (multiples of 16, the
/// blocks' depth, at least 128 long) go out as a batch until blocks times slices reach 2048.
/// `ENGINE_SPLIT_K=off` turns it off too.
pub(super) fn split_k_cooperative(s: &MatmulShape) -> Option<usize> {
    if split_k_rule().0 == 0 {
        return None;
    }
    split_k_by(s, 2048, 128, 16)
}

/// The rule's (TARGET, MIN_SLICE), or what `ENGINE_SPLIT_K` forces (`off`: TARGET 0).
fn split_k_rule() -> (usize, usize) {
    static RULE: std::sync::OnceLock<(usize, usize)> = std::sync::OnceLock::new();
    *RULE.get_or_init(|| {
        crate::context::forced::forced(
            "ENGINE_SPLIT_K",
            "off, TARGET or TARGET/MIN_SLICE (whole numbers)",
            parse_split_k,
        )
        .unwrap_or((512, 64))
    })
}

/// `ENGINE_SPLIT_K`'s spellings: `off` -> (0, 64), `T` -> (T, 64), `T/S` -> (T, S), S >= 4.
fn parse_split_k(v: &str) -> Option<(usize, usize)> {
    if v == "off" {
        return Some((0, 64));
    }
    let (t, s) = v.split_once('/').unwrap_or((v, "64"));
    let (t, s) = (t.parse::<usize>().ok()?, s.parse::<usize>().ok()?);
    // Bounded so that the rule's arithmetic (2 MIN_SLICE, splits x tiles) cannot overflow.
    (s >= 4 && s <= 1 << 20 && t <= 1 << 30).then_some((t, s))
}

/// The splits of K (a power of two) that bring 64 x 64 tiles times slices nearest `target`
/// from below, each slice at least `min_slice` long and a multiple of `align`.
fn split_k_by(s: &MatmulShape, target: usize, min_slice: usize, align: usize) -> Option<usize> {
    let tiles = s.m.div_ceil(64) * s.n.div_ceil(64);
    // An empty output (m or n = 0) has no tiles and nothing to split.
    if !s.batch.is_empty() || s.m < 16 || s.n == 0 || tiles >= target / 2 || s.k < 2 * min_slice {
        return None;
    }
    let mut splits = 1;
    while splits * 2 * tiles <= target
        && s.k.is_multiple_of(splits * 2)
        && s.k / (splits * 2) >= min_slice
        && (s.k / (splits * 2)).is_multiple_of(align)
    {
        splits *= 2;
    }
    (splits > 1).then_some(splits)
}

/// Why the cooperative-matrix kernel cannot take the product of `o`'s operands (`None`: it can).
pub(super) fn refusal_of(gpu: &Gpu, (a, b): (&Tensor, &Tensor), o: &Operands) -> Option<String> {
    cooperative_refusal(
        gpu.info.cooperative_matrix,
        a,
        b,
        &o.shape,
        [o.a_strides, o.b_strides],
        [&o.batch_strides[0], &o.batch_strides[1]],
    )
}

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
        // Dense along one axis (either: the kernels load column-major blocks of a transposed
        // view), the other stride, the offset and the batch strides 16-byte aligned.
        let other = if cs == 1 { rs } else { cs };
        if (cs != 1 && rs != 1)
            || !other.is_multiple_of(8)
            || !offsets[i].is_multiple_of(8)
            || batch[i].iter().any(|v| !v.is_multiple_of(8))
        {
            return Some(format!(
                "{name}: strides ({rs}, {cs}), offset {}, batch strides {:?}: the kernel loads 16-byte rows (one axis dense, the other stride, the offset and the batch strides multiples of 8 elements)",
                offsets[i], batch[i]
            ));
        }
    }
    None
}

/// Which operands `Auto` should copy dense before the product (a, b): those whose view
/// (a transpose, a narrow) loads without vec4s, in a product a tile kernel takes (64 x 64 or
/// 128 x 128 tiles), which then loads vec4s and may be [`MatmulPath::LargeTile`]; a
/// transpose the register-tiled kernel reads as vec4s as it lies only where the copy buys the
/// large tile. The copy moves O(K N) elements where the product does O(M N K) work, and the
/// kernels give the same bits (`MatmulPath::TILES`). A broadcast view (a zero stride) is never
/// copied: that would materialise the broadcast. On the H200, GPT-2 124M's backward products with a transposed
/// weight ran at 13.4 TFLOP/s where the same product of dense operands ran at 19.0
/// (`bench --only gpt2_train`, the products table).
pub(super) fn densify(s: &MatmulShape, o: &Operands, a: &Tensor, b: &Tensor) -> (bool, bool) {
    let large_tiles = s.m.div_ceil(128) * s.n.div_ceil(128) * o.batch;
    let tiled = large_tiles >= LARGE_TILE_MIN_TILES || (s.m >= 64 && s.n >= 64);
    if s.m == 1 || !tiled || (o.vec_a && o.vec_b) {
        return (false, false);
    }
    // Dense from offset 0, the inner axis (K for a, N for b) loads as vec4s when it is a
    // multiple of 4.
    let can = |t: &Tensor, inner: usize| {
        let l = t.layout();
        inner.is_multiple_of(4) && t.shape().iter().zip(&l.strides).all(|(&n, &st)| n <= 1 || st > 0)
    };
    // Only where the product does enough work per copied element: 2 N flops for each of a's,
    // 2 M for each of b's. (96 heads of (256, 256)^T @ (256, 64) ran 0.069 ms with a copied in
    // place and 0.106 ms after copying it: N = 64 is too few.)
    // A transpose the register-tiled kernel loads as vec4s as it lies (`vec_at`, `vec_bt`) is
    // copied only where the copy buys the large-tile kernel: a large product whose other
    // operand is, or becomes, vec4 too.
    let large = large_tiles >= LARGE_TILE_MIN_TILES;
    let (wa, wb) = (!o.vec_a && s.n >= 256, !o.vec_b && s.m >= 256);
    let (da, db) = (
        wa && (!o.vec_at || (large && (o.vec_b || wb))),
        wb && (!o.vec_bt || (large && (o.vec_a || wa))),
    );
    if (da && !can(a, s.k)) || (db && !can(b, s.n)) {
        return (false, false);
    }
    (da, db)
}

/// The tuner's shape key of a product: batch, M, N, K bucketed with their classes mod 4, the
/// dtypes, and which operands load as vec4s (which decides whether `LargeTile` may run, and
/// how fast the register-tiled kernel reads a transpose).
fn tune_key(s: &MatmulShape, batch: usize, dtypes: (DType, DType), vec: (bool, bool), vec_t: (bool, bool)) -> String {
    let (a, b) = (dtypes.0.to_string(), dtypes.1.to_string());
    crate::tune::key::shape_key(
        &[("b", batch), ("m", s.m), ("n", s.n), ("k", s.k)],
        &[("m", s.m), ("n", s.n), ("k", s.k)],
        &[
            &a,
            &b,
            if vec.0 { "vec_a" } else { "" },
            if vec.1 { "vec_b" } else { "" },
            if vec_t.0 { "vec_at" } else { "" },
            if vec_t.1 { "vec_bt" } else { "" },
        ],
    )
}

/// The kernel that runs `alpha * (a @ b)` with epilogue `ep` when `requested` was asked for:
/// `Auto`'s hand rule (above the split-K decision, which [`super::gemm`] takes first), a
/// forced path checked against the operands, then the tuner's turn on a tile kernel's product
/// (it measures the candidates by running them through [`super::gemm`]). Never `Auto`.
pub(super) fn choose(
    op: &'static str,
    gpu: &Gpu,
    (a, b): (&Tensor, &Tensor),
    alpha: f32,
    ep: Ep,
    requested: MatmulPath,
    o: &Operands,
) -> Result<MatmulPath> {
    let s = &o.shape;
    let (vec_a, vec_b) = (o.vec_a, o.vec_b);
    let large_tiles = s.m.div_ceil(128) * s.n.div_ceil(128) * o.batch;
    let coop_refusal = || refusal_of(gpu, (a, b), o);
    let path = match requested {
        MatmulPath::Auto if s.m == 1 => MatmulPath::Matvec,
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
            let (al, bl) = (a.layout(), b.layout());
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
            });
        }
        p => p,
    };
    // The tuner may give the hand rule's tile kernel's product to another tile kernel: the
    // same bits (`MatmulPath::TILES`), measured faster on this adapter.
    Ok(match path {
        p if requested == MatmulPath::Auto && MatmulPath::TILES.contains(&p) => {
            let others: Vec<MatmulPath> = MatmulPath::TILES
                .into_iter()
                .filter(|&o| o != p && (o != MatmulPath::LargeTile || (vec_a && vec_b)))
                .collect();
            a.context().choose(
                crate::tune::Family::Matmul,
                || tune_key(s, o.batch, (a.dtype(), b.dtype()), (vec_a, vec_b), (o.vec_at, o.vec_bt)),
                p,
                &others,
                MatmulPath::name,
                |c| super::gemm(op, a, b, alpha, ep, c).map(drop),
            )
        }
        p => p,
    })
}

#[cfg(test)]
mod tests {
    use super::{parse_split_k, split_k_by};
    use crate::shape::MatmulShape;

    #[test]
    fn the_forced_split_k_rule_parses_or_refuses() {
        assert_eq!(parse_split_k("off"), Some((0, 64)));
        assert_eq!(parse_split_k("256"), Some((256, 64)));
        assert_eq!(parse_split_k("1024/32"), Some((1024, 32)));
        for bad in ["", "on", "256/", "/64", "256/2", "-1", "1é", "512/99999999999999999"] {
            assert_eq!(parse_split_k(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_split_k_rule_splits_few_tiles_into_even_slices() {
        let shape = |m, n, k| MatmulShape { batch: vec![], m, n, k };
        // GPT-2 124M's prefill: 36 tiles over K = 768 -> 8 slices of 96; 12 over 3072 -> 32.
        assert_eq!(split_k_by(&shape(64, 2304, 768), 512, 64, 4), Some(8));
        assert_eq!(split_k_by(&shape(64, 768, 3072), 512, 64, 4), Some(32));
        assert_eq!(split_k_by(&shape(64, 768, 3072), 128, 64, 4), Some(8));
        assert_eq!(split_k_by(&shape(64, 768, 3072), 0, 64, 4), None);
        assert_eq!(split_k_by(&shape(1024, 1024, 1024), 512, 64, 4), None);
        // The matrix units' rule: GPT-2's training products, 2048 x 768 over K = 768 -> 4
        // slices of 192; a dW of 768 x 768 over K = 2048 -> 8 slices of 256; slices stay
        // multiples of 16 (K = 784 = 16 x 49 cannot halve).
        assert_eq!(split_k_by(&shape(2048, 768, 768), 2048, 128, 16), Some(4));
        assert_eq!(split_k_by(&shape(768, 768, 2048), 2048, 128, 16), Some(8));
        assert_eq!(split_k_by(&shape(2048, 768, 784), 2048, 128, 16), None);
    }
}
