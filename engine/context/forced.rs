//! The variables that force a kernel's shape for benchmarks (`ENGINE_HEAD`, `ENGINE_MATVEC`,
//! `ENGINE_LOOKBACK_STEPS`, `ENGINE_SPLIT_K`, `ENGINE_ATTENTION_CHUNK`). Each is read once per
//! process by its op. A value the op cannot read is not silently dropped: it is said once on
//! stderr, naming the variable and what it takes, and the op keeps its rule (a benchmark that
//! meant to force a shape learns it did not).

/// `name`'s value read by `parse` when it is set and `parse` takes it; a set value that
/// `parse` refuses is reported (`expected` says what the variable takes) and gives `None`.
pub(crate) fn forced<T>(name: &str, expected: &str, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
    checked(name, std::env::var(name).ok(), expected, parse)
}

fn checked<T>(name: &str, value: Option<String>, expected: &str, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
    let value = value?;
    let read = parse(&value);
    if read.is_none() {
        log::warn!("{name}={value:?} is not {expected}; keeping the rule");
        eprintln!("engine: {name}={value:?} is not {expected}; keeping the rule");
    }
    read
}

#[cfg(test)]
mod tests {
    use super::checked;

    #[test]
    fn a_forced_value_is_kept_when_valid_and_dropped_when_not() {
        let one_digit = |s: &str| (s.len() == 1).then(|| s.parse::<u32>().ok()).flatten();
        assert_eq!(checked("ENGINE_X", Some("4".into()), "a digit", one_digit), Some(4));
        assert_eq!(checked("ENGINE_X", Some("16".into()), "a digit", one_digit), None);
        assert_eq!(checked("ENGINE_X", None, "a digit", one_digit), None);
    }
}
