//! Element types of a tensor: [`DType`]. One name through every layer: the tensor's storage,
//! the safetensors loader, the kernels' `dtype` slots (`kernel::dtype`) and the WGSL
//! preludes they generate.
//!
//! F16 and BF16 are stored packed, two elements per 32-bit word, element `2w` in the low
//! half of word `w` and `2w + 1` in the high half: the same bytes as a WGSL `array<f16>`,
//! so a kernel compiled with `shader-f16` can bind the buffer as one later. An odd element
//! count pads the last word. Kernels widen to f32 in registers (`unpack2x16float` for F16,
//! a shift for BF16) and accumulate in f32.

use super::mul;
use crate::error::Result;

/// The element type of a tensor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// 32-bit IEEE float.
    #[default]
    F32,
    /// 16-bit IEEE half precision (1 sign, 5 exponent, 10 mantissa bits).
    F16,
    /// bfloat16: the top 16 bits of an f32 (1 sign, 8 exponent, 7 mantissa bits).
    BF16,
}

impl DType {
    /// Every dtype, for tests and tables.
    pub const ALL: [DType; 3] = [DType::F32, DType::F16, DType::BF16];

    /// The name in safetensors headers and in errors: `F32`, `F16`, `BF16`.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "F32",
            DType::F16 => "F16",
            DType::BF16 => "BF16",
        }
    }

    /// Parses a safetensors header name (`F32`, `F16`, `BF16`) or a command-line spelling
    /// (`f32`, `f16`, `bf16`, `fp16`, `half`).
    pub fn parse(s: &str) -> Option<DType> {
        match s.to_ascii_lowercase().as_str() {
            "f32" | "fp32" | "float32" => Some(DType::F32),
            "f16" | "fp16" | "half" | "float16" => Some(DType::F16),
            "bf16" | "bfloat16" => Some(DType::BF16),
            _ => None,
        }
    }

    /// Bytes of one element (as the data of a safetensors file lays it out).
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::BF16 => 2,
        }
    }

    /// True for F16 and BF16 (stored two per 32-bit word).
    pub fn is_half(self) -> bool {
        self != DType::F32
    }

    /// The value of the kernels' `*_DTYPE` override constants: 0 F32, 1 F16, 2 BF16.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// 32-bit words that hold `n` elements (an odd half count pads the last word).
    pub fn words(self, n: usize) -> usize {
        match self {
            DType::F32 => n,
            DType::F16 | DType::BF16 => n.div_ceil(2),
        }
    }

    /// Bytes of the storage of `n` elements: whole 32-bit words; `op` and `arg` name an
    /// overflow.
    pub fn storage_bytes(self, op: &'static str, arg: &'static str, n: usize) -> Result<usize> {
        mul(op, arg, self.words(n), 4)
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_halves_pack_two_per_word() {
        for d in DType::ALL {
            assert_eq!(DType::parse(d.name()), Some(d));
        }
        assert_eq!(DType::parse("fp16"), Some(DType::F16));
        assert_eq!(DType::parse("f64"), None);
        assert_eq!(DType::F16.words(5), 3);
        assert_eq!(DType::BF16.storage_bytes("t", "n", 4).unwrap(), 8);
        assert_eq!(DType::F32.storage_bytes("t", "n", 3).unwrap(), 12);
    }
}
