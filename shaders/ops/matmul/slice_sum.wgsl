// Shared by the split-K sums (prepended; the kernel binds `parts: array<f32>`, S planes of
// `plane` elements, (S, ...) dense): element i summed over the slices in slice order, one
// running sum from 0, so the bits are those of a plain loop. Why eight loads a trip in named
// registers: a loop with a runtime trip count waits one dependent round trip per slice. GPT-2
// 124M's prefill (S = 8 slices, a few MB a sum) on an H100, per dispatch in the profile:
// split_k_sum 11.5 -> 10.4 us, qkv_cache 11.3 -> 10.3 us (most of the rest is the dispatch).
fn slice_sum(i: u32, plane: u32, slices: u32) -> f32 {
    var acc = 0.0;
    var s = 0u;
    for (; s + 8u <= slices; s += 8u) {
        let at = s * plane + i;
        let v0 = parts[at];
        let v1 = parts[at + plane];
        let v2 = parts[at + 2u * plane];
        let v3 = parts[at + 3u * plane];
        let v4 = parts[at + 4u * plane];
        let v5 = parts[at + 5u * plane];
        let v6 = parts[at + 6u * plane];
        let v7 = parts[at + 7u * plane];
        acc = ((((((((acc + v0) + v1) + v2) + v3) + v4) + v5) + v6) + v7);
    }
    for (; s < slices; s++) {
        acc += parts[s * plane + i];
    }
    return acc;
}
