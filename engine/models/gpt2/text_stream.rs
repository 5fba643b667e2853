//! Generated ids to text as they arrive, never splitting a character: a byte-level BPE token
//! may end in the middle of a UTF-8 character, whose last bytes come with a later token.

use super::tokenizer::Tokenizer;
use crate::error::Result;

/// The text of a stream of ids, a piece per id: [`TextStream::push`] returns the characters
/// an id completes (possibly none), [`TextStream::finish`] what is left (an unfinished
/// character as U+FFFD).
///
/// ```
/// use wgsl_compute::models::gpt2::{TextStream, Tokenizer};
/// let tok = Tokenizer::gpt2()?;
/// let mut text = TextStream::new(tok);
/// let mut out = String::new();
/// for id in tok.encode("naïve café") {
///     out += &text.push(id)?;
/// }
/// out += &text.finish();
/// assert_eq!(out, "naïve café");
/// # Ok::<(), wgsl_compute::Error>(())
/// ```
pub struct TextStream<'t> {
    tok: &'t Tokenizer,
    /// Bytes of a character not complete yet (at most 3).
    pending: Vec<u8>,
}

impl<'t> TextStream<'t> {
    /// An empty stream decoding with `tok`.
    pub fn new(tok: &'t Tokenizer) -> Self {
        TextStream { tok, pending: vec![] }
    }

    /// The whole characters `id` completes; an id outside the vocabulary is an error and
    /// leaves the stream as it was.
    pub fn push(&mut self, id: u32) -> Result<String> {
        self.pending.extend(self.tok.decode_bytes(&[id])?);
        // The text `String::from_utf8_lossy` gives these bytes, less an unfinished character
        // at the end, which stays pending: an invalid sequence (not just an unfinished one)
        // cannot be completed later and goes out now as one U+FFFD, and the bytes after it
        // are decoded afresh (they may start a character the next id finishes).
        let mut text = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    text.push_str(s);
                    self.pending.clear();
                    break;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    text.push_str(&String::from_utf8_lossy(&self.pending[..valid]));
                    match e.error_len() {
                        Some(bad) => {
                            text.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..valid + bad);
                        }
                        None => {
                            self.pending.drain(..valid);
                            break;
                        }
                    }
                }
            }
        }
        Ok(text)
    }

    /// What is left: the bytes of an unfinished character, as U+FFFD.
    pub fn finish(self) -> String {
        String::from_utf8_lossy(&self.pending).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_split_over_tokens_comes_whole_with_its_last_token() {
        let tok = Tokenizer::gpt2().unwrap();
        // Byte-level tokens of a 4-byte character: one token per byte, so the first three
        // complete nothing.
        let bytes = "🦀".as_bytes();
        let single = |b: u8| {
            (0..tok.vocab_size() as u32)
                .find(|&id| tok.decode_bytes(&[id]).unwrap() == [b])
                .unwrap()
        };
        let mut s = TextStream::new(tok);
        let pieces: Vec<String> = bytes.iter().map(|&b| s.push(single(b)).unwrap()).collect();
        assert_eq!(pieces, ["", "", "", "🦀"]);
        assert_eq!(s.finish(), "");
    }

    #[test]
    fn an_unfinished_character_is_replaced_at_the_end_and_a_bad_id_is_an_error() {
        let tok = Tokenizer::gpt2().unwrap();
        let lead = (0..tok.vocab_size() as u32)
            .find(|&id| tok.decode_bytes(&[id]).unwrap() == [0xf0])
            .unwrap();
        let mut s = TextStream::new(tok);
        assert_eq!(s.push(lead).unwrap(), "");
        assert!(s.push(u32::MAX).is_err());
        assert_eq!(s.finish(), "\u{fffd}");
    }
}
