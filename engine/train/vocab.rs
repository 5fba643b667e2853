//! A character vocabulary: every distinct character of a text, in sorted order.

use std::collections::HashMap;

use crate::error::{Error, Result};

#[derive(Clone, Debug)]
/// Every distinct character of a text, in sorted order, and their ids.
pub struct CharVocab {
    chars: Vec<char>,
    index: HashMap<char, u32>,
}

impl CharVocab {
    /// The distinct characters of `text` (at least two: a model over one class learns nothing).
    pub fn from_text(text: &str) -> Result<Self> {
        let mut chars: Vec<char> = text.chars().collect();
        chars.sort_unstable();
        chars.dedup();
        if chars.len() < 2 {
            return Err(Error::value(
                "CharVocab",
                "text",
                "at least two distinct characters",
                chars.len(),
            ));
        }
        let index = chars.iter().enumerate().map(|(i, &c)| (c, i as u32)).collect();
        Ok(CharVocab { chars, index })
    }

    /// Number of characters.
    pub fn len(&self) -> usize {
        self.chars.len()
    }

    /// Never true for a vocabulary built by `from_text` (it has at least two).
    pub fn is_empty(&self) -> bool {
        self.chars.is_empty()
    }

    /// Ids of `text`; a character outside the vocabulary is an error naming it.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        text.chars()
            .map(|c| {
                self.index.get(&c).copied().ok_or_else(|| {
                    Error::value(
                        "CharVocab::encode",
                        "text",
                        "characters of the training text",
                        format!("{c:?}"),
                    )
                })
            })
            .collect()
    }

    /// The text of `ids` (ids outside the vocabulary become U+FFFD).
    pub fn decode(&self, ids: &[u32]) -> String {
        ids.iter()
            .map(|&i| self.chars.get(i as usize).copied().unwrap_or('\u{FFFD}'))
            .collect()
    }
}
