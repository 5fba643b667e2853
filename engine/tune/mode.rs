//! `ENGINE_TUNE=off|cached|on`: whether the tuner measures, and what it trusts.

use crate::error::{Error, Result};

/// What the tuner does on a call with more than one correct path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TuneMode {
    /// Hand rules only: nothing is timed, nothing read or written.
    Off,
    /// Use what is known (this context's entries, then the cache file), tune what is not.
    #[default]
    Cached,
    /// Ignore the cache file and retune every key once in this context (the results are
    /// written back to the file).
    On,
}

impl TuneMode {
    /// `ENGINE_TUNE`: unset or empty is [`TuneMode::Cached`]; `off`, `cached`, `on` (any
    /// case); any other value is an error naming the variable.
    pub fn from_env() -> Result<TuneMode> {
        match std::env::var_os("ENGINE_TUNE") {
            None => Ok(TuneMode::Cached),
            Some(v) => v
                .to_str()
                .and_then(TuneMode::parse)
                .ok_or_else(|| Error::value("Context::new", "ENGINE_TUNE", "off, cached or on", format!("{v:?}"))),
        }
    }

    /// `off`, `cached` or `on` (any case, surrounding space ignored; empty is `cached`).
    pub fn parse(s: &str) -> Option<TuneMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "0" => Some(TuneMode::Off),
            "" | "cached" => Some(TuneMode::Cached),
            "on" | "1" => Some(TuneMode::On),
            _ => None,
        }
    }
}

impl std::fmt::Display for TuneMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TuneMode::Off => "off",
            TuneMode::Cached => "cached",
            TuneMode::On => "on",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::TuneMode;

    #[test]
    fn the_three_modes_parse_and_nothing_else_does() {
        assert_eq!(TuneMode::parse("off"), Some(TuneMode::Off));
        assert_eq!(TuneMode::parse(" Cached "), Some(TuneMode::Cached));
        assert_eq!(TuneMode::parse(""), Some(TuneMode::Cached));
        assert_eq!(TuneMode::parse("ON"), Some(TuneMode::On));
        assert_eq!(TuneMode::parse("fast"), None);
    }
}
