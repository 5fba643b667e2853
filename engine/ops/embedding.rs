//! Token + position embedding, gathered and summed in one launch (`shaders/ops/embedding.wgsl`).
//! The tables may be F32, F16 or BF16 (each its own); the output is F32.

use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::reference;
use crate::shape::embedding_shapes;
use crate::tensor::Tensor;

const EMBEDDING: KernelDef = KernelDef::new("ops/embedding", shader!("ops/embedding.wgsl"), "embedding");
/// Most ids [`embedding_backward_of`] takes on the device (4.3e9 cached reads at the bound).
const MAX_DEVICE_IDS: usize = 1 << 16;
const EMBEDDING_LINKS: KernelDef = KernelDef::new(
    "ops/embedding_links",
    shader!("ops/embedding_links.wgsl"),
    "embedding_links",
);
const EMBEDDING_BACKWARD_LINKED: KernelDef = KernelDef::new(
    "ops/embedding_backward_linked",
    shader!("ops/embedding_backward_linked.wgsl"),
    "embedding_backward_linked",
);

/// `wte[ids[t]] + wpe[pos_offset + t]` for every t. wte (V, C), wpe (P, C) -> (T, C) with
/// T = ids.len(). Every id must be below V (and below 2^24) and `pos_offset + T <= P`.
pub fn embedding(wte: &Tensor, wpe: &Tensor, ids: &[u32], pos_offset: usize) -> Result<Tensor> {
    let op = "embedding";
    let ctx = wte.context();
    let (v, _) = check_tables(op, wte, wpe, ids.len(), pos_offset)?;
    check_host_ids(op, ids, v)?;
    if !ctx.is_gpu() {
        let (e, p) = (wte.host_widened(op)?, wpe.host_widened(op)?);
        return Tensor::from_host(ctx, reference::nn::embedding(&e.view(), &p.view(), ids, pos_offset)?);
    }
    gather(op, wte, wpe, &upload_ids(wte, ids)?, pos_offset, ids.len())
}

/// [`embedding`] of `ids.len() / t` sequences of `t` ids laid row after row (a batch), the
/// positions restarting at 0 in each: row r is `wte[ids[r]] + wpe[r % t]`. wte (V, C), wpe
/// (P, C), t <= P -> (ids.len(), C) in one launch. ids on the host or the device.
pub(crate) fn embedding_rows(wte: &Tensor, wpe: &Tensor, ids: &super::Ids, t: usize) -> Result<Tensor> {
    let op = "embedding";
    let n = ids.len();
    if t == 0 || !n.is_multiple_of(t) {
        return Err(Error::value(op, "t", format!("a positive divisor of the {n} ids"), t));
    }
    let (v, c) = check_tables(op, wte, wpe, t, 0)?;
    crate::shape::numel(op, "output (rows, C)", &[n, c])?;
    let ids = match ids {
        super::Ids::Host(h) => {
            check_host_ids(op, h, v)?;
            if !wte.context().is_gpu() {
                let (e, p) = (wte.host_widened(op)?, wpe.host_widened(op)?);
                let mut out = Vec::with_capacity(n * c);
                for row in h.chunks(t) {
                    out.extend(reference::nn::embedding(&e.view(), &p.view(), row, 0)?.iter().copied());
                }
                return Tensor::from_slice(wte.context(), &[n, c], &out);
            }
            upload_ids(wte, h)?
        }
        super::Ids::Device(d) => {
            super::Ids::check_device(d, wte.context(), op, "ids")?;
            if !wte.context().is_gpu() {
                return embedding_rows(wte, wpe, &super::Ids::Host(&super::Ids::read_back(d, op, "ids")?), t);
            }
            (*d).clone()
        }
    };
    gather(op, wte, wpe, &ids, 0, t)
}

/// Every host id below the vocabulary size `v` (and below 2^24, exact as the kernels' f32).
fn check_host_ids(op: &'static str, ids: &[u32], v: usize) -> Result<()> {
    match ids.iter().find(|&&id| id as usize >= v || id >= 1 << 24) {
        Some(bad) => Err(Error::value(
            op,
            "ids",
            format!("token ids below the vocabulary size {v}"),
            bad,
        )),
        None => Ok(()),
    }
}

/// Checked host ids as the (T,) f32 tensor the kernels read (exact below 2^24).
fn upload_ids(wte: &Tensor, ids: &[u32]) -> Result<Tensor> {
    let id_values: Vec<f32> = ids.iter().map(|&i| i as f32).collect();
    Tensor::from_slice(wte.context(), &[ids.len()], &id_values)
}

