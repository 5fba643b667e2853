//! Which kernels use subgroups, and the directive the browser wants for them. naga 30 (which
//! validates every kernel, and translates it on native backends) rejects `enable subgroups;`
//! and takes the subgroup builtins and functions without it where the device has the
//! feature; on the web wgpu hands the WGSL to the browser as it is, and the browser's
//! compiler wants the directive before any subgroup builtin or function.

use std::borrow::Cow;

/// True when `wgsl` uses a subgroup builtin value (`@builtin(subgroup_size)`, ...) or calls a
/// subgroup function (`subgroupAdd(`, `subgroupShuffleXor(`, ...: `subgroup` then a capital).
pub fn uses_subgroups(wgsl: &str) -> bool {
    wgsl.contains("@builtin(subgroup_")
        || wgsl.match_indices("subgroup").any(|(i, m)| {
            wgsl[i + m.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_uppercase())
        })
}

/// The source as the adapter's shader compiler takes it: with `enable subgroups;` first on
/// the web where the device has subgroups and the kernel uses them (a kernel that names a
/// subgroup function only in a comment gets the directive too, harmless where the feature
/// is on), else unchanged.
pub(crate) fn for_the_adapter(device: &wgpu::Device, wgsl: &Cow<'static, str>) -> Cow<'static, str> {
    if cfg!(target_arch = "wasm32") && device.features().contains(wgpu::Features::SUBGROUP) && uses_subgroups(wgsl) {
        return Cow::Owned(format!("enable subgroups;\n{wgsl}"));
    }
    wgsl.clone()
}

#[cfg(test)]
mod tests {
    use super::uses_subgroups;

    #[test]
    fn subgroup_builtins_and_calls_are_found_and_words_are_not() {
        assert!(uses_subgroups("fn f(@builtin(subgroup_size) s: u32) {}"));
        assert!(uses_subgroups("let t = subgroupAdd(s);"));
        assert!(!uses_subgroups("// one subgroup per row; subgroups of 32"));
        assert!(!uses_subgroups("var subgroup_sums: array<f32, 8>;"));
    }
}
