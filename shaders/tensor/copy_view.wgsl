// The uniform of the copies between views (copy_into.wgsl, copy_into_vec4.wgsl), prepended,
// and the walk from an element of the copied shape to its index in src and in dst:
//   dst[dst_offset + sum_d c_d * dst_strides[d]] = src[src_offset + sum_d c_d * src_strides[d]]
// for every coordinate c of `shape` (the axes the host merged, at least one).

struct Params {
    n: u32,
    rank: u32,
    src_offset: u32,
    dst_offset: u32,
    shape: array<vec4<u32>, 2>,       // axis d at [d / 4][d % 4]
    src_strides: array<vec4<u32>, 2>,
    dst_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;

// (src index, dst index) of element e (row-major over `shape`). The outermost axis needs no
// division: what remains of e is its coordinate there.
fn view_index(e: u32) -> vec2<u32> {
    var rem = e;
    var at = vec2<u32>(p.src_offset, p.dst_offset);
    for (var d = p.rank - 1u; d > 0u; d--) {
        let q = d / 4u;
        let r = d % 4u;
        let size = p.shape[q][r];
        let c = rem % size;
        rem = rem / size;
        at += c * vec2<u32>(p.src_strides[q][r], p.dst_strides[q][r]);
    }
    return at + rem * vec2<u32>(p.src_strides[0][0], p.dst_strides[0][0]);
}
