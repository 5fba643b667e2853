// Element types on the device (prepended where a kernel handles them itself; kernels that
// only read a half operand get generated accessors instead, see `kernel::dtype`). The codes
// are `DType::code`: 0 F32, 1 F16, 2 BF16. Halves are packed two per 32-bit word, element
// 2w in the low 16 bits of word w and 2w + 1 in the high 16 bits (the bytes of array<f16>).
// Everything here is integer arithmetic on the bits: exact for subnormals, infinities and
// NaN, which WGSL float operations may not preserve.

const DTYPE_F32: u32 = 0u;
const DTYPE_F16: u32 = 1u;
const DTYPE_BF16: u32 = 2u;

// The 16 bits of half element i from the word that holds it.
fn half_bits(word: u32, i: u32) -> u32 {
    return (word >> ((i & 1u) * 16u)) & 0xffffu;
}

// IEEE half bits -> f32 bits, exact (subnormal halves become normal f32s).
fn f16_to_f32_bits(h: u32) -> u32 {
    let s = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if e == 31u {
        return s | 0x7f800000u | (m << 13u); // infinity, or NaN with its payload
    }
    if e != 0u {
        return s | ((e + 112u) << 23u) | (m << 13u);
    }
    if m == 0u {
        return s;
    }
    // Subnormal: m 2^-24 = 1.f 2^(b - 24) with b the top set bit of m.
    let b = 31u - countLeadingZeros(m);
    return s | ((b + 103u) << 23u) | ((m << (23u - b)) & 0x7fffffu);
}

// f32 bits -> IEEE half bits, rounded to nearest even; overflow gives infinity, NaN stays
// NaN (quiet), values below half the smallest subnormal give a signed zero.
fn f32_bits_to_f16(x: u32) -> u32 {
    let s = (x >> 16u) & 0x8000u;
    let e = (x >> 23u) & 0xffu;
    let m = x & 0x7fffffu;
    if e == 255u {
        return s | 0x7c00u | select(0u, 0x200u | (m >> 13u), m != 0u);
    }
    if e >= 143u {
        return s | 0x7c00u;
    }
    if e >= 113u {
        // A normal half; a carry out of the mantissa bumps the exponent (to infinity at the top).
        let h = s | ((e - 112u) << 10u) | (m >> 13u);
        let r = m & 0x1fffu;
        return h + u32(r > 0x1000u || (r == 0x1000u && (h & 1u) == 1u));
    }
    if e < 102u {
        return s;
    }
    // A subnormal half: (1.m 2^23) 2^(e - 150) in units of 2^-24 is that mantissa >> (126 - e).
    let shift = 126u - e; // 14 ..= 24
    let mm = m | 0x800000u;
    let q = mm >> shift;
    let r = mm & ((1u << shift) - 1u);
    let tie = 1u << (shift - 1u);
    return s | (q + u32(r > tie || (r == tie && (q & 1u) == 1u)));
}

// f32 bits -> bfloat16 bits (the top half), rounded to nearest even; NaN stays NaN (quiet).
fn f32_bits_to_bf16(x: u32) -> u32 {
    if (x & 0x7fffffffu) > 0x7f800000u {
        return (x >> 16u) | 0x40u;
    }
    let h = x >> 16u;
    let r = x & 0xffffu;
    return h + u32(r > 0x8000u || (r == 0x8000u && (h & 1u) == 1u));
}
