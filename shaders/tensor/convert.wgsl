// prelude: kernel/grid.wgsl
// prelude: tensor/dtype.wgsl
// A strided view of SRC elements into a dense tensor of DST elements (`Tensor::to_dtype`,
// and `contiguous` of a half view):
//   dst[e] = convert(src[src_offset + sum_d c_d * strides[d]])   e = the row-major index of c
// Dtypes as in tensor/dtype.wgsl (0 F32, 1 F16, 2 BF16); halves are packed two per word.
// Why integer arithmetic only: WGSL lets an implementation assume no inf or NaN, and leaves
// the rounding of f32 -> f16 value conversions (and pack2x16float) to the implementation.
// On the bits every input, subnormals, infinities and NaN included, converts the same on
// every adapter: to a half rounded to nearest even, to f32 exactly.
// One invocation per output word (two elements for a half output), so no two invocations
// write one word. Grid: ceil(words / WG) workgroups (x + y * nwg.x).

override SRC: u32 = 0u;
override DST: u32 = 0u;

struct Params {
    n: u32,           // elements
    rank: u32,
    src_offset: u32,  // in elements
    words: u32,       // output words
    shape: array<vec4<u32>, 2>,   // axis d at [d / 4][d % 4]
    strides: array<vec4<u32>, 2>, // src strides, in elements
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;       // the src view's buffer, SRC words
@group(0) @binding(2) var<storage, read_write> dst: array<u32>; // (n,) dense, DST words

const WG: u32 = 256u;

// The src element index of row-major element e of the view.
fn src_index(e: u32) -> u32 {
    // A dense view (one axis of stride 1 after the host merged them): no divisions, which
    // otherwise cost more than the element's bytes on a fast GPU.
    if p.rank == 1u && p.strides[0][0] == 1u {
        return p.src_offset + e;
    }
    var rem = e;
    var i = p.src_offset;
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let q = u32(d) / 4u;
        let r = u32(d) % 4u;
        let size = p.shape[q][r];
        i += (rem % size) * p.strides[q][r];
        rem = rem / size;
    }
    return i;
}

// Element e of the view: its f32 bits for an F32 source, its 16 bits for a half one.
fn load_bits(e: u32) -> u32 {
    let i = src_index(e);
    if SRC == DTYPE_F32 {
        return src[i];
    }
    return half_bits(src[i >> 1u], i);
}

// Element e of the view as f32 bits (exact).
fn load_f32_bits(e: u32) -> u32 {
    let b = load_bits(e);
    switch SRC {
        case 1u: { return f16_to_f32_bits(b); }
        case 2u: { return b << 16u; }
        default: { return b; }
    }
}

// Element e as DST's 16 bits: copied when the dtypes agree (NaN payloads kept), else
// rounded to nearest even from its exact f32 value.
fn half_out(e: u32) -> u32 {
    if SRC == DST {
        return load_bits(e);
    }
    let x = load_f32_bits(e);
    if DST == DTYPE_BF16 {
        return f32_bits_to_bf16(x);
    }
    return f32_bits_to_f16(x);
}

@compute @workgroup_size(WG)
fn convert(grid: Grid) {
    let w = grid_index(grid, WG);
    if w >= p.words {
        return;
    }
    if DST == DTYPE_F32 {
        dst[w] = load_f32_bits(w);
        return;
    }
    let e = 2u * w;
    var word = half_out(e);
    if e + 1u < p.n {
        word |= half_out(e + 1u) << 16u;
    }
    dst[w] = word;
}