/// The tables' shapes and context against T ids from `pos_offset`: (V, C).
fn check_tables(op: &'static str, wte: &Tensor, wpe: &Tensor, t: usize, pos_offset: usize) -> Result<(usize, usize)> {
    wpe.expect_context(wte.context(), op, "wpe")?;
    let (v, c, _) = embedding_shapes(op, wte.shape(), wpe.shape())?;
    // (T, C): checked before either path allocates it.
    crate::shape::numel(op, "output (T, C)", &[t, c])?;
    if pos_offset.checked_add(t).is_none_or(|end| end > wpe.shape()[0]) {
        return Err(Error::value(
            op,
            "pos_offset",
            format!("pos_offset + {t} tokens <= {} positions of wpe", wpe.shape()[0]),
            pos_offset,
        ));
    }
    Ok((v, c))
}

/// [`embedding`] with the ids already on the device as exact f32 values (T,), unchecked
/// against V: a compiled plan writes them before each replay (the caller checks them, as
/// `Tensor::write_ids` does). On the CPU context the ids are read back and checked.
pub(crate) fn embedding_of(wte: &Tensor, wpe: &Tensor, ids: &Tensor, pos_offset: usize) -> Result<Tensor> {
    let op = "embedding";
    super::Ids::check_device(ids, wte.context(), op, "ids")?;
    check_tables(op, wte, wpe, ids.len(), pos_offset)?;
    if !wte.context().is_gpu() {
        return embedding(wte, wpe, &super::Ids::read_back(ids, op, "ids")?, pos_offset);
    }
    gather(op, wte, wpe, ids, pos_offset, ids.len())
}

/// The gather kernel over checked tables and ids (T,) on the device, positions
/// `pos_offset + t % period` (`period` = T: one sequence).
fn gather(
    op: &'static str,
    wte: &Tensor,
    wpe: &Tensor,
    ids: &Tensor,
    pos_offset: usize,
    period: usize,
) -> Result<Tensor> {
    let ctx = wte.context();
    let gpu = ctx.require_gpu(op)?;
    let (t, c) = (ids.len(), wte.shape()[1]);
    let out = Tensor::uninit(ctx, &[t, c], op)?;
    if out.is_empty() {
        return Ok(out);
    }
    let (wte, wpe, ids) = (wte.contiguous()?, wpe.contiguous()?, ids.contiguous()?);
    let kernel = gpu.typed_kernel(&EMBEDDING, &[("wte", wte.dtype()), ("wpe", wpe.dtype())], &[])?;
    let buffers = [
        ids.gpu_buffer(op)?,
        wte.typed_buffer(op)?,
        wpe.typed_buffer(op)?,
        out.gpu_buffer(op)?,
    ];
    let params = Params::new()
        .usize(t * c)
        .usize(c)
        .checked(op, "pos_offset", pos_offset)?
        .usize(period.max(1));
    gpu.dispatch_items(&kernel, &params, &buffers, t * c)?;
    Ok(out)
}

/// The backward of a gather by `ids`: row r of the result sums the rows t of `grad` with
/// `ids[t] = r` (dL/d wte from dL/d out; with ids `pos_offset + t`, dL/d wpe). On the GPU a
/// scatter-add without atomics (`shaders/ops/embedding_backward_linked.wgsl`): the host links
/// each row's tokens into a list, and each table element sums its row's in increasing t.
/// grad (T, C) with T = ids.len() -> (rows, C); every id below `rows`.
pub fn embedding_backward(grad: &Tensor, ids: &[u32], rows: usize) -> Result<Tensor> {
    let op = "embedding_backward";
    let t = ids.len();
    let c = check_grad(op, grad, t, rows)?;
    if let Some(bad) = ids.iter().find(|&&id| id as usize >= rows) {
        return Err(Error::value(op, "ids", format!("row indices below {rows}"), bad));
    }
    let ctx = grad.context();
    let Some(gpu) = ctx.gpu() else {
        return Tensor::from_host(
            ctx,
            reference::nn::embedding_backward(&grad.host(op)?.view(), ids, rows)?,
        );
    };
    if t == 0 || rows * c == 0 {
        return Tensor::zeros(ctx, &[rows, c]);
    }
    // Each row's tokens as a list in increasing t, built here as embedding_links.wgsl builds
    // it on the device: first[r] = t + 1 of the row's first token (0: none), next[t] = the
    // row's next token (T: none). Walking t downwards prepends each token to its row's list.
    let mut first = vec![0f32; rows];
    let mut next = vec![0f32; t];
    for (i, &id) in ids.iter().enumerate().rev() {
        let head = first[id as usize];
        next[i] = if head == 0.0 { t as f32 } else { head - 1.0 };
        first[id as usize] = (i + 1) as f32;
    }
    let first = Tensor::from_slice(ctx, &[rows], &first)?;
    let next = Tensor::from_slice(ctx, &[t], &next)?;
    sum_lists(op, gpu, &first, &next, grad, rows)
}

