// prelude: ops/reduce/tree.wgsl
// dtype: w vec4
// The decode step's head, for any model: the final norm of x (1, C) and an output matrix
// stored (V, C) row-major (GPT-2's tied token embedding, a Hugging Face `lm_head.weight`),
//   logits[v] = sum_c xn[c] w[v, c],   xn = (x - mean(x)) / sqrt(var(x) + eps) * g + b
// (RMS: xn = x / sqrt(mean(x^2) + eps) * g, no mean and no b, as Llama's RMS norm).
// Each row of w is one contiguous dot product. Each workgroup
// normalises x into workgroup memory (the moments recomputed per workgroup: 2C reads from
// cache), then computes its ROWS logits, in one of two shapes:
// - GPUs (WHOLE_ROWS false, ROWS 64): 8 groups of 32 lanes, each group 8 rows, each lane a
//   vec4 stride of every row, with the 8 partial sums in registers and one shared-memory
//   reduction at the end: V / 64 workgroups (786 for GPT-2) keep many loads in flight.
// - CPU adapters (WHOLE_ROWS true, ROWS 2048): each invocation owns whole rows and no
//   reduction follows. llvmpipe pays for every workgroup and every barrier a pass over all
//   256 invocations; the GPU shape made the head 48% of a lavapipe step.
// Grid: ceil(V / ROWS) workgroups along x (folded into y past 65535). C % 4 == 0, C <= MAX_C.
// w is F32, F16 or BF16 (a dtype slot, widened to f32 by w_at4).

override RMS: bool = false;
override WHOLE_ROWS: bool = false;
override ROWS: u32 = 64u;
// The width C is an override constant so that the loops over it have constant bounds:
// llvmpipe runs a loop with a runtime bound nested in a per-invocation loop many times slower.
override C: u32 = 768u;

const MAX_C: u32 = 1600u;

struct Params {
    vocab: u32,
    eps: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;          // (C,)
@group(0) @binding(2) var<storage, read> ln_w: array<f32>;       // (C,)
@group(0) @binding(3) var<storage, read> ln_b: array<f32>;       // (C,), unread with RMS
@group(0) @binding(4) var<storage, read> w: array<w_vec4>;       // (V, C / 4)
@group(0) @binding(5) var<storage, read_write> logits: array<f32>; // (V,)

// Scalars, not vec4s: llvmpipe reads a vec4 workgroup element at a dynamic index about 100x
// slower than four scalars.
var<workgroup> xn: array<f32, MAX_C>;

fn xn4(i: u32) -> vec4<f32> {
    let c = 4u * i;
    return vec4<f32>(xn[c], xn[c + 1u], xn[c + 2u], xn[c + 3u]);
}
var<workgroup> part: array<f32, 2048>;    // [group][row][lane]

@compute @workgroup_size(256)
fn head(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    // Moments of the row scaled by a power of two (ops/reduce/tree.wgsl: finite rows up to
    // f32::MAX do not overflow).
    let pre = norm_prescale(C);
    var s = 0.0;
    var big = 0.0;
    for (var c = lid; c < C; c += 256u) {
        s += x[c] * pre;
        big = max(big, abs(x[c]));
    }
    let scale = row_scale(tree_max(lid, big));
    let mean = select(norm_mean(tree_sum(lid, s), C, scale), 0.0, RMS);
    var q = 0.0;
    for (var c = lid; c < C; c += 256u) {
        let d = x[c] * scale - mean;
        q += d * d;
    }
    let rstd = norm_rstd(tree_sum(lid, q), C, p.eps, scale);
    let c4 = C / 4u;
    for (var i = lid; i < c4; i += 256u) {
        let c = 4u * i;
        let xv = vec4<f32>(x[c], x[c + 1u], x[c + 2u], x[c + 3u]);
        let g = vec4<f32>(ln_w[c], ln_w[c + 1u], ln_w[c + 2u], ln_w[c + 3u]);
        let b = select(vec4<f32>(ln_b[c], ln_b[c + 1u], ln_b[c + 2u], ln_b[c + 3u]), vec4<f32>(0.0), RMS);
        let v = (xv * scale - mean) * rstd * g + b;
        xn[c] = v.x;
        xn[c + 1u] = v.y;
        xn[c + 2u] = v.z;
        xn[c + 3u] = v.w;
    }
    workgroupBarrier();
    let base = (wid.x + wid.y * nwg.x) * ROWS;
    if WHOLE_ROWS {
        for (var row = base + lid; row < min(base + ROWS, p.vocab); row += 256u) {
            var a = vec4<f32>(0.0);
            for (var i = 0u; i < c4; i++) {
                a = fma(xn4(i), w_at4(row * c4 + i), a);
            }
            logits[row] = a.x + a.y + a.z + a.w;
        }
        return;
    }
    let group = lid / 32u;
    let lane = lid % 32u;
    let first = base + group * 8u;
    var acc = array<f32, 8>();
    for (var r = 0u; r < 8u; r++) {
        let row = min(first + r, p.vocab - 1u);
        var a = 0.0;
        for (var i = lane; i < c4; i += 32u) {
            a += dot(xn4(i), w_at4(row * c4 + i));
        }
        acc[r] = a;
    }
    for (var r = 0u; r < 8u; r++) {
        part[(group * 8u + r) * 32u + lane] = acc[r];
    }
    workgroupBarrier();
    if lid < 64u {
        var t = 0.0;
        for (var l = 0u; l < 32u; l++) {
            t += part[lid * 32u + l];
        }
        let row = base + lid;
        if row < p.vocab {
            logits[row] = t;
        }
    }
}
