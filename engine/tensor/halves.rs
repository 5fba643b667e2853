//! Half-precision bit patterns on the host: widening an F16 or BF16 pattern to its f32 value
//! and narrowing an f32 back to the nearest pattern, NaN payloads kept bit for bit, so the CPU
//! context stores and returns the patterns it was given, as the GPUs' packed words do.

use crate::shape::DType;

/// The f32 value of a half-precision pattern of `dtype` (exact).
pub(crate) fn widen(dtype: DType, bits: u16) -> f32 {
    // A NaN keeps its sign and payload bit for bit (signalling ones included: `half` and
    // F16C set the quiet bit), so the CPU context stores and returns the patterns it was
    // given, as the GPUs' packed words do.
    if is_half_nan(dtype, bits) {
        let shift = if dtype == DType::BF16 { 16 } else { 13 };
        let sign = ((bits & 0x8000) as u32) << 16;
        let man = (bits & half_man_mask(dtype)) as u32;
        return f32::from_bits(sign | 0x7f80_0000 | (man << shift));
    }
    match dtype {
        DType::BF16 => half::bf16::from_bits(bits).to_f32(),
        _ => half::f16::from_bits(bits).to_f32(),
    }
}

/// The pattern of `x` in `dtype` (F16 or BF16), rounded to nearest even. A NaN keeps its
/// sign and the top bits of its payload (so `narrow(widen(b)) == b` for every pattern `b`);
/// a payload that would truncate to zero (an infinity) becomes quiet.
pub(crate) fn narrow(dtype: DType, x: f32) -> u16 {
    if x.is_nan() {
        let b = x.to_bits();
        let (shift, exp, quiet) = if dtype == DType::BF16 {
            (16, 0x7f80, 0x0040)
        } else {
            (13, 0x7c00, 0x0200)
        };
        let sign = ((b >> 16) & 0x8000) as u16;
        let man = ((b & 0x007f_ffff) >> shift) as u16;
        return sign | exp | if man == 0 { quiet } else { man };
    }
    match dtype {
        DType::BF16 => half::bf16::from_f32(x).to_bits(),
        _ => half::f16::from_f32(x).to_bits(),
    }
}

/// The mantissa bits of a half pattern of `dtype`.
fn half_man_mask(dtype: DType) -> u16 {
    if dtype == DType::BF16 {
        0x007f
    } else {
        0x03ff
    }
}

/// True when `bits` is a NaN pattern of `dtype` (all exponent bits set, mantissa nonzero).
fn is_half_nan(dtype: DType, bits: u16) -> bool {
    let exp = if dtype == DType::BF16 { 0x7f80 } else { 0x7c00 };
    bits & exp == exp && bits & half_man_mask(dtype) != 0
}
