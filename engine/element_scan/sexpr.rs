//! The s-expression reader: text -> [`Sexp`] trees, each node with its byte, line and column.
//!
//! `( ... )` lists, `[ ... ]` vectors, numbers (`1`, `-0.5`, `1e-3`), keywords (`:axis`),
//! `true` / `false`, symbols (anything else), `;` comments to the end of the line. Malformed
//! text is an `E-READ-001` error at the offending character; nesting is capped so hostile
//! input cannot overflow the stack.

use std::fmt;

pub use super::diagnose::Pos;
use super::diagnose::{at, code};
use crate::error::Result;

/// Deepest nesting the reader accepts.
const MAX_DEPTH: usize = 200;

/// What a form is.
#[derive(Clone, Debug, PartialEq)]
pub enum Atom {
    /// A number, e.g. `1.0` or `-3`.
    Num(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A symbol, e.g. `tanh` or `x`.
    Sym(String),
    /// A keyword, e.g. `:axis` (stored without the colon).
    Keyword(String),
    /// A parenthesised list `( ... )`.
    List(Vec<Sexp>),
    /// A bracketed vector `[ ... ]`.
    Vector(Vec<Sexp>),
}

/// One form and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Sexp {
    /// What the form is.
    pub atom: Atom,
    /// Where it starts in the text.
    pub pos: Pos,
}

impl Sexp {
    /// The symbol's name, if this is a symbol.
    pub fn sym(&self) -> Option<&str> {
        match &self.atom {
            Atom::Sym(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for Sexp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seq = |f: &mut fmt::Formatter<'_>, items: &[Sexp], open: &str, close: &str| {
            write!(f, "{open}")?;
            for (i, s) in items.iter().enumerate() {
                write!(f, "{}{s}", if i > 0 { " " } else { "" })?;
            }
            write!(f, "{close}")
        };
        match &self.atom {
            Atom::Num(n) => write!(f, "{n}"),
            Atom::Bool(b) => write!(f, "{b}"),
            Atom::Sym(s) => write!(f, "{s}"),
            Atom::Keyword(k) => write!(f, ":{k}"),
            Atom::List(items) => seq(f, items, "(", ")"),
            Atom::Vector(items) => seq(f, items, "[", "]"),
        }
    }
}

/// Reads exactly one form from `text` (comments and whitespace around it are fine).
pub fn read(text: &str) -> Result<Sexp> {
    let mut r = Reader {
        chars: text.char_indices().collect(),
        i: 0,
        line: 1,
        col: 1,
        len: text.len(),
    };
    r.skip();
    if r.peek().is_none() {
        return Err(at(code::READ, r.pos(), "empty text: expected one form"));
    }
    let form = r.form(0)?;
    r.skip();
    if r.peek().is_some() {
        return Err(at(code::READ, r.pos(), "text continues after the first complete form"));
    }
    Ok(form)
}

struct Reader {
    chars: Vec<(usize, char)>,
    i: usize,
    line: usize,
    col: usize,
    len: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).map(|c| c.1)
    }

    fn pos(&self) -> Pos {
        Pos {
            byte: self.chars.get(self.i).map(|c| c.0).unwrap_or(self.len),
            line: self.line,
            col: self.col,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    /// Skips whitespace, commas and `;` comments.
    fn skip(&mut self) {
        while let Some(c) = self.peek() {
            if c == ';' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.bump();
                }
            } else if c.is_whitespace() || c == ',' {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn form(&mut self, depth: usize) -> Result<Sexp> {
        let pos = self.pos();
        if depth > MAX_DEPTH {
            return Err(at(
                code::READ,
                pos,
                format!("forms nest deeper than {MAX_DEPTH} levels"),
            ));
        }
        match self.peek() {
            None => Err(at(code::READ, pos, "unexpected end of text: expected a form")),
            Some('(') => self.seq(depth, ')').map(|items| Sexp {
                atom: Atom::List(items),
                pos,
            }),
            Some('[') => self.seq(depth, ']').map(|items| Sexp {
                atom: Atom::Vector(items),
                pos,
            }),
            Some(c @ (')' | ']')) => Err(at(code::READ, pos, format!("unexpected `{c}` with nothing open"))),
            Some(c @ ('"' | '\'' | '`' | '{' | '}' | '#')) => {
                Err(at(code::READ, pos, format!("unexpected character `{c}`")))
            }
            Some(_) => self.token(pos),
        }
    }

    /// A list or vector: the opening bracket, forms, then `close`.
    fn seq(&mut self, depth: usize, close: char) -> Result<Vec<Sexp>> {
        let open = self.pos();
        self.bump();
        let mut items = vec![];
        loop {
            self.skip();
            match self.peek() {
                None => {
                    return Err(at(
                        code::READ,
                        open,
                        format!("this bracket is never closed (expected `{close}` before the end of the text)"),
                    ))
                }
                Some(c) if c == close => {
                    self.bump();
                    return Ok(items);
                }
                Some(c @ (')' | ']')) => {
                    return Err(at(
                        code::READ,
                        self.pos(),
                        format!("`{c}` closes a bracket opened as `{close}`"),
                    ))
                }
                Some(_) => items.push(self.form(depth + 1)?),
            }
        }
    }

    fn token(&mut self, pos: Pos) -> Result<Sexp> {
        let mut s = String::new();
        while let Some(c) = self.peek() {
            if c.is_whitespace() || matches!(c, '(' | ')' | '[' | ']' | ';' | ',' | '"') {
                break;
            }
            s.push(c);
            self.bump();
        }
        let atom = if let Some(k) = s.strip_prefix(':') {
            if k.is_empty() {
                return Err(at(code::READ, pos, "a keyword needs a name after `:`"));
            }
            Atom::Keyword(k.to_string())
        } else if s == "true" || s == "false" {
            Atom::Bool(s == "true")
        } else if looks_numeric(&s) {
            match s.parse::<f64>() {
                Ok(v) if v.is_finite() => Atom::Num(v),
                _ => return Err(at(code::READ, pos, format!("malformed or non-finite number `{s}`"))),
            }
        } else {
            Atom::Sym(s)
        };
        Ok(Sexp { atom, pos })
    }
}

/// A digit first, or a sign or point followed by a digit.
fn looks_numeric(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_digit() => true,
        Some(b'-' | b'+' | b'.') => b.get(1).is_some_and(|c| c.is_ascii_digit() || *c == b'.'),
        _ => false,
    }
}
