// Broadcasting binary elementwise op over strided views:
//   out[i] = OP(a[a_offset + sum_d c_d * a_strides[d]], b[...])   for i in 0..n,
// where (c_0..c_{rank-1}) is the row-major coordinate of i in `shape`. Broadcast axes have
// stride 0. The host collapses dimensions that are dense in every operand, so the common
// same-shape case runs with rank 1.

override OP: u32 = 0u; // 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min, 6 pow

struct Params {
    n: u32,          // elements in out
    rank: u32,       // 1..=8
    a_offset: u32,
    b_offset: u32,
    shape: array<vec4<u32>, 2>,     // out shape, axis d at [d / 4][d % 4]
    a_strides: array<vec4<u32>, 2>, // element strides of a, 0 on broadcast axes
    b_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;        // a view, see a_strides
@group(0) @binding(2) var<storage, read> b: array<f32>;        // b view, see b_strides
@group(0) @binding(3) var<storage, read_write> out: array<f32>; // (n,) dense

fn apply(x: f32, y: f32) -> f32 {
    switch OP {
        case 0u: { return x + y; }
        case 1u: { return x - y; }
        case 2u: { return x * y; }
        case 3u: { return x / y; }
        case 4u: { return max(x, y); }
        case 5u: { return min(x, y); }
        default: { return pow(x, y); }
    }
}

@compute @workgroup_size(256)
fn binary(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * 256u + lid;
    if i >= p.n {
        return;
    }
    var rem = i;
    var ia = p.a_offset;
    var ib = p.b_offset;
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let q = u32(d) / 4u;
        let r = u32(d) % 4u;
        let size = p.shape[q][r];
        let c = rem % size;
        rem = rem / size;
        ia += c * p.a_strides[q][r];
        ib += c * p.b_strides[q][r];
    }
    out[i] = apply(a[ia], b[ib]);
}