/// The backward's sums over each row's token list (first, next as `embedding_links.wgsl`
/// writes them) of grad (T, C) -> (rows, C) (`embedding_backward_linked.wgsl`).
fn sum_lists(
    op: &'static str,
    gpu: &crate::context::Gpu,
    first: &Tensor,
    next: &Tensor,
    grad: &Tensor,
    rows: usize,
) -> Result<Tensor> {
    let (t, c) = (grad.shape()[0], grad.shape()[1]);
    let grad = grad.contiguous()?;
    let out = Tensor::uninit(grad.context(), &[rows, c], op)?;
    gpu.dispatch_items(
        &gpu.kernel(&EMBEDDING_BACKWARD_LINKED, &[])?,
        &Params::new().usize(rows * c).usize(c).usize(t),
        &[
            first.gpu_buffer(op)?,
            next.gpu_buffer(op)?,
            grad.gpu_buffer(op)?,
            out.gpu_buffer(op)?,
        ],
        rows * c,
    )?;
    Ok(out)
}

/// [`embedding_backward`] with the ids on the device ((T,) F32 exact whole values, written
/// by `Tensor::write_ids`, which checked them below `rows`): no upload and no readback, so a
/// compiled step can hold it. The rows' token lists are built on the device
/// (`embedding_links.wgsl`), then each element sums its row's tokens in increasing t
/// (`embedding_backward_linked.wgsl`, as [`embedding_backward`]'s): its bits. On the CPU
/// context the ids are read back and the host path runs. grad (T, C), ids (T,) -> (rows, C).
pub(crate) fn embedding_backward_of(grad: &Tensor, ids: &Tensor, rows: usize) -> Result<Tensor> {
    let op = "embedding_backward";
    super::Ids::check_device(ids, grad.context(), op, "ids")?;
    let t = ids.len();
    let c = check_grad(op, grad, t, rows)?;
    let ctx = grad.context();
    let Some(gpu) = ctx.gpu() else {
        return embedding_backward(grad, &super::Ids::read_back(ids, op, "ids")?, rows);
    };
    if t == 0 || rows * c == 0 {
        return Tensor::zeros(ctx, &[rows, c]);
    }
    // embedding_links.wgsl is O(T^2) in the batch's ids: past this a launch runs long enough
    // to trip a driver's watchdog, so it is refused (host ids build the lists in O(T)).
    if t > MAX_DEVICE_IDS {
        return Err(Error::value(
            op,
            "ids",
            format!(
                "at most {MAX_DEVICE_IDS} ids on the device (their lists are built in O(T^2)); pass host ids for more"
            ),
            t,
        ));
    }
    let ids = ids.contiguous()?;
    let first = Tensor::zeros(ctx, &[rows])?; // (rows,) 0: no token
    let next = Tensor::uninit(ctx, &[t], op)?; // (T,)
    gpu.dispatch_items(
        &gpu.kernel(&EMBEDDING_LINKS, &[])?,
        &Params::new().usize(t).usize(rows),
        &[ids.gpu_buffer(op)?, next.gpu_buffer(op)?, first.gpu_buffer(op)?],
        t,
    )?;
    sum_lists(op, gpu, &first, &next, grad, rows)
}

/// The backward's gradient (T, C) for T ids and its output (rows, C): C. T below 2^24 (ids
/// and positions travel as exact f32).
fn check_grad(op: &'static str, grad: &Tensor, t: usize, rows: usize) -> Result<usize> {
    grad.expect_dtype(op, "grad", &[crate::DType::F32])?;
    if grad.rank() != 2 || grad.shape()[0] != t {
        return Err(Error::shape(
            op,
            "grad",
            format!("(T, C) with T = {t} ids"),
            grad.shape(),
        ));
    }
    let c = grad.shape()[1];
    crate::shape::numel(op, "output (rows, C)", &[rows, c])?;
    if t >= 1 << 24 {
        return Err(Error::value(op, "ids", "fewer than 2^24 (they travel as f32)", t));
    }
    Ok(c)
}
