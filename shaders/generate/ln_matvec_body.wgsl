// dtype: w vec4
// The decode step's projections (prelude of generate/ln_matvec.wgsl and
// generate/ln_matvec_subgroup.wgsl, which bring the workgroup sums): one row x (K,) times a
// row-major weight w (K, N) (HF Conv1D layout), with the block's layer norm applied to x
// first and the bias, GELU, residual add or key/value cache write fused into the epilogue:
//   y[j] = sum_k xn[k] w[k, j] + bias[j],   xn = LN ? (x - mean(x)) / sqrt(var(x) + eps) * g + b : x
// (RMS: Llama's RMS norm instead, xn = x / sqrt(mean(x^2) + eps) * g: no mean, no b).
// SWIGLU (never with LN): x is a (2K,) row of gate then up, and xn[k] = silu(x[k]) x[K + k],
// the SwiGLU of Llama's MLP folded into its down projection.
// EPILOGUE 0: out[j] = y          1: out[j] = gelu_tanh(y)          2: out[j] += y (residual)
//          3: the QKV split: j < C -> out[j] (q); C <= j < 3C -> the key (or value) of head
//             h = (j % C) / D, dim (j % C) % D, written at position state.pos of this layer's
//             keys (values) in the cache buffer.
// GPU shape: a workgroup owns C4 vec4 columns (4 C4 columns) and splits K into 256 / C4
// interleaved slices; invocation lid reads column lid % C4 of rows lid / C4, lid / C4 +
// 256 / C4, ... so a warp's loads of one row are one contiguous run. Why the loads come
// first: a decode projection is a few MB, far too little to reach bandwidth one dependent
// round trip at a time, so each invocation issues the loads of its first four rows before
// the layer norm's moments are reduced (the barriers do not wait for them), and each trip of
// four rows issues the next trip's loads before it uses its own. Small C4 gives many workgroups (N / 4 at C4 = 1: 192 at
// N = 768), large C4 longer runs per row; the host picks C4 (measured). The slices'
// partial sums are then folded by `fold_slices` (a shared-memory tree or subgroup shuffles).
// Each workgroup recomputes the moments (2K reads from cache) instead of a dispatch of its own.
// CPU adapters (WHOLE_COLUMNS): each invocation walks all of K for one vec4 of columns, 1024
// columns a workgroup, and no reduction follows: llvmpipe pays a pass over all 256
// invocations for every workgroup and barrier, and the GPU shape made the shipped model's plan
// slower there than op by op.
// Grid: ceil(N / (4 C4)) workgroups (ceil(N / 1024) with WHOLE_COLUMNS) along x (folded into
// y past 65535). N % 4 == 0, w dense. w is F32, F16 or BF16 (a dtype slot: four elements per
// array element, widened to f32 by w_at4), so half weights move half the bytes.

override LN: bool = false;
override RMS: bool = false; // with LN: the RMS norm (mean taken as 0, ln_b unread)
override EPILOGUE: u32 = 0u;
override SWIGLU: bool = false;
override WHOLE_COLUMNS: bool = false;
// The input width K is an override constant so that the loops over it have constant bounds:
// llvmpipe runs a loop with a runtime bound nested in per-invocation control flow many times
// slower, and the GPU compilers unroll the chunk loops.
override K: u32 = 768u;
// Vec4 columns per workgroup on GPUs: 1, 2, 4 or 8.
override C4: u32 = 2u;

