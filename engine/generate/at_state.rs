//! The kernels of a compiled decode step that read the `DecodeState`, for any model: a
//! table's row at the state's token or position (`row_at_state`: an embedding, a row of
//! rotary angles), and attention of the step's queries over the cached positions `0..=pos`
//! (`attention_decode`, grouped-query heads included), which for a Llama-style layer also
//! applies the rotary embedding of the state's position to the queries and the current key and
//! writes that key and value into the cache (GPT-2's projection writes its cache itself).
//! Because the token and the position reach these kernels through the state buffer, one
//! captured plan serves every step.

use super::device::{DecodeState, ATTENTION_COUNTERS};
use crate::error::{Error, Result};
use crate::kernel::{shader, KernelDef, Params};
use crate::tensor::Tensor;

const ROW_AT_STATE: KernelDef = KernelDef::new(
    "generate/row_at_state",
    shader!("generate/row_at_state.wgsl"),
    "row_at_state",
);
const ATTENTION_DECODE: KernelDef = KernelDef::new(
    "generate/attention_decode",
    shader!("generate/attention_decode.wgsl"),
    "attention_decode",
);
const ATTENTION_DECODE_ROPE: KernelDef = KernelDef::new(
    "generate/attention_decode_rope",
    shader!("generate/attention_decode_rope.wgsl"),
    "attention_decode_rope",
);

/// Most cached positions the decode attention holds (`MAX_P` in `attention_decode.wgsl`).
pub(crate) const ATTENTION_MAX_P: usize = 2048;
/// Keys a workgroup of the decode attention takes (`CHUNK` in `attend.wgsl`): 128, or what
/// `ENGINE_ATTENTION_CHUNK` forces (16, 32, 64 or 128; read once, for benchmarks). Fewer keys
/// a workgroup put more workgroups on a short cache, and the combine reads more parts.
fn attention_chunk() -> usize {
    static CHUNK: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CHUNK.get_or_init(|| {
        crate::context::forced::forced("ENGINE_ATTENTION_CHUNK", "16, 32, 64 or 128", |v| {
            v.parse().ok().filter(|c| [16, 32, 64, 128].contains(c))
        })
        .unwrap_or(128)
    })
}

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

/// The queries of a decode attention.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Queries<'a> {
    /// The step's queries (H D,), the current key and value already in the cache (GPT-2's
    /// projection writes them).
    Ready(&'a Tensor),
    /// A Llama-style layer's fused projection `qkv` (H D + 2 KVH D, dense from any offset; q,
    /// then k, then v) before the rotary embedding of the state's position (rows of `cos` and
    /// `sin`, (P', D) dense from offset 0 with P' at least the cache's P, `ops::rope`'s
    /// arithmetic). The kernel rotates q and k and writes k and v into the cache at that
    /// position itself, so the caches must be views of one buffer.
    Rotate {
        qkv: &'a Tensor,
        cos: &'a Tensor,
        sin: &'a Tensor,
    },
}

