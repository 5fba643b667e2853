// Unary elementwise op over a strided view, written dense:
//   out[i] = OP(x[x_offset + sum_d c_d * x_strides[d]])   for i in 0..n.
// OP 0 (identity) is the strided copy that makes any view contiguous.

override OP: u32 = 0u; // 0 identity, 1 neg, 2 exp, 3 log, 4 tanh, 5 sqrt, 6 abs, 7 sigmoid, 8 relu

struct Params {
    n: u32,
    rank: u32,
    x_offset: u32,
    _pad: u32,
    shape: array<vec4<u32>, 2>,     // out shape, axis d at [d / 4][d % 4]
    x_strides: array<vec4<u32>, 2>, // element strides of x
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;         // x view, see x_strides
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (n,) dense

fn apply(v: f32) -> f32 {
    switch OP {
        case 0u: { return v; }
        case 1u: { return -v; }
        case 2u: { return exp(v); }
        case 3u: { return log(v); }
        // tanh saturates to +-1 in f32 well before |v| = 15; clamping keeps backends that
        // compute it from exp(2v) away from inf / inf.
        case 4u: { return tanh(clamp(v, -15.0, 15.0)); }
        case 5u: { return sqrt(v); }
        case 6u: { return abs(v); }
        case 7u: { return 1.0 / (1.0 + exp(-clamp(v, -88.0, 88.0))); }
        default: { return max(v, 0.0); }
    }
}

@compute @workgroup_size(256)
fn unary(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * 256u + lid;
    if i >= p.n {
        return;
    }
    var rem = i;
    var ix = p.x_offset;
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let q = u32(d) / 4u;
        let r = u32(d) % 4u;
        let size = p.shape[q][r];
        ix += (rem % size) * p.x_strides[q][r];
        rem = rem / size;
    }
    out[i] = apply(x[ix]);
}
