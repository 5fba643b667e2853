//! Shape keys: many shapes share one tuned choice.
//!
//! Each size goes into its power-of-two bucket (the next power of two at or above it, 0 for
//! an empty axis), and its alignment class (the size mod 4) is kept beside it, since vec4
//! loads and 4-wide register tiles are what tell paths apart at nearby sizes. The dtypes and
//! whatever else changes which paths exist (operand alignment, the strategy plan) are named
//! in the key too, so every shape of a key offers the same candidates.

/// The power-of-two bucket of a size: the next power of two at or above `n`, 0 for 0.
pub(crate) fn bucket(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        n.checked_next_power_of_two().unwrap_or(usize::MAX)
    }
}

/// A key: `dims` as `name<bucket>`, then `mod4` and each of `aligned` as `name<size mod 4>`,
/// then the `tags`. E.g. `m128 n64 k512 mod4 m0 n0 k2 f32 f32 vec_b`.
pub(crate) fn shape_key(dims: &[(&str, usize)], aligned: &[(&str, usize)], tags: &[&str]) -> String {
    let mut parts: Vec<String> = dims.iter().map(|(n, v)| format!("{n}{}", bucket(*v))).collect();
    if !aligned.is_empty() {
        parts.push("mod4".into());
        parts.extend(aligned.iter().map(|(n, v)| format!("{n}{}", v % 4)));
    }
    parts.extend(tags.iter().filter(|t| !t.is_empty()).map(|t| t.to_string()));
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::{bucket, shape_key};

    #[test]
    fn sizes_bucket_to_powers_of_two_and_keys_keep_the_alignment() {
        assert_eq!([0, 1, 2, 3, 4, 5, 64, 65].map(bucket), [0, 1, 2, 4, 4, 8, 64, 128]);
        assert_eq!(
            shape_key(
                &[("m", 100), ("n", 64)],
                &[("m", 100), ("n", 63)],
                &["f32", "", "vec_a"]
            ),
            "m128 n64 mod4 m0 n3 f32 vec_a"
        );
        // Two shapes of one bucket and class share a key; another class does not.
        let k = |m| shape_key(&[("m", m)], &[("m", m)], &[]);
        assert_eq!(k(100), k(120));
        assert_ne!(k(100), k(101));
    }
}
