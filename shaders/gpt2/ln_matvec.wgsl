// prelude: reduce/tree.wgsl
// prelude: nn/gelu.wgsl
// prelude: gpt2/state.wgsl
// dtype: w quad
// The decode step's projections: one row x (K,) times a row-major weight w (K, N) (HF Conv1D
// layout), with the block's layer norm applied to x first and the bias, GELU, residual add or
// key/value cache write fused into the epilogue:
//   y[j] = sum_k xn[k] w[k, j] + bias[j],   xn = LN ? (x - mean(x)) / sqrt(var(x) + eps) * g + b : x
// EPILOGUE 0: out[j] = y          1: out[j] = gelu_tanh(y)          2: out[j] += y (residual)
//          3: the QKV split: j < C -> out[j] (q); C <= j < 3C -> the key (or value) of head
//             h = (j % C) / D, dim (j % C) % D, written at position state.pos of this layer's
//             keys (values) in the cache buffer.
// Why this shape: a workgroup owns 8 columns (2 vec4) and splits K into 128 interleaved slices,
// so each K row gives one 32-byte sector per workgroup and every slice keeps several
// independent loads in flight; N / 8 workgroups fill the GPU even at N = 768. Each workgroup
// recomputes the layer norm's two moments (2K reads from cache) instead of a dispatch of its own.
// CPU adapters (WHOLE_COLUMNS): each invocation walks all of K for one vec4 of columns, 1024
// columns a workgroup, and no reduction follows: llvmpipe pays a pass over all 256
// invocations for every workgroup and barrier, and the GPU shape (N / 8 workgroups of eight
// barriers each) made the shipped model's plan slower there than op by op.
// Grid: ceil(N / 8) workgroups (ceil(N / 1024) with WHOLE_COLUMNS) along x (folded into y
// past 65535). N % 4 == 0, w dense. w is F32, F16 or BF16 (a dtype slot: four elements per
// array element, widened to f32 by w_at4), so half weights move half the bytes.

override LN: bool = false;
override EPILOGUE: u32 = 0u;
override WHOLE_COLUMNS: bool = false;
// The input width K is an override constant so that the loops over it have constant bounds:
// llvmpipe runs a loop with a runtime bound nested in per-invocation control flow many times
// slower.
override K: u32 = 768u;

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
@group(0) @binding(2) var<storage, read> x: array<f32>;              // (K,)
@group(0) @binding(3) var<storage, read> ln_w: array<f32>;           // (K,), unread unless LN
@group(0) @binding(4) var<storage, read> ln_b: array<f32>;           // (K,), unread unless LN
@group(0) @binding(5) var<storage, read> w: array<w_quad>;           // (K, N / 4)
@group(0) @binding(6) var<storage, read> bias: array<f32>;           // (N,)
@group(0) @binding(7) var<storage, read_write> out: array<f32>;      // (N,), or (C,) for EPILOGUE 3
@group(0) @binding(8) var<storage, read_write> kv: array<f32>;       // (2, L, H, P, D), EPILOGUE 3

var<workgroup> part: array<vec4<f32>, 256>;

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

// x[k], layer-normed when LN.
fn input(k: u32, mean: f32, rstd: f32) -> f32 {
    let v = x[p.x_off + k];
    if LN {
        return (v - mean) * rstd * ln_w[p.ln_w_off + k] + ln_b[p.ln_b_off + k];
    }
    return v;
}

@compute @workgroup_size(256)
fn ln_matvec(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    var mean = 0.0;
    var rstd = 1.0;
    if LN {
        var s = 0.0;
        for (var k = lid; k < K; k += 256u) {
            s += x[p.x_off + k];
        }
        mean = tree_sum(lid, s) / f32(K);
        var q = 0.0;
        for (var k = lid; k < K; k += 256u) {
            let dx = x[p.x_off + k] - mean;
            q += dx * dx;
        }
        rstd = inverseSqrt(tree_sum(lid, q) / f32(K) + p.eps);
    }
    let n4 = p.n / 4u;
    if WHOLE_COLUMNS {
        let col4 = (wid.x + wid.y * nwg.x) * 256u + lid;
        if col4 < n4 {
            var acc = vec4<f32>(0.0);
            for (var k = 0u; k < K; k++) {
                acc = fma(vec4<f32>(input(k, mean, rstd)), w_at4(p.w_off4 + k * n4 + col4), acc);
            }
            for (var e = 0u; e < 4u; e++) {
                let j = col4 * 4u + e;
                store(j, acc[e] + bias[p.bias_off + j]);
            }
        }
        return;
    }
    let col4 = (wid.x + wid.y * nwg.x) * 2u + lid % 2u;
    let slice = lid / 2u;
    var acc = vec4<f32>(0.0);
    if col4 < n4 {
        // Four rows a trip, their loads issued before the dependent FMAs.
        var k = slice;
        var acc1 = vec4<f32>(0.0);
        var acc2 = vec4<f32>(0.0);
        var acc3 = vec4<f32>(0.0);
        for (; k + 384u < K; k += 512u) {
            let w0 = w_at4(p.w_off4 + k * n4 + col4);
            let w1 = w_at4(p.w_off4 + (k + 128u) * n4 + col4);
            let w2 = w_at4(p.w_off4 + (k + 256u) * n4 + col4);
            let w3 = w_at4(p.w_off4 + (k + 384u) * n4 + col4);
            acc = fma(vec4<f32>(input(k, mean, rstd)), w0, acc);
            acc1 = fma(vec4<f32>(input(k + 128u, mean, rstd)), w1, acc1);
            acc2 = fma(vec4<f32>(input(k + 256u, mean, rstd)), w2, acc2);
            acc3 = fma(vec4<f32>(input(k + 384u, mean, rstd)), w3, acc3);
        }
        for (; k < K; k += 128u) {
            acc = fma(vec4<f32>(input(k, mean, rstd)), w_at4(p.w_off4 + k * n4 + col4), acc);
        }
        acc += acc1 + acc2 + acc3;
    }
    part[lid] = acc;
    workgroupBarrier();
    for (var s = 64u; s > 0u; s >>= 1u) {
        if slice < s {
            part[lid] += part[lid + 2u * s];
        }
        workgroupBarrier();
    }
    if lid < 2u && col4 < n4 {
        let y = part[lid];
        for (var e = 0u; e < 4u; e++) {
            let j = col4 * 4u + e;
            store(j, y[e] + bias[p.bias_off + j]);
        }
    }
}
