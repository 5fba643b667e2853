//! The typed expression IR, and its Rust builder.
//!
//! A [`Body`] is a list of nodes in dependency order (every node's arguments come before it).
//! In an element scan parameter 0 is the state and parameters 1.. are the sequences' values at
//! the lane and trip; a fused graph lowers to a body whose parameters are its inputs (a body
//! without state: its result has parameter 0's type, an f32 scalar).
//!
//! Values are f32 or bool, each a scalar or a vector of 1 to 16 values ([`Ty`]). Binary
//! operations broadcast a scalar or a one-value vector against a vector. The whole body
//! (types, constants as bits) is `Hash + Eq`: its hash names the generated kernel.
//!
//! This file holds the limits and the builder's error codes; `ty` the value types, `body` the
//! nodes and the checked [`Body`] (validation, substitution, printing), `builder` the
//! [`Builder`] that types and shares nodes as they are added.

mod body;
mod builder;
mod ty;

pub use super::op::{Binary, Reduce, Unary};
pub use body::{Body, Id, Node, Op};
pub use builder::Builder;
pub use ty::{Kind, Ty};

use crate::error::Error;

/// Codes of the builder's errors (the element-scan error codes; `element_scan::diagnose::code`
/// lists them with the rest).
pub mod code {
    /// A form with the wrong arguments, an unknown keyword, or a value of the wrong sort.
    pub const FORM: &str = "E-FORM-001";
    /// Operand types that do not fit (kind or width).
    pub const TYPE: &str = "E-TYPE-001";
    /// A reduction in a scalar-state body (or of a scalar).
    pub const SCALAR_REDUCE: &str = "E-SCAN-008";
    /// A vector state or sequence longer than 16 values.
    pub const TOO_WIDE: &str = "E-SCAN-009";
    /// A body (or the inlining that builds it) past the engine's size limits.
    pub const TOO_LARGE: &str = "E-SIZE-001";
}

/// An error from the Rust builder (no text position).
pub(crate) fn builder_error(code: &'static str, message: impl Into<String>) -> Error {
    Error::Syntax {
        code,
        position: "builder".into(),
        message: message.into(),
    }
}

/// Longest vector a body value may have.
pub const MAX_WIDTH: u8 = 16;

/// Most nodes a body may have (parameters and constants included). The body becomes one
/// straight-line WGSL function: drivers' shader compilers take seconds past a few thousand
/// chained terms and overflow their stack near 100,000, so a larger body is an error.
pub const MAX_BODY_NODES: usize = 4096;

/// Most parameters (the state plus the sequences) a body may have.
pub const MAX_PARAMS: usize = 256;
