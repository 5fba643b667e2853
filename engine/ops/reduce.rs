//! Reductions: along the last axis, one workgroup per row (`sum_rows`), and of the whole
//! tensor, as row sums of row sums; means scale a sum by the scalar `1 / count`.

use super::elementwise::binary_scalar;
use crate::context::Gpu;
use crate::error::{Error, Result};
use crate::expr::Binary;
use crate::kernel::{groups_1d, shader, KernelDef, Params};
use crate::reference;
use crate::tensor::Tensor;

const SUM_ROWS: KernelDef = KernelDef::new("ops/reduce/sum_rows", shader!("ops/reduce/sum_rows.wgsl"), "sum_rows");
const SUM_COLUMNS: KernelDef = KernelDef::new(
    "ops/reduce/sum_columns",
    shader!("ops/reduce/sum_columns.wgsl"),
    "sum_columns",
);

/// Rows each invocation of `sum_columns.wgsl` adds up in one pass.
const COLUMN_CHUNK: usize = 64;

/// The sums of x's columns (f32 accumulation on the GPU): x (rows, cols) -> (cols,). On a
/// GPU in passes of 64-row chunks, each column's chunk summed in row order, then the chunk
/// sums the same way, with no transposed copy of x.
pub(crate) fn sum_columns(x: &Tensor) -> Result<Tensor> {
    let op = "sum_columns";
    let &[rows, cols] = x.shape() else {
        return Err(Error::shape(op, "x", "(rows, cols)", x.shape()));
    };
    let ctx = x.context();
    // The column blocks fold into x and y; the parts run along z.
    let grid_fits = rows.div_ceil(COLUMN_CHUNK) <= 65535 && cols.div_ceil(64) <= 65535 * 65535;
    let Some(gpu) = ctx.gpu().filter(|_| grid_fits) else {
        return sum_last(&x.transpose(0, 1)?);
    };
    let mut x = x.contiguous()?;
    let mut rows = rows;
    loop {
        let parts = rows.div_ceil(COLUMN_CHUNK).max(1);
        let out = Tensor::uninit(ctx, &[parts, cols], op)?;
        if cols > 0 {
            let params = Params::new().usize(rows).usize(cols).usize(COLUMN_CHUNK);
            let [gx, gy, _] = groups_1d(cols.div_ceil(64) as u32);
            let groups = [gx, gy, parts as u32];
            gpu.dispatch(
                &gpu.kernel(&SUM_COLUMNS, &[])?,
                &params,
                &[x.gpu_buffer(op)?, out.gpu_buffer(op)?],
                groups,
            )?;
        }
        if parts == 1 {
            return out.reshape(&[cols]);
        }
        (x, rows) = (out, parts);
    }
}

/// Sum along the last axis (f32 accumulation on the GPU). x (..., n) -> (...).
pub fn sum_last(x: &Tensor) -> Result<Tensor> {
    let op = "sum_last";
    let Some((&cols, lead)) = x.shape().split_last() else {
        return Err(Error::shape(op, "x", "rank >= 1", x.shape()));
    };
    let ctx = x.context();
    let Some(gpu) = ctx.gpu() else {
        return Tensor::from_host(ctx, reference::reduce::sum_last(&x.host(op)?.view()));
    };
    let x = x.contiguous()?;
    let rows: usize = lead.iter().product();
    let out = Tensor::uninit(ctx, lead, op)?;
    dispatch_rows(
        gpu,
        op,
        &SUM_ROWS,
        &Params::new().usize(rows).usize(cols),
        &x,
        &out,
        rows,
    )?;
    Ok(out)
}

/// Elements one row sum of [`sum_all`] covers: a row per workgroup keeps every workgroup busy
/// on a large tensor, where one row of n would leave all but one idle.
const SUM_ALL_ROW: usize = 4096;

/// The sum of every element (f32 accumulation on the GPU): the dense elements as rows of
/// `SUM_ALL_ROW` (4096), each summed by one workgroup, then those sums (and the short last row)
/// summed again. x (...) -> () (a rank-0 tensor of one element; 0 for an empty x).
pub fn sum_all(x: &Tensor) -> Result<Tensor> {
    let n = x.len();
    let flat = x.reshape(&[n])?;
    if n <= SUM_ALL_ROW {
        return sum_last(&flat)?.reshape(&[]);
    }
    let (rows, tail) = (n / SUM_ALL_ROW, n % SUM_ALL_ROW);
    let full = flat.narrow(0, 0, rows * SUM_ALL_ROW)?.reshape(&[rows, SUM_ALL_ROW])?;
    let s = sum_all(&sum_last(&full)?)?; // (rows,) -> ()
    if tail == 0 {
        return Ok(s);
    }
    let t = sum_last(&flat.narrow(0, rows * SUM_ALL_ROW, n)?)?; // ()
    super::elementwise::add(&s, &t)
}

/// The mean of every element: [`sum_all`] times `1 / len`; an empty x is an error.
/// x (...) -> ().
pub fn mean_all(x: &Tensor) -> Result<Tensor> {
    if x.is_empty() {
        return Err(Error::shape("mean_all", "x", "at least one element", x.shape()));
    }
    binary_scalar(Binary::Mul, &sum_all(x)?, 1.0 / x.len() as f32)
}

/// The mean along the last axis: [`sum_last`] times `1 / n`. x (..., n) -> (...).
pub fn mean_last(x: &Tensor) -> Result<Tensor> {
    let n = x.shape().last().copied().unwrap_or(0);
    if n == 0 {
        return Err(Error::shape(
            "mean_last",
            "x",
            "rank >= 1, a last axis of at least one element",
            x.shape(),
        ));
    }
    binary_scalar(Binary::Mul, &sum_last(x)?, 1.0 / n as f32)
}

/// Launches a row kernel that reads x (rows, cols) and writes out, one workgroup per row
/// (sum_rows, argmax, softmax); x and out are dense.
pub(crate) fn dispatch_rows(
    gpu: &Gpu,
    op: &'static str,
    def: &KernelDef,
    params: &Params,
    x: &Tensor,
    out: &Tensor,
    rows: usize,
) -> Result<()> {
    let kernel = gpu.kernel(def, &[])?;
    gpu.dispatch(
        &kernel,
        params,
        &[x.gpu_buffer(op)?, out.gpu_buffer(op)?],
        groups_1d(rows as u32),
    )
}
