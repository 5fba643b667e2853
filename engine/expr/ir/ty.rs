//! The types of body values: an element [`Kind`] (f32 or bool) and a width, scalar or a
//! vector of 1 to [`MAX_WIDTH`](super::MAX_WIDTH) values.

use std::fmt;

/// Element kind of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// 32-bit float.
    F32,
    /// Boolean (comparisons, `where` conditions).
    Bool,
}

/// The type of a body value: a kind and a width (0 = scalar, 1..=16 = vector of that many).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ty {
    /// Element kind.
    pub kind: Kind,
    /// 0 for a scalar, else the vector length (1..=16).
    pub width: u8,
}

impl Ty {
    /// An f32 scalar.
    pub const F32: Ty = Ty {
        kind: Kind::F32,
        width: 0,
    };
    /// A bool scalar.
    pub const BOOL: Ty = Ty {
        kind: Kind::Bool,
        width: 0,
    };

    /// An f32 vector of `n` values (1..=16).
    pub const fn vector(n: u8) -> Ty {
        Ty {
            kind: Kind::F32,
            width: n,
        }
    }

    /// How many components the value holds (a scalar holds one).
    pub fn lanes(self) -> usize {
        self.width.max(1) as usize
    }

    pub(super) fn with_kind(self, kind: Kind) -> Ty {
        Ty {
            kind,
            width: self.width,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = match self.kind {
            Kind::F32 => "f32",
            Kind::Bool => "bool",
        };
        match self.width {
            0 => write!(f, "{k}"),
            n => write!(f, "{k}[{n}]"),
        }
    }
}
