//! The variables that force a kernel's shape for benchmarks (`ENGINE_HEAD`, `ENGINE_MATVEC`,
//! `ENGINE_LOOKBACK_STEPS`). Each is read once per process by its op. A value the op cannot
//! read is not silently dropped: it is said once on stderr, naming the variable and what it
//! takes, and the op keeps its rule (a benchmark that meant to force a shape learns it did not).

/// `name`'s value when it is set and `valid`; a set value that is not valid is reported
/// (`expected` says what the variable takes) and gives `None`.
pub(crate) fn forced(name: &str, expected: &str, valid: impl Fn(&str) -> bool) -> Option<String> {
    checked(name, std::env::var(name).ok(), expected, valid)
}

fn checked(name: &str, value: Option<String>, expected: &str, valid: impl Fn(&str) -> bool) -> Option<String> {
    let value = value?;
    if valid(&value) {
        return Some(value);
    }
    log::warn!("{name}={value:?} is not {expected}; keeping the rule");
    eprintln!("engine: {name}={value:?} is not {expected}; keeping the rule");
    None
}

#[cfg(test)]
mod tests {
    use super::checked;

    #[test]
    fn a_forced_value_is_kept_when_valid_and_dropped_when_not() {
        let one_digit = |s: &str| s.len() == 1 && s.chars().all(|c| c.is_ascii_digit());
        assert_eq!(
            checked("ENGINE_X", Some("4".into()), "a digit", one_digit),
            Some("4".into())
        );
        assert_eq!(checked("ENGINE_X", Some("16".into()), "a digit", one_digit), None);
        assert_eq!(checked("ENGINE_X", None, "a digit", one_digit), None);
    }
}