/// Attention of the step's queries over positions `0..=state.pos` of block `layer` of the
/// caches (L, KVH, P, D) -> (1, H D), heads side by side; query head h reads key/value head
/// h / (H / KVH) (grouped-query attention where KVH < H).
pub(crate) fn attention_decode(
    queries: Queries,
    k_cache: &Tensor,
    v_cache: &Tensor,
    layer: usize,
    st: &DecodeState,
) -> Result<Tensor> {
    let op = "generate::attention_decode";
    let ctx = k_cache.context();
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
    // The row holds H query heads, then (for a projection) 2 KVH key and value heads.
    let (row, name, extra) = match queries {
        Queries::Ready(q) => (q, "q", 0),
        Queries::Rotate { qkv, .. } => (qkv, "qkv", 2 * kvh),
    };
    let h = (row.len() / d).saturating_sub(extra);
    if row.len() != (h + extra) * d || h == 0 || !h.is_multiple_of(kvh) || !row.layout().is_dense() {
        return Err(Error::shape(
            op,
            name,
            format!("a dense row of (H + {extra}) x {d} values, H a multiple of the cache's {kvh} heads"),
            row.shape(),
        ));
    }
    if let Queries::Rotate { cos, sin, .. } = queries {
        if k_cache.buffer() != v_cache.buffer() || d % 2 != 0 {
            return Err(Error::mismatch(
                op,
                "k_cache (even D)",
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
    }
    // Chunks of the cache a head (the grid's y), each counting its arrival in this layer's
    // H counters of the state (a cache of one chunk needs none).
    let chunk = attention_chunk();
    let splits = p.div_ceil(chunk);
    if splits > 1 && (layer + 1) * h > ATTENTION_COUNTERS {
        return Err(Error::Unsupported {
            op,
            message: format!(
                "layer {layer} of {h} heads: the decode attention counts arrivals for {ATTENTION_COUNTERS} heads over all layers"
            ),
        });
    }
    let per_layer = kvh * p * d;
    let out = Tensor::uninit(ctx, &[1, h * d], op)?;
    let parts = Tensor::uninit(ctx, &[h * splits * (d + 2)], op)?; // (H, S, D + 2)
    let params = Params::new()
        .usize(p)
        .usize(k_cache.layout().offset + layer * per_layer)
        .usize(v_cache.layout().offset + layer * per_layer)
        .f32(1.0 / (d as f32).sqrt())
        .usize(h / kvh)
        .usize(splits)
        .usize(st.counts.layout().offset + layer * h)
        .usize(h)
        .usize(row.layout().offset);
    let mut buffers = vec![
        st.state.gpu_buffer(op)?,
        out.gpu_buffer(op)?,
        parts.gpu_buffer(op)?,
        st.counts.gpu_buffer(op)?,
    ];
    // The query row, then the caches: two read bindings, or the one buffer the kernel writes.
    let def = match queries {
        Queries::Ready(q) => {
            buffers.extend([q.gpu_buffer(op)?, k_cache.gpu_buffer(op)?, v_cache.gpu_buffer(op)?]);
            &ATTENTION_DECODE
        }
        Queries::Rotate { qkv, cos, sin } => {
            buffers.extend([
                qkv.gpu_buffer(op)?,
                cos.gpu_buffer(op)?,
                sin.gpu_buffer(op)?,
                k_cache.gpu_buffer(op)?,
            ]);
            &ATTENTION_DECODE_ROPE
        }
    };
    gpu.dispatch(
        &gpu.kernel(def, &[("D", d as f64), ("CHUNK", chunk as f64)])?,
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

    const SAMPLING: DeviceSampling = DeviceSampling {
        top_k: 1,
        temperature: 1.0,
        seed: 0,
    };

    /// The f64 attention of queries `qv` (H, D) over positions 0..=pos of layer 1 of the caches
    /// `kv`, `vv` (2, KVH, P, D) -> (H, D).
    fn reference(qv: &[f32], kv: &[f32], vv: &[f32], (kvh, p, d): (usize, usize, usize), pos: usize) -> Vec<f64> {
        let h = qv.len() / d;
        let mut out = vec![0.0; h * d];
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
                out[hh * d + e] = (0..=pos).map(|j| w[j] * f64::from(vv[base + j * d + e])).sum::<f64>() / sum;
            }
        }
        out
    }

    fn assert_close(got: &[f32], want: &[f64], what: &str) {
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (f64::from(*g) - w).abs() <= 1e-5,
                "{what}, element {i}: {g} against {w}"
            );
        }
    }

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
        for pos in [5, 128, 299] {
            st.reset(pos as u32, 0, SAMPLING).unwrap();
            for _ in 0..2 {
                let got = attention_decode(Queries::Ready(&q), &k, &v, 1, &st)
                    .unwrap()
                    .to_vec()
                    .unwrap();
                assert_close(&got, &reference(&qv, &kv, &vv, (kvh, p, d), pos), &format!("pos {pos}"));
            }
        }
        // A NaN value in a later chunk reaches its head's output through the combine (its
        // weight is positive), and the heads of the other key/value head stay finite.
        let mut vn = vv.clone();
        vn[((kvh + 1) * p + 200) * d + 3] = f32::NAN; // layer 1, key/value head 1, key 200, dim 3
        let v = Tensor::from_slice(&ctx, &[l, kvh, p, d], &vn).unwrap();
        st.reset(299, 0, SAMPLING).unwrap();
        let got = attention_decode(Queries::Ready(&q), &k, &v, 1, &st)
            .unwrap()
            .to_vec()
            .unwrap();
        for hh in 0..h {
            let nan = hh / (h / kvh) == 1;
            assert_eq!(got[hh * d + 3].is_nan(), nan, "head {hh}: {}", got[hh * d + 3]);
            assert!(got[hh * d..hh * d + 3].iter().all(|x| x.is_finite()), "head {hh}");
        }
    }

    /// `Queries::Rotate`: the rotary embedding of the state's position on the queries and the
    /// current key (rotate-half), that key and value written into layer 1 of the one-buffer
    /// cache at that position (and nothing else written), and the attention over it, at
    /// positions in the first chunk and in a later one, against the f64 reference.
    #[test]
    fn rotating_decode_attention_writes_the_cache_and_matches_the_reference() {
        let ctx = Context::new().expect("a context");
        if ctx.require_gpu("test").is_err() {
            return;
        }
        let (l, kvh, p, d, h) = (2, 2, 300, 16, 4); // two query heads a key/value head
        let mut rng = Rng::new(11);
        let both = rng.vec_range(2 * l * kvh * p * d, -1.0, 1.0); // (2, L, KVH, P, D): keys, values
        let qkv = rng.vec_range((h + 2 * kvh) * d, -1.0, 1.0);
        let angle = |pos: usize, j: usize| pos as f64 / 10000f64.powf((2 * (j % (d / 2))) as f64 / d as f64);
        let table = |f: fn(f64) -> f64| -> Vec<f32> { (0..p * d).map(|i| f(angle(i / d, i % d)) as f32).collect() };
        let (cos, sin) = (
            Tensor::from_slice(&ctx, &[p, d], &table(f64::cos)).unwrap(),
            Tensor::from_slice(&ctx, &[p, d], &table(f64::sin)).unwrap(),
        );
        // Head `x` (D values) rotated at `pos`, as `ops::rope` does.
        let rotate = |x: &[f32], pos: usize| -> Vec<f32> {
            (0..d)
                .map(|j| {
                    let (partner, sign) = if j < d / 2 {
                        (x[j + d / 2], -1.0)
                    } else {
                        (x[j - d / 2], 1.0)
                    };
                    let a = angle(pos, j);
                    (f64::from(x[j]) * a.cos() + sign * f64::from(partner) * a.sin()) as f32
                })
                .collect()
        };
        let st = DecodeState::new(&ctx, 4).unwrap();
        for pos in [7, 250] {
            let cache = Tensor::from_slice(&ctx, &[2, l, kvh, p, d], &both).unwrap();
            let view = |i: usize| cache.narrow(0, i, i + 1).unwrap().reshape(&[l, kvh, p, d]).unwrap();
            let (k, v) = (view(0), view(1));
            let row = Tensor::from_slice(&ctx, &[1, (h + 2 * kvh) * d], &qkv).unwrap();
            st.reset(pos as u32, 0, SAMPLING).unwrap();
            let queries = Queries::Rotate {
                qkv: &row,
                cos: &cos,
                sin: &sin,
            };
            let got = attention_decode(queries, &k, &v, 1, &st).unwrap().to_vec().unwrap();
            // What the kernel should have written, and the reference over it.
            let mut want = both.clone();
            let (keys, values) = want.split_at_mut(l * kvh * p * d);
            for g in 0..kvh {
                let at = ((kvh + g) * p + pos) * d; // layer 1
                let k_row = rotate(&qkv[(h + g) * d..(h + g + 1) * d], pos);
                keys[at..at + d].copy_from_slice(&k_row);
                values[at..at + d].copy_from_slice(&qkv[(h + kvh + g) * d..(h + kvh + g + 1) * d]);
            }
            let q_rot: Vec<f32> = (0..h).flat_map(|hh| rotate(&qkv[hh * d..(hh + 1) * d], pos)).collect();
            let written = cache.to_vec().unwrap();
            for (i, (a, b)) in written.iter().zip(&want).enumerate() {
                assert!((a - b).abs() <= 1e-5, "pos {pos}: cache element {i} is {a}, want {b}");
            }
            let (keys, values) = want.split_at(l * kvh * p * d);
            let wanted = reference(&q_rot, keys, values, (kvh, p, d), pos);
            assert_close(&got, &wanted, &format!("pos {pos}"));
        }
    }
}
