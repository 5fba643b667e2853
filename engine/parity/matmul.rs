//! Parity cases of matrix products with half-precision operands: b (the weights) F16 or
//! BF16, a F32 or of b's dtype, on every kernel path, dense or both read through transposed
//! views (the backward products of `autograd::autocast`: g @ w^T and x^T @ g), against the f64 reference on the
//! values the device holds (rounded to the dtype on the host by the `half` crate, widened
//! exactly), under [`gates::HALF_MATMUL`].

use super::Row;
use crate::check::{gates, Rng};
use crate::context::Context;
use crate::error::Result;
use crate::ops::{matmul_with, MatmulPath};
use crate::reference;
use crate::shape::DType;
use crate::tensor::Tensor;

/// One half-precision product: a (M, K) @ b (K, N).
#[derive(Clone, Debug, PartialEq)]
pub struct MatmulCase {
    /// b's dtype (F16 or BF16).
    pub dtype: DType,
    /// a in b's dtype too (else F32).
    pub half_a: bool,
    /// Rows M.
    pub m: usize,
    /// Inner K.
    pub k: usize,
    /// Columns N.
    pub n: usize,
    /// Both operands read through transposed views: a stored (K, M), b stored (N, K).
    pub transposed: bool,
    /// The kernel.
    pub path: MatmulPath,
    /// Seed of the inputs.
    pub seed: u64,
}

impl MatmulCase {
    /// The op as the parity table prints it, e.g. `matmul F32 @ F16`.
    pub fn name(&self) -> String {
        let a = if self.half_a { self.dtype } else { DType::F32 };
        let t = if self.transposed { "^T" } else { "" };
        format!("matmul {a}{t} @ {}{t}", self.dtype)
    }

    /// The dimensions as the parity table prints them, e.g. `M=17 K=65 N=33`.
    pub fn shape(&self) -> String {
        format!("M={} K={} N={}", self.m, self.k, self.n)
    }
}

/// The cases: both half dtypes, F32 or half a, awkward and aligned sizes, every path that
/// takes the shape (`full` adds larger ones); and both operands half and transposed at the
/// awkward sizes on the tiled paths.
pub fn matmul_cases(full: bool) -> Vec<MatmulCase> {
    let mut sizes = vec![(1, 300, 129), (17, 65, 33), (64, 256, 64), (70, 96, 130)];
    if full {
        sizes.extend([(1, 768, 2304), (128, 768, 256)]);
    }
    let mut out = vec![];
    for dtype in [DType::F16, DType::BF16] {
        for half_a in [false, true] {
            for &(m, k, n) in &sizes {
                let mut paths = vec![MatmulPath::Auto, MatmulPath::Tiled16, MatmulPath::RegisterTiled];
                if m == 1 {
                    paths.push(MatmulPath::Matvec);
                }
                // The large tile reads whole vec4s of both operands.
                if k % 4 == 0 && n % 4 == 0 {
                    paths.push(MatmulPath::LargeTile);
                }
                for path in paths {
                    let seed = (out.len() as u64) * 7919 + 3;
                    out.push(MatmulCase {
                        dtype,
                        half_a,
                        m,
                        k,
                        n,
                        transposed: false,
                        path,
                        seed,
                    });
                }
            }
        }
        for (m, k, n) in [(17, 65, 33), (70, 96, 130)] {
            for path in [MatmulPath::Auto, MatmulPath::Tiled16, MatmulPath::RegisterTiled] {
                let seed = (out.len() as u64) * 7919 + 3;
                out.push(MatmulCase {
                    dtype,
                    half_a: true,
                    m,
                    k,
                    n,
                    transposed: true,
                    path,
                    seed,
                });
            }
        }
    }
    out
}

/// Runs one case on `ctx` and compares it with the reference.
pub async fn run_case(ctx: &Context, c: &MatmulCase) -> Row {
    let gate = gates::HALF_MATMUL;
    let a_dtype = if c.half_a { c.dtype } else { DType::F32 };
    let row = Row::pending(c.name(), "forward", c.shape(), format!("{:?}", c.path), gate);
    row.judged(output(ctx, c, a_dtype).await)
}

async fn output(ctx: &Context, c: &MatmulCase, a_dtype: DType) -> Result<(Vec<f32>, Vec<f32>)> {
    let mut rng = Rng::new(c.seed);
    let (a_stored, b_stored) = match c.transposed {
        true => ([c.k, c.m], [c.n, c.k]),
        false => ([c.m, c.k], [c.k, c.n]),
    };
    let a = Tensor::from_slice_as(ctx, &a_stored, &rng.vec_range(c.m * c.k, -1.0, 1.0), a_dtype)?;
    let b = Tensor::from_slice_as(ctx, &b_stored, &rng.vec_range(c.k * c.n, -1.0, 1.0), c.dtype)?;
    let (a, b) = match c.transposed {
        true => (a.transpose(0, 1)?, b.transpose(0, 1)?),
        false => (a, b),
    };
    let got = matmul_with(&a, &b, c.path)?.to_vec_async().await?;
    let (ah, bh) = (a.to_array_async().await?, b.to_array_async().await?);
    let want = reference::matmul::matmul(&ah.view(), &bh.view())?;
    Ok((got, want.iter().copied().collect()))
}
