// prelude: ops/gelu.wgsl
// Shared by every matmul kernel (prepended to each file): the uniform, the batch walk, the
// bias and output bindings and the fused epilogue.
//   out[z, i, j] = epilogue(alpha * sum_k a[z, i, k] * b[z, k, j], j)
// a and b are strided views: element (z, i, k) of a sits at
//   a_offset + batch_offset_a(z) + i * a_rs + k * a_cs,
// and the batch index z walks the (collapsed, broadcast) batch shape row-major, with stride 0
// on broadcast axes. out is dense (batch, M, N).

override EPILOGUE: u32 = 0u; // 0 none, 1 + bias[j], 2 gelu_tanh(. + bias[j]), 3 + bias[j] + residual[z, i, j], 4 + residual[z, i, j]

struct Params {
    m: u32,
    n: u32,
    k: u32,
    batch: u32,
    a_offset: u32,
    a_rs: u32,          // a stride between rows (over M)
    a_cs: u32,          // a stride between columns (over K)
    batch_rank: u32,    // 1..=4 collapsed batch axes
    b_offset: u32,
    b_rs: u32,          // b stride over K
    b_cs: u32,          // b stride over N
    alpha: f32,         // scale applied before the epilogue
    bias_offset: u32,
    bias_stride: u32,
    res_offset: u32,    // EPILOGUE 3 and 4: offset of the residual view
    _pad1: u32,
    batch_shape: vec4<u32>, // collapsed batch axes, axis d at [d]
    a_bs: vec4<u32>,        // a strides over the batch axes (0 where broadcast)
    b_bs: vec4<u32>,        // b strides over the batch axes (0 where broadcast)
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(3) var<storage, read> bias: array<f32>;      // (N,) view; unread when EPILOGUE = 0
@group(0) @binding(4) var<storage, read_write> out: array<f32>; // (batch, M, N) dense
@group(0) @binding(5) var<storage, read> residual: array<f32>;  // (batch, M, N) dense view; EPILOGUE 3 and 4

// Element offsets of batch z in a and b.
fn batch_offsets(z: u32) -> vec2<u32> {
    var rem = z;
    var off = vec2<u32>(p.a_offset, p.b_offset);
    for (var d = i32(p.batch_rank) - 1; d >= 0; d--) {
        let size = p.batch_shape[d];
        let c = rem % size;
        rem = rem / size;
        off += c * vec2<u32>(p.a_bs[d], p.b_bs[d]);
    }
    return off;
}

fn epilogue(acc: f32, col: u32) -> f32 {
    let v = acc * p.alpha;
    switch EPILOGUE {
        case 1u, 3u: { return v + bias[p.bias_offset + col * p.bias_stride]; }
        case 2u: { return gelu_tanh(v + bias[p.bias_offset + col * p.bias_stride]); }
        default: { return v; }
    }
}

fn store(z: u32, row: u32, col: u32, acc: f32) {
    let i = (z * p.m + row) * p.n + col;
    var v = epilogue(acc, col);
    if EPILOGUE == 3u || EPILOGUE == 4u {
        v += residual[p.res_offset + i];
    }
    out[i] = v;
}

// Four consecutive outputs of row `row` from column `col`, each through the epilogue; rows
// and columns past the edges are skipped (the register-tiled kernels' 4-wide stores).
fn store4(z: u32, row: u32, col: u32, v: vec4<f32>) {
    if row >= p.m {
        return;
    }
    for (var j = 0u; j < 4u; j++) {
        if col + j < p.n {
            store(z, row, col + j, v[j]);
        }
    }
}
