// prelude: ops/reduce/tree.wgsl
// dtype: w vec4
// The decode step's head, for any model: the final norm of x (1, C) and an output matrix
// stored (V, C) row-major (GPT-2's tied token embedding, a Hugging Face `lm_head.weight`),
//   logits[v] = sum_c xn[c] w[v, c],   xn = (x - mean(x)) / sqrt(var(x) + eps) * g + b
// (RMS: xn = x / sqrt(mean(x^2) + eps) * g, no mean and no b, as Llama's RMS norm).
// Each row of w is one contiguous dot product. Each workgroup
// normalises x into workgroup memory (the moments recomputed per workgroup: 2C reads from
// cache), then computes its ROWS logits, in one of two shapes:
// - GPUs (WHOLE_ROWS false): 8 groups of 32 lanes, each group ROWS / 8 rows (1, 2, 4 or 8),
//   each lane a vec4 stride of every row. Why rows in pairs and loads in named
//   registers: one lane's loads of a row, issued one dependent round trip at a time, kept too
//   few bytes in flight (f16 weights took as long as f32), so each trip loads four vec4s of
//   two rows, eight loads, and issues them a trip ahead, before the trip in hand is used; the
//   first trip's loads go out before the moments' barriers (GPT-2's head on an H100, eight
//   loads a trip used at once: 86.7 -> 74.5 us in f32, 75.2 -> 55.5 us in f16). The partial
//   sums meet in one shared-memory reduction at the end.
// - CPU adapters (WHOLE_ROWS true, ROWS 2048): each invocation owns whole rows and no
//   reduction follows. llvmpipe pays for every workgroup and every barrier a pass over all
//   256 invocations; the GPU shape made the head 48% of a lavapipe step.
// Grid: ceil(V / ROWS) workgroups along x (folded into y past 65535). C % 4 == 0, C <= MAX_C.
// w is F32, F16 or BF16 (a dtype slot, widened to f32 by w_at4).

override RMS: bool = false;
override WHOLE_ROWS: bool = false;
override ROWS: u32 = 64u;        // rows a workgroup: 8, 16, 32 or 64 on GPUs, 2048 with WHOLE_ROWS
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

// Vec4 i of row `row`, zero past the row's C / 4 vec4s.
fn w_row4(row: u32, i: u32) -> vec4<f32> {
    if i < C / 4u {
        return w_at4(row * (C / 4u) + i);
    }
    return vec4<f32>(0.0);
}

// xn[4 i .. 4 i + 4], zero past C.
fn xn4_or_0(i: u32) -> vec4<f32> {
    if i < C / 4u {
        return xn4(i);
    }
    return vec4<f32>(0.0);
}

@compute @workgroup_size(256)
fn head(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let base = (wid.x + wid.y * nwg.x) * ROWS;
    let group = lid / 32u;
    let lane = lid % 32u;
    let group_rows = ROWS / 8u;
    let first = base + group * group_rows;
    // The first trip's loads (rows first and first + 1, vec4s lane + 32 t, t < 4), before the
    // moments (unused with WHOLE_ROWS).
    var r0 = min(first, p.vocab - 1u);
    var r1 = min(first + 1u, p.vocab - 1u);
    var a0 = w_row4(r0, lane);
    var a1 = w_row4(r0, lane + 32u);
    var a2 = w_row4(r0, lane + 64u);
    var a3 = w_row4(r0, lane + 96u);
    var b0 = w_row4(r1, lane);
    var b1 = w_row4(r1, lane + 32u);
    var b2 = w_row4(r1, lane + 64u);
    var b3 = w_row4(r1, lane + 96u);
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
    // Rows r, r + 1 of the group a pass (with one row a group the second is the first again,
    // its sum unwritten); four vec4s of each a trip.
    for (var r = 0u; r < group_rows; r += 2u) {
        r0 = min(first + r, p.vocab - 1u);
        r1 = min(first + r + 1u, p.vocab - 1u);
        var s0 = 0.0;
        var s1 = 0.0;
        for (var i = lane; i < c4; i += 128u) {
            if r != 0u || i != lane {
                a0 = w_row4(r0, i);
                a1 = w_row4(r0, i + 32u);
                a2 = w_row4(r0, i + 64u);
                a3 = w_row4(r0, i + 96u);
                b0 = w_row4(r1, i);
                b1 = w_row4(r1, i + 32u);
                b2 = w_row4(r1, i + 64u);
                b3 = w_row4(r1, i + 96u);
            }
            let x0 = xn4_or_0(i);
            let x1 = xn4_or_0(i + 32u);
            let x2 = xn4_or_0(i + 64u);
            let x3 = xn4_or_0(i + 96u);
            s0 += (dot(x0, a0) + dot(x1, a1)) + (dot(x2, a2) + dot(x3, a3));
            s1 += (dot(x0, b0) + dot(x1, b1)) + (dot(x2, b2) + dot(x3, b3));
        }
        part[(group * group_rows + r) * 32u + lane] = s0;
        if r + 1u < group_rows {
            part[(group * group_rows + r + 1u) * 32u + lane] = s1;
        }
    }
    workgroupBarrier();
    if lid < ROWS {
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
