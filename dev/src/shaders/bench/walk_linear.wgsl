// A bench peer (dev/src/bin/common/peer.rs), never used by the engine: the simplest one-pass lane
// walk of linear_scan, h_t = a_t h_{t-1} + x_t from h_{-1} = 0, one invocation per channel
// walk (b, n) of (B, T, N) inputs. Each trip issues 8 steps' loads of a and x before the 8
// dependent updates. T % 8 == 0 (the peer runs at the large shape only).

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
@group(0) @binding(1) var<storage, read> a: array<f32>;        // (B, T, N)
@group(0) @binding(2) var<storage, read> x: array<f32>;        // (B, T, N)
@group(0) @binding(3) var<storage, read_write> h: array<f32>;  // (B, T, N)

@compute @workgroup_size(WG)
fn walk_linear(@builtin(global_invocation_id) gid: vec3<u32>) {
    let lane = gid.x;
    if lane >= p.lanes {
        return;
    }
    let n = p.n;
    var i = (lane / n) * p.t_len * n + lane % n;
    var s = 0.0;
    for (var t = 0u; t < p.t_len; t += 8u) {
        let a0 = a[i];
        let a1 = a[i + n];
        let a2 = a[i + 2u * n];
        let a3 = a[i + 3u * n];
        let a4 = a[i + 4u * n];
        let a5 = a[i + 5u * n];
        let a6 = a[i + 6u * n];
        let a7 = a[i + 7u * n];
        let x0 = x[i];
        let x1 = x[i + n];
        let x2 = x[i + 2u * n];
        let x3 = x[i + 3u * n];
        let x4 = x[i + 4u * n];
        let x5 = x[i + 5u * n];
        let x6 = x[i + 6u * n];
        let x7 = x[i + 7u * n];
        s = fma(a0, select(0.0, s, CARRY), x0);
        h[i] = s;
        s = fma(a1, select(0.0, s, CARRY), x1);
        h[i + n] = s;
        s = fma(a2, select(0.0, s, CARRY), x2);
        h[i + 2u * n] = s;
        s = fma(a3, select(0.0, s, CARRY), x3);
        h[i + 3u * n] = s;
        s = fma(a4, select(0.0, s, CARRY), x4);
        h[i + 4u * n] = s;
        s = fma(a5, select(0.0, s, CARRY), x5);
        h[i + 5u * n] = s;
        s = fma(a6, select(0.0, s, CARRY), x6);
        h[i + 6u * n] = s;
        s = fma(a7, select(0.0, s, CARRY), x7);
        h[i + 7u * n] = s;
        i += 8u * n;
    }
}
