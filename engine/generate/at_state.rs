//! The kernels of a compiled decode step that read the `DecodeState`, for any model: a
//! table's row at the state's token or position (`row_at_state`: an embedding, a row of
//! rotary angles), a Llama-style layer's rotary embedding of the step's queries and keys with
//! the keys and values written into the cache at the state's position (`rope_at_state`;
//! GPT-2's projection writes its cache itself), and attention of the step's queries over the cached positions
//! `0..=pos` (`attention_decode`, grouped-query heads included). Because the token and the
//! position reach these kernels through the state buffer, one captured plan serves every step.

use super::device::{DecodeState, ATTENTION_COUNTERS};
use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::tensor::Tensor;

const ROW_AT_STATE: KernelDef = KernelDef::new(
    "generate/row_at_state",
    shader!("generate/row_at_state.wgsl"),
    "row_at_state",
);
const ROPE_AT_STATE: KernelDef = KernelDef::new(
    "generate/rope_at_state",
    shader!("generate/rope_at_state.wgsl"),
    "rope_at_state",
);
const ATTENTION_DECODE: KernelDef = KernelDef::new(
    "generate/attention_decode",
    shader!("generate/attention_decode.wgsl"),
    "attention_decode",
);

/// Most cached positions the decode attention holds (`MAX_P` in `attention_decode.wgsl`).
pub(crate) const ATTENTION_MAX_P: usize = 2048;
/// Keys a workgroup of the decode attention takes (`CHUNK` in `attention_decode.wgsl`).
const ATTENTION_CHUNK: usize = 128;

/// Which word of the state picks the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    /// The current token (an embedding table's row).
    Token,
    /// The current position (a table indexed by position).
    Position,
}

/// Row `r` of `table` (R, W) as (1, W) f32, r the state's token or position (clamped below
/// R). The table is F32, F16 or BF16, dense from offset 0.
pub(crate) fn row_at_state(table: &Tensor, pick: Pick, st: &DecodeState) -> Result<Tensor> {
    let op = "generate::row_at_state";
    let ctx = table.context();
    let gpu = ctx.require_gpu(op)?;
    let [rows, w] = *table.shape() else {
        return Err(Error::shape(op, "table", "(R, W)", table.shape()));
    };
    if !table.is_contiguous() || rows == 0 {
        return Err(Error::shape(
            op,
            "table",
            "a dense (R, W) from offset 0 with R >= 1",
            table.shape(),
        ));
    }
    let out = Tensor::uninit(ctx, &[1, w], op)?;
    let params = Params::new()
        .usize(w)
        .usize(rows)
        .u32(u32::from(pick == Pick::Position));
    let buffers = [st.state.gpu_buffer(op)?, table.typed_buffer(op)?, out.gpu_buffer(op)?];
    let kernel = gpu.typed_kernel(&ROW_AT_STATE, &[("table", table.dtype())], &[])?;
    gpu.dispatch_items(&kernel, &params, &buffers, w)?;
    Ok(out)
}

