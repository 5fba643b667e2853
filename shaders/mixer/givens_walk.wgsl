// prelude: recurrence/launch.wgsl
// prelude: mixer/math.wgsl
// prelude: mixer/givens.wgsl
// What both directions of the angle-fused scan share (prepended to givens_scan.wgsl and
// givens_scan_backward.wgsl): the uniform, the side scratch and the chunk carry walk. In the
// chunked passes side holds, per (lane, chunk), K + 1 columns of K values: columns c < K the
// chunk's transition product applied to e_c (transposed in the backward), column K the
// chunk's local state from zero (the local carry in the backward).

struct Params {
    launch: Launch, // lanes = B * N (recurrence/launch.wgsl)
    n: u32,         // N
}

@group(0) @binding(0) var<uniform> p: Params;
// binding 1: pre (B, T, 2D), declared in givens.wgsl
@group(0) @binding(2) var<storage, read_write> side: array<f32>; // (lanes, chunks, K + 1, K) chunked

// side offset of column c of chunk `ch` of `lane`.
fn side_at(lane: u32, ch: u32, c: u32) -> u32 {
    return ((lane * p.launch.chunks + ch) * (K + 1u) + c) * K;
}

// Column c of chunk `ch` of `lane`, K values.
fn side_load(lane: u32, ch: u32, c: u32) -> array<f32, KMAX> {
    var s: array<f32, KMAX>;
    let o = side_at(lane, ch, c);
    for (var i = 0u; i < K; i++) {
        s[i] = side[o + i];
    }
    return s;
}

fn side_store(lane: u32, ch: u32, c: u32, s: ptr<function, array<f32, KMAX>>) {
    let o = side_at(lane, ch, c);
    for (var i = 0u; i < K; i++) {
        side[o + i] = (*s)[i];
    }
}

// Chunked pass 2, one lane: walks the chunks in scan order (backwards when `reverse`),
// carry = P carry + S, storing each chunk's incoming carry in place of its S.
fn walk_carries(lane: u32, reverse: bool) {
    var carry: array<f32, KMAX>;
    zero(&carry);
    for (var q = 0u; q < p.launch.chunks; q++) {
        let ch = select(q, p.launch.chunks - 1u - q, reverse);
        let so = side_at(lane, ch, K);
        var next: array<f32, KMAX>;
        for (var i = 0u; i < K; i++) {
            next[i] = side[so + i];
            side[so + i] = carry[i];
        }
        for (var c = 0u; c < K; c++) {
            let po = side_at(lane, ch, c);
            for (var i = 0u; i < K; i++) {
                next[i] += side[po + i] * carry[c];
            }
        }
        carry = next;
    }
}
