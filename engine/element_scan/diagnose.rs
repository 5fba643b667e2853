//! The element-scan error codes and the rules that produce them.
//!
//! Every error is an [`Error::Syntax`] with a code from [`code`], the position of the
//! offending form (`line:col (byte n)`, or `builder` for the Rust API) and a message that
//! names the form. The forbidden body operations are listed in `forbidden`.

use std::fmt;

use crate::error::Error;

/// A position in the text: byte offset, 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    /// Byte offset from the start of the text.
    pub byte: usize,
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} (byte {})", self.line, self.col, self.byte)
    }
}

/// Error codes. `E-FLOW-002` and `E-SCAN-001` are the spec's; the rest follow its scheme.
pub mod code {
    // The codes of the IR builder's errors (form, type, reduction of a scalar, width, size).
    pub use crate::expr::ir::code::{FORM, SCALAR_REDUCE, TOO_LARGE, TOO_WIDE, TYPE};
    /// Malformed text: unbalanced brackets, a bad number, an unexpected character.
    pub const READ: &str = "E-READ-001";
    /// A symbol that names nothing in scope.
    pub const NAME: &str = "E-NAME-001";
    /// The body reads an outer tensor that did not enter through the sequence list.
    pub const IMPLICIT_TENSOR: &str = "E-FLOW-002";
    /// The body reads a parameter or a context scalar implicitly.
    pub const IMPLICIT_PARAM: &str = "E-SCAN-001";
    /// Matrix multiplication inside the body.
    pub const MATMUL: &str = "E-SCAN-002";
    /// Reading another lane (indexing, gathering, shifting) inside the body.
    pub const OTHER_LANE: &str = "E-SCAN-003";
    /// A scan nested inside the body.
    pub const NESTED_SCAN: &str = "E-SCAN-004";
    /// `stop-gradient` inside the body.
    pub const STOP_GRADIENT: &str = "E-SCAN-005";
    /// Random values inside the body.
    pub const RANDOM: &str = "E-SCAN-006";
    /// Metrics, diagnostics, guards or counters inside the body.
    pub const METRIC: &str = "E-SCAN-007";
    /// The initial state and the sequences disagree in shape.
    pub const SHAPE: &str = "E-SCAN-010";
    /// `with-numerics :precision :bf16` inside the body.
    pub const BF16: &str = "E-SCAN-011";
}

/// An error at a position in the text.
pub(crate) fn at(code: &'static str, pos: Pos, message: impl Into<String>) -> Error {
    Error::Syntax {
        code,
        position: pos.to_string(),
        message: message.into(),
    }
}

/// Re-positions a builder error at the form that caused it.
pub(crate) fn reposition(e: Error, pos: Pos, form: &str) -> Error {
    match e {
        Error::Syntax {
            code,
            position,
            message,
        } if position == "builder" => at(code, pos, format!("in `{form}`: {message}")),
        other => other,
    }
}

/// The code and reason when `name` is an operation the body may not contain.
pub(crate) fn forbidden(name: &str) -> Option<(&'static str, &'static str)> {
    let hit = |names: &[&str]| names.contains(&name);
    if hit(&["matmul", "mm", "bmm", "dot", "einsum", "@", "linear"]) {
        return Some((code::MATMUL, "multiplies matrices; do it before or after the scan"));
    }
    if hit(&[
        "index",
        "gather",
        "take",
        "roll",
        "shift",
        "lane",
        "aref",
        "slice",
        "narrow",
        "concat",
        "transpose",
    ]) {
        return Some((
            code::OTHER_LANE,
            "reads another lane; each lane sees only its own values",
        ));
    }
    if hit(&[
        "element-scan",
        "scan",
        "linear-scan",
        "associative-scan",
        "cumsum",
        "fold",
    ]) {
        return Some((code::NESTED_SCAN, "nests a scan; run it before or after this one"));
    }
    if hit(&["stop-gradient", "detach"]) {
        return Some((code::STOP_GRADIENT, "stops a gradient; do it before or after the scan"));
    }
    if hit(&[
        "random",
        "rand",
        "randn",
        "random-normal",
        "random-uniform",
        "dropout",
        "bernoulli",
    ]) {
        return Some((
            code::RANDOM,
            "draws random values; draw them outside and pass them as a sequence",
        ));
    }
    if hit(&[
        "metric",
        "log-metric",
        "report",
        "diagnostic",
        "guard",
        "counter",
        "count",
        "print",
        "debug",
        "assert",
    ]) {
        return Some((
            code::METRIC,
            "reports metrics, diagnostics, guards or counters; do it outside the scan",
        ));
    }
    None
}