/// A Llama-style layer's step after its fused q, k, v projection, in one launch: `qkv`
/// (H D + 2 KVH D, dense from any offset; q, then k, then v) gets the rotary embedding of the
/// state's position (rows of `cos` and `sin`, (P', D) dense from offset 0 with P' at least
/// the cache's P) on q and k (`ops::rope`'s arithmetic); k and v go into block `layer` of the
/// caches (L, KVH, P, D), views of one buffer, at that position (clamped below P); returns q
/// (1, H D).
pub(crate) fn rope_at_state(
    qkv: &Tensor,
    (cos, sin): (&Tensor, &Tensor),
    (k_cache, v_cache): (&Tensor, &Tensor),
    layer: usize,
    st: &DecodeState,
) -> Result<Tensor> {
    let op = "generate::rope_at_state";
    let ctx = qkv.context();
    let gpu = ctx.require_gpu(op)?;
    let s = k_cache.shape();
    let [l, kvh, p, d] = *s else {
        return Err(Error::shape(op, "k_cache", "(L, KVH, P, D)", s));
    };
    let dense = |t: &Tensor| t.layout().is_dense() && t.shape() == s;
    if !dense(k_cache) || !dense(v_cache) || k_cache.buffer() != v_cache.buffer() || layer >= l || d % 2 != 0 {
        return Err(Error::mismatch(
            op,
            "k_cache (L > layer, KVH, P, even D)",
            s,
            "v_cache, a view of the same buffer",
            v_cache.shape(),
        ));
    }
    for (name, t) in [("cos", cos), ("sin", sin)] {
        if t.rank() != 2 || t.shape()[0] < p || t.shape()[1] != d || !t.is_contiguous() || t.layout().offset != 0 {
            return Err(Error::shape(
                op,
                name,
                format!("a dense (P' >= {p}, {d}) table from offset 0"),
                t.shape(),
            ));
        }
    }
    let width = qkv.len();
    let h = width.checked_sub(2 * kvh * d).map_or(0, |q| q / d);
    if h == 0 || width != (h + 2 * kvh) * d || !h.is_multiple_of(kvh) || !qkv.layout().is_dense() {
        return Err(Error::shape(
            op,
            "qkv",
            format!("a dense row of (H + 2 x {kvh}) x {d} values, H a multiple of {kvh}"),
            qkv.shape(),
        ));
    }
    let per_layer = kvh * p * d;
    let out = Tensor::uninit(ctx, &[1, h * d], op)?;
    let params = Params::new()
        .usize(h)
        .usize(kvh)
        .usize(d)
        .usize(p)
        .usize(qkv.layout().offset)
        .usize(k_cache.layout().offset + layer * per_layer)
        .usize(v_cache.layout().offset + layer * per_layer);
    let buffers = [
        st.state.gpu_buffer(op)?,
        qkv.gpu_buffer(op)?,
        cos.gpu_buffer(op)?,
        sin.gpu_buffer(op)?,
        k_cache.gpu_buffer(op)?,
        out.gpu_buffer(op)?,
    ];
    gpu.dispatch_items(&gpu.kernel(&ROPE_AT_STATE, &[])?, &params, &buffers, width)?;
    Ok(out)
}

