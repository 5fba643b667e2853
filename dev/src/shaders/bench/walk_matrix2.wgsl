// A bench peer (dev/src/bin/common/peer.rs), never used by the engine: the simplest one-pass lane
// walk of matrix_scan, h_t = A_t h_{t-1} + x_t (2 x 2 A_t, h_{-1} = 0), one invocation per
// lane (b, n) of (B, T, N) steps. Each trip issues 8 steps' loads (A_t one vec4, x_t one vec2)
// before the 8 dependent updates. T % 8 == 0 (the peer runs at the large shape only).

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
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;        // (B, T, N) x (a00, a01, a10, a11)
@group(0) @binding(2) var<storage, read> x: array<vec2<f32>>;        // (B, T, N) x 2
@group(0) @binding(3) var<storage, read_write> h: array<vec2<f32>>;  // (B, T, N) x 2

fn step(m: vec4<f32>, s: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(fma(m.x, s.x, fma(m.y, s.y, b.x)), fma(m.z, s.x, fma(m.w, s.y, b.y)));
}

@compute @workgroup_size(WG)
fn walk_matrix2(@builtin(global_invocation_id) gid: vec3<u32>) {
    let lane = gid.x;
    if lane >= p.lanes {
        return;
    }
    let n = p.n;
    var i = (lane / n) * p.t_len * n + lane % n;
    var s = vec2<f32>(0.0);
    for (var t = 0u; t < p.t_len; t += 8u) {
        let m0 = a[i];
        let m1 = a[i + n];
        let m2 = a[i + 2u * n];
        let m3 = a[i + 3u * n];
        let m4 = a[i + 4u * n];
        let m5 = a[i + 5u * n];
        let m6 = a[i + 6u * n];
        let m7 = a[i + 7u * n];
        let x0 = x[i];
        let x1 = x[i + n];
        let x2 = x[i + 2u * n];
        let x3 = x[i + 3u * n];
        let x4 = x[i + 4u * n];
        let x5 = x[i + 5u * n];
        let x6 = x[i + 6u * n];
        let x7 = x[i + 7u * n];
        s = step(m0, select(vec2<f32>(0.0), s, CARRY), x0);
        h[i] = s;
        s = step(m1, select(vec2<f32>(0.0), s, CARRY), x1);
        h[i + n] = s;
        s = step(m2, select(vec2<f32>(0.0), s, CARRY), x2);
        h[i + 2u * n] = s;
        s = step(m3, select(vec2<f32>(0.0), s, CARRY), x3);
        h[i + 3u * n] = s;
        s = step(m4, select(vec2<f32>(0.0), s, CARRY), x4);
        h[i + 4u * n] = s;
        s = step(m5, select(vec2<f32>(0.0), s, CARRY), x5);
        h[i + 5u * n] = s;
        s = step(m6, select(vec2<f32>(0.0), s, CARRY), x6);
        h[i + 6u * n] = s;
        s = step(m7, select(vec2<f32>(0.0), s, CARRY), x7);
        h[i + 7u * n] = s;
        i += 8u * n;
    }
}
