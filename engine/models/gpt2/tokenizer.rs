//! GPT-2's byte-level BPE tokenizer (the `r50k_base` ranks, embedded), offline.
//!
//! Encoding: split the text with GPT-2's pre-tokenisation pattern
//! `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`, then merge
//! each piece's bytes pairwise, lowest rank first, until no adjacent pair is a token.
//! `<|endoftext|>` in the text becomes id 50256. Decoding concatenates the tokens' bytes.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;

use crate::error::{Error, Result};

/// The end-of-text token.
pub const END_OF_TEXT: u32 = 50256;
const END_OF_TEXT_STR: &str = "<|endoftext|>";

/// `base64(token bytes) rank` per line, ranks 0..50256.
static RANKS: &[u8] = include_bytes!("../../../assets/gpt2/r50k_base.tiktoken");

/// GPT-2's pattern without the `\s+(?!\S)` alternative (the `regex` crate has no
/// lookahead); [`Tokenizer::pieces`] restores its effect by hand.
const PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+";

/// The tokenizer: byte strings to ranks and back.
pub struct Tokenizer {
    encoder: HashMap<Vec<u8>, u32>,
    /// Length of the longest token, in bytes.
    max_token_bytes: usize,
    decoder: Vec<Vec<u8>>,
    pattern: Regex,
}

impl Tokenizer {
    /// GPT-2's tokenizer, parsed once per process.
    pub fn gpt2() -> Result<&'static Tokenizer> {
        static T: OnceLock<std::result::Result<Tokenizer, String>> = OnceLock::new();
        T.get_or_init(Tokenizer::parse).as_ref().map_err(|m| Error::Io {
            what: "assets/gpt2/r50k_base.tiktoken".into(),
            message: m.clone(),
        })
    }

    fn parse() -> std::result::Result<Tokenizer, String> {
        let text = std::str::from_utf8(RANKS).map_err(|e| e.to_string())?;
        let mut decoder = Vec::with_capacity(END_OF_TEXT as usize + 1);
        for (line_no, line) in text.lines().enumerate() {
            let (b64, rank) = line
                .split_once(' ')
                .ok_or_else(|| format!("line {}: expected `base64 rank`", line_no + 1))?;
            if rank.parse::<usize>().ok() != Some(decoder.len()) {
                return Err(format!("line {}: rank {rank} out of order", line_no + 1));
            }
            decoder.push(base64_decode(b64).ok_or_else(|| format!("line {}: bad base64", line_no + 1))?);
        }
        if decoder.len() != END_OF_TEXT as usize {
            return Err(format!("{} ranks, expected {END_OF_TEXT}", decoder.len()));
        }
        let encoder = decoder.iter().enumerate().map(|(i, b)| (b.clone(), i as u32)).collect();
        decoder.push(END_OF_TEXT_STR.as_bytes().to_vec());
        let pattern = Regex::new(PATTERN).map_err(|e| e.to_string())?;
        let max_token_bytes = decoder.iter().map(Vec::len).max().unwrap_or(0);
        Ok(Tokenizer {
            encoder,
            max_token_bytes,
            decoder,
            pattern,
        })
    }

    /// Number of ids (50257, `<|endoftext|>` included).
    pub fn vocab_size(&self) -> usize {
        self.decoder.len()
    }

    /// Token ids of `text`; each `<|endoftext|>` becomes [`END_OF_TEXT`].
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for (i, part) in text.split(END_OF_TEXT_STR).enumerate() {
            if i > 0 {
                ids.push(END_OF_TEXT);
            }
            for piece in self.pieces(part) {
                self.encode_piece(piece.as_bytes(), &mut ids);
            }
        }
        ids
    }

    /// The pre-tokenisation of `text`: GPT-2's pattern applied left to right.
    pub fn pieces<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(m) = self.pattern.find_at(text, pos) {
            let s = m.as_str();
            // `\s+(?!\S)` comes before `\s+` in GPT-2's pattern: a whitespace run followed
            // by a non-space gives up its last character, which then starts the next piece
            // (so " world" keeps its space). A run at the end of the text is taken whole.
            let last = s.char_indices().last().map(|(i, _)| i).unwrap_or(0);
            if m.end() < text.len() && last > 0 && s.chars().all(char::is_whitespace) {
                out.push(&text[m.start()..m.start() + last]);
                pos = m.start() + last;
            } else {
                out.push(s);
                pos = m.end();
            }
        }
        out
    }

    /// The rank of `bytes` as one token, if it is one (longer than any token: none).
    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() > self.max_token_bytes {
            return None;
        }
        self.encoder.get(bytes).copied()
    }

    /// Byte-pair merging of one piece: repeatedly join the adjacent pair whose concatenation
    /// has the lowest rank (the leftmost on a tie), until no adjacent pair is a token.
    ///
    /// O(n log n) in the piece's length n, as tiktoken's and the BPE literature's: the current
    /// tokens form a linked list, candidate pairs sit in a min-heap keyed (rank, position),
    /// and a merge only re-ranks its two new neighbours; entries made stale by an earlier
    /// merge are skipped when popped. A pair longer than the longest token is never looked
    /// up, so each look-up costs O(1).
    fn encode_piece(&self, piece: &[u8], ids: &mut Vec<u32>) {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        if let Some(id) = self.rank(piece) {
            ids.push(id);
            return;
        }
        let n = piece.len();
        // Token i spans start[i]..end[i]; next/prev link the live tokens (n = none).
        let mut end: Vec<usize> = (1..=n).collect();
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| if i == 0 { n } else { i - 1 }).collect();
        let mut alive = vec![true; n];
        // (rank, left start, right end at the time it was ranked).
        let mut heap = BinaryHeap::new();
        let push = |heap: &mut BinaryHeap<Reverse<(u32, usize, usize)>>, l: usize, r_end: usize| {
            if let Some(rank) = self.rank(&piece[l..r_end]) {
                heap.push(Reverse((rank, l, r_end)));
            }
        };
        for i in 0..n.saturating_sub(1) {
            push(&mut heap, i, i + 2);
        }
        while let Some(Reverse((_, l, r_end))) = heap.pop() {
            // Stale unless l is still a token and its right neighbour still ends at r_end.
            let r = next[l];
            if !alive[l] || r >= n || end[r] != r_end {
                continue;
            }
            end[l] = r_end;
            alive[r] = false;
            next[l] = next[r];
            if next[r] < n {
                prev[next[r]] = l;
            }
            if prev[l] < n {
                push(&mut heap, prev[l], r_end);
            }
            if next[l] < n {
                push(&mut heap, l, end[next[l]]);
            }
        }
        // Every single byte is a token, so each remaining part is found.
        let mut i = 0;
        while i < n {
            ids.extend(self.rank(&piece[i..end[i]]));
            i = next[i];
        }
    }

    /// The bytes of `ids` (a token may end inside a UTF-8 character).
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for &id in ids {
            let b = self
                .decoder
                .get(id as usize)
                .ok_or_else(|| Error::value("decode", "id", format!("below {}", self.decoder.len()), id))?;
            out.extend_from_slice(b);
        }
        Ok(out)
    }

    /// The text of `ids` (invalid UTF-8 replaced with U+FFFD).
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.decode_bytes(ids)?).into_owned())
    }
}

/// Standard base64 (with `=` padding) to bytes; `None` on a bad character.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let s = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for &c in s {
        acc = (acc << 6) | value(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}
