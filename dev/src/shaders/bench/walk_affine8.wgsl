// A bench peer (dev/src/bin/common/peer.rs), never used by the engine: the simplest one-pass lane
// walk of matrix_affine_scan at k = v = 8, H_t = A_t H_{t-1} + X_t (H_{-1} = 0), one invocation
// per (lane, value column j) of (B, T, N) steps, its state column as two vec4s. Each trip
// issues two steps' loads (A_t as 16 vec4 rows, shared by the 8 column invocations of a lane
// through the cache, and the column's 8 values of X_t) before the two dependent updates.
// T % 2 == 0 (the peer runs at the large shape only).

override WG: u32 = 64u;
// Off: every step starts from a zero state, so no load waits on a previous step (the same
// loads and stores in the same order, without the recurrence).
override CARRY: bool = true;

struct Params {
    lanes: u32, // B * N
    n: u32,     // N
    t_len: u32, // T
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;  // (B, T, N, 8, 8) as (.., 8, 2) vec4s
@group(0) @binding(2) var<storage, read> x: array<f32>;        // (B, T, N, 8, 8)
@group(0) @binding(3) var<storage, read_write> h: array<f32>;  // (B, T, N, 8, 8)

struct Mat {
    r0: vec4<f32>, r1: vec4<f32>, r2: vec4<f32>, r3: vec4<f32>, r4: vec4<f32>, r5: vec4<f32>,
    r6: vec4<f32>, r7: vec4<f32>, r8: vec4<f32>, r9: vec4<f32>, r10: vec4<f32>, r11: vec4<f32>,
    r12: vec4<f32>, r13: vec4<f32>, r14: vec4<f32>, r15: vec4<f32>,
}

struct Col {
    lo: vec4<f32>, // rows 0..4
    hi: vec4<f32>, // rows 4..8
}

// A_t of the step whose 64 values start at element e (e % 64 == 0).
fn load_a(e: u32) -> Mat {
    let q = e / 4u;
    return Mat(a[q], a[q + 1u], a[q + 2u], a[q + 3u], a[q + 4u], a[q + 5u], a[q + 6u], a[q + 7u],
        a[q + 8u], a[q + 9u], a[q + 10u], a[q + 11u], a[q + 12u], a[q + 13u], a[q + 14u], a[q + 15u]);
}

// Column j of X_t: element (i, j) at e + 8 i + j.
fn load_x(c: u32) -> Col {
    return Col(vec4<f32>(x[c], x[c + 8u], x[c + 16u], x[c + 24u]),
        vec4<f32>(x[c + 32u], x[c + 40u], x[c + 48u], x[c + 56u]));
}

fn row(lo: vec4<f32>, hi: vec4<f32>, s: Col) -> f32 {
    return dot(lo, s.lo) + dot(hi, s.hi);
}

// A s + b, written at column c.
fn step(m: Mat, s: Col, b: Col, c: u32) -> Col {
    let r = Col(
        vec4<f32>(row(m.r0, m.r1, s), row(m.r2, m.r3, s), row(m.r4, m.r5, s), row(m.r6, m.r7, s)) + b.lo,
        vec4<f32>(row(m.r8, m.r9, s), row(m.r10, m.r11, s), row(m.r12, m.r13, s), row(m.r14, m.r15, s)) + b.hi,
    );
    h[c] = r.lo.x;
    h[c + 8u] = r.lo.y;
    h[c + 16u] = r.lo.z;
    h[c + 24u] = r.lo.w;
    h[c + 32u] = r.hi.x;
    h[c + 40u] = r.hi.y;
    h[c + 48u] = r.hi.z;
    h[c + 56u] = r.hi.w;
    return r;
}

@compute @workgroup_size(WG)
fn walk_affine8(@builtin(global_invocation_id) gid: vec3<u32>) {
    let lane = gid.x / 8u;
    let j = gid.x % 8u;
    if lane >= p.lanes {
        return;
    }
    let n = p.n;
    let stride = 64u * n; // elements from step t to t + 1
    var e = ((lane / n) * p.t_len * n + lane % n) * 64u;
    var s = Col(vec4<f32>(0.0), vec4<f32>(0.0));
    for (var t = 0u; t < p.t_len; t += 2u) {
        let m0 = load_a(e);
        let m1 = load_a(e + stride);
        let b0 = load_x(e + j);
        let b1 = load_x(e + stride + j);
        let s0 = Col(select(vec4<f32>(0.0), s.lo, CARRY), select(vec4<f32>(0.0), s.hi, CARRY));
        let s1 = step(m0, s0, b0, e + j);
        s = step(m1, Col(select(vec4<f32>(0.0), s1.lo, CARRY), select(vec4<f32>(0.0), s1.hi, CARRY)), b1, e + stride + j);
        e += 2u * stride;
    }
}