/// Attention of the step's queries q (H * D,) over positions `0..=state.pos` of block `layer`
/// of the caches (L, KVH, P, D) -> (1, H * D), heads side by side; query head h reads
/// key/value head h / (H / KVH) (grouped-query attention where KVH < H).
pub(crate) fn attention_decode(
    q: &Tensor,
    k_cache: &Tensor,
    v_cache: &Tensor,
    layer: usize,
    st: &DecodeState,
) -> Result<Tensor> {
    let op = "generate::attention_decode";
    let ctx = q.context();
    let gpu = ctx.require_gpu(op)?;
    let s = k_cache.shape();
    let [l, kvh, p, d] = *s else {
        return Err(Error::shape(op, "k_cache", "(L, KVH, P, D)", s));
    };
    if !(4..=256).contains(&d) || !256usize.is_multiple_of(d) {
        return Err(Error::Unsupported {
            op,
            message: format!("head dim {d}: the decode kernel needs a multiple of 4 dividing 256"),
        });
    }
    if p > ATTENTION_MAX_P {
        return Err(Error::Unsupported {
            op,
            message: format!("{p} positions: the decode kernel keeps at most {ATTENTION_MAX_P} scores"),
        });
    }
    let h = q.len() / d;
    if q.len() != h * d || h == 0 || !h.is_multiple_of(kvh) || !q.is_contiguous() {
        return Err(Error::shape(
            op,
            "q",
            format!("a dense row of H * {d} values, H a multiple of the cache's {kvh} heads"),
            q.shape(),
        ));
    }
    let dense = |t: &Tensor| t.layout().is_dense() && t.shape() == s && t.layout().offset.is_multiple_of(4);
    if !dense(k_cache) || !dense(v_cache) || layer >= l {
        return Err(Error::mismatch(
            op,
            "k_cache (L, KVH, P, D)",
            s,
            "v_cache",
            v_cache.shape(),
        ));
    }
    let per_layer = kvh * p * d;
    let out = Tensor::uninit(ctx, &[1, h * d], op)?;
    // Chunks of the cache a head (the grid's y), each counting its arrival in this layer's
    // H counters of the state (a cache of one chunk needs none).
    let splits = p.div_ceil(ATTENTION_CHUNK);
    if splits > 1 && (layer + 1) * h > ATTENTION_COUNTERS {
        return Err(Error::Unsupported {
            op,
            message: format!(
                "layer {layer} of {h} heads: the decode attention counts arrivals for {ATTENTION_COUNTERS} heads over all layers"
            ),
        });
    }
    let parts = Tensor::uninit(ctx, &[h * splits * (d + 2)], op)?; // (H, S, D + 2)
    let params = Params::new()
        .usize(p)
        .usize(k_cache.layout().offset + layer * per_layer)
        .usize(v_cache.layout().offset + layer * per_layer)
        .f32(1.0 / (d as f32).sqrt())
        .usize(h / kvh)
        .usize(splits)
        .usize(st.counts.layout().offset + layer * h);
    let buffers = [
        st.state.gpu_buffer(op)?,
        q.gpu_buffer(op)?,
        k_cache.gpu_buffer(op)?,
        v_cache.gpu_buffer(op)?,
        out.gpu_buffer(op)?,
        parts.gpu_buffer(op)?,
        st.counts.gpu_buffer(op)?,
    ];
    gpu.dispatch(
        &gpu.kernel(&ATTENTION_DECODE, &[("D", d as f64)])?,
        &params,
        &buffers,
        [h as u32, splits as u32, 1],
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Rng;
    use crate::context::Context;
    use crate::generate::device::DeviceSampling;

    /// The decode attention at positions that use one chunk, a chunk and one key, and many
    /// chunks (the last workgroup's combine), grouped-query heads, a later layer of the cache,
    /// and the same dispatch twice (its counters back at zero), against an f64 softmax.
    #[test]
    fn chunked_decode_attention_matches_the_reference() {
        let ctx = Context::new().expect("a context");
        if ctx.require_gpu("test").is_err() {
            return;
        }
        let (l, kvh, p, d, h) = (2, 2, 300, 16, 6); // three query heads a key/value head
        let mut rng = Rng::new(7);
        let kv = rng.vec_range(l * kvh * p * d, -2.0, 2.0);
        let vv = rng.vec_range(l * kvh * p * d, -1.0, 1.0);
        let qv = rng.vec_range(h * d, -1.0, 1.0);
        let k = Tensor::from_slice(&ctx, &[l, kvh, p, d], &kv).unwrap();
        let v = Tensor::from_slice(&ctx, &[l, kvh, p, d], &vv).unwrap();
        let q = Tensor::from_slice(&ctx, &[h * d], &qv).unwrap();
        let st = DecodeState::new(&ctx, 4).unwrap();
        let sampling = DeviceSampling {
            top_k: 1,
            temperature: 1.0,
            seed: 0,
        };
        for pos in [5, 128, 299] {
            st.reset(pos as u32, 0, sampling).unwrap();
            for _ in 0..2 {
                let got = attention_decode(&q, &k, &v, 1, &st).unwrap().to_vec().unwrap();
                for hh in 0..h {
                    let base = ((kvh + hh / (h / kvh)) * p) * d; // layer 1, key/value head
                    let score = |j: usize| {
                        (0..d)
                            .map(|e| f64::from(qv[hh * d + e]) * f64::from(kv[base + j * d + e]))
                            .sum::<f64>()
                            / (d as f64).sqrt()
                    };
                    let s: Vec<f64> = (0..=pos).map(score).collect();
                    let top = s.iter().cloned().fold(f64::MIN, f64::max);
                    let w: Vec<f64> = s.iter().map(|x| (x - top).exp()).collect();
                    let sum: f64 = w.iter().sum();
                    for e in 0..d {
                        let want = (0..=pos).map(|j| w[j] * f64::from(vv[base + j * d + e])).sum::<f64>() / sum;
                        let g = f64::from(got[hh * d + e]);
                        assert!(
                            (g - want).abs() <= 1e-5,
                            "pos {pos} head {hh} dim {e}: {g} against {want}"
                        );
                    }
                }
            }
        }
        // A NaN value in a later chunk reaches its head's output through the combine (its
        // weight is positive), and the heads of the other key/value head stay finite.
        let mut vn = vv.clone();
        vn[((kvh + 1) * p + 200) * d + 3] = f32::NAN; // layer 1, key/value head 1, key 200, dim 3
        let v = Tensor::from_slice(&ctx, &[l, kvh, p, d], &vn).unwrap();
        st.reset(299, 0, sampling).unwrap();
        let got = attention_decode(&q, &k, &v, 1, &st).unwrap().to_vec().unwrap();
        for hh in 0..h {
            let nan = hh / (h / kvh) == 1;
            assert_eq!(got[hh * d + 3].is_nan(), nan, "head {hh}: {}", got[hh * d + 3]);
            assert!(got[hh * d..hh * d + 3].iter().all(|x| x.is_finite()), "head {hh}");
        }
    }
}