struct Params {
    n: u32,
    x_off: u32,
    w_off4: u32,     // offset of w in vec4s
    bias_off: u32,
    out_off: u32,
    ln_w_off: u32,
    ln_b_off: u32,
    eps: f32,
    c: u32,          // EPILOGUE 3: model width C = N / 3
    d: u32,          // EPILOGUE 3: head dim D
    positions: u32,  // EPILOGUE 3: cache length P
    k_off: u32,      // EPILOGUE 3: offset of this layer's keys (H, P, D) in `kv`
    v_off: u32,      // EPILOGUE 3: offset of this layer's values
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> state: State;
@group(0) @binding(2) var<storage, read> x: array<f32>;              // (K,), or (2K,) with SWIGLU
@group(0) @binding(3) var<storage, read> ln_w: array<f32>;           // (K,), unread unless LN
@group(0) @binding(4) var<storage, read> ln_b: array<f32>;           // (K,), unread unless LN
@group(0) @binding(5) var<storage, read> w: array<w_vec4>;           // (K, N / 4)
@group(0) @binding(6) var<storage, read> bias: array<f32>;           // (N,)
@group(0) @binding(7) var<storage, read_write> out: array<f32>;      // (N,), or (C,) for EPILOGUE 3
@group(0) @binding(8) var<storage, read_write> kv: array<f32>;       // (2, L, H, P, D), EPILOGUE 3

fn store(j: u32, y: f32) {
    switch EPILOGUE {
        case 1u: { out[p.out_off + j] = gelu_tanh(y); }
        case 2u: { out[p.out_off + j] += y; }
        case 3u: {
            let which = j / p.c;
            let c = j % p.c;
            if which == 0u {
                out[p.out_off + c] = y;
            } else {
                let pos = min(state.pos, p.positions - 1u);
                let i = ((c / p.d) * p.positions + pos) * p.d + c % p.d;
                kv[select(p.v_off, p.k_off, which == 1u) + i] = y;
            }
        }
        default: { out[p.out_off + j] = y; }
    }
}

// What the prologue reads of row k, zero past K (so its xn is zero there): (x[k], ln_w[k],
// ln_b[k]), or with SWIGLU (gate, up, 0). Read apart from the moments so that the first
// trip's reads go out with its weights, before the moments' barriers.
fn raw(k: u32) -> vec3<f32> {
    if k >= K {
        return vec3<f32>(0.0);
    }
    let v = x[p.x_off + k];
    if SWIGLU {
        return vec3<f32>(v, x[p.x_off + K + k], 0.0);
    }
    if LN {
        return vec3<f32>(v, ln_w[p.ln_w_off + k], select(ln_b[p.ln_b_off + k], 0.0, RMS));
    }
    return vec3<f32>(v, 0.0, 0.0);
}

// xn of a row read by `raw`: layer-normed when LN (moments of the row scaled by `scale`),
// gated when SWIGLU.
fn prologue(r: vec3<f32>, scale: f32, mean: f32, rstd: f32) -> f32 {
    if SWIGLU {
        return r.x / (1.0 + exp(-r.x)) * r.y;
    }
    if LN {
        return (r.x * scale - mean) * rstd * r.y + r.z;
    }
    return r.x;
}

// The weights of row k of vec4 column col4 (zero past K or past the columns).
fn row(k: u32, col4: u32, live: bool) -> vec4<f32> {
    if live && k < K {
        return w_at4(p.w_off4 + k * (p.n / 4u) + col4);
    }
    return vec4<f32>(0.0);
}

// Invocation lid's share of the projection in workgroup `group`: the moments, then its
// slices' partial sums, folded and stored by the invocations lid < C4.
fn project(group: u32, lid: u32) {
    let n4 = p.n / 4u;
    let col4 = group * C4 + lid % C4;
    let slice = lid / C4;
    let live = !WHOLE_COLUMNS && col4 < n4;
    // Four rows a trip, in four registers (an array indexed in a loop went to local memory
    // on NVIDIA and ran 1.6x slower); the first trip's loads, weights and prologue reads,
    // are issued before the moments.
    let s = 256u / C4;
    var w0 = row(slice, col4, live);
    var w1 = row(slice + s, col4, live);
    var w2 = row(slice + 2u * s, col4, live);
    var w3 = row(slice + 3u * s, col4, live);
    var r0 = raw(slice);
    var r1 = raw(slice + s);
    var r2 = raw(slice + 2u * s);
    var r3 = raw(slice + 3u * s);
    var scale = 1.0;
    var mean = 0.0;
    var rstd = 1.0;
    if LN {
        // Moments of the row scaled by a power of two (ops/reduce/tree.wgsl: finite rows up to
        // f32::MAX do not overflow), the sum and the largest magnitude in one reduction.
        let pre = norm_prescale(K);
        var sum = 0.0;
        var big = 0.0;
        for (var k = lid; k < K; k += 256u) {
            let v = x[p.x_off + k];
            sum += v * pre;
            big = max(big, abs(v));
        }
        let sm = group_sum_max(lid, sum, big);
        scale = row_scale(sm.y);
        mean = select(norm_mean(sm.x, K, scale), 0.0, RMS);
        var q = 0.0;
        for (var k = lid; k < K; k += 256u) {
            let dx = x[p.x_off + k] * scale - mean;
            q += dx * dx;
        }
        rstd = norm_rstd(group_sum(lid, q, 1u), K, p.eps, scale);
    }
    if WHOLE_COLUMNS {
        let c4 = group * 256u + lid;
        if c4 < n4 {
            var acc = vec4<f32>(0.0);
            for (var k = 0u; k < K; k++) {
                acc = fma(vec4<f32>(prologue(raw(k), scale, mean, rstd)), w_at4(p.w_off4 + k * n4 + c4), acc);
            }
            for (var e = 0u; e < 4u; e++) {
                let j = c4 * 4u + e;
                store(j, acc[e] + bias[p.bias_off + j]);
            }
        }
        return;
    }
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    for (var k = slice; k < K; k += 4u * s) {
        if k != slice {
            w0 = row(k, col4, live);
            w1 = row(k + s, col4, live);
            w2 = row(k + 2u * s, col4, live);
            w3 = row(k + 3u * s, col4, live);
            r0 = raw(k);
            r1 = raw(k + s);
            r2 = raw(k + 2u * s);
            r3 = raw(k + 3u * s);
        }
        acc0 = fma(vec4<f32>(prologue(r0, scale, mean, rstd)), w0, acc0);
        acc1 = fma(vec4<f32>(prologue(r1, scale, mean, rstd)), w1, acc1);
        acc2 = fma(vec4<f32>(prologue(r2, scale, mean, rstd)), w2, acc2);
        acc3 = fma(vec4<f32>(prologue(r3, scale, mean, rstd)), w3, acc3);
    }
    let y = fold_slices(lid, (acc0 + acc1) + (acc2 + acc3));
    if lid < C4 && live {
        for (var e = 0u; e < 4u; e++) {
            let j = col4 * 4u + e;
            store(j, y[e] + bias[p.bias_off + j]);
        }
    }
}
