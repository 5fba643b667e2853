//! Ops of a variable and a plain `f32` (`x.add_scalar(1.0)`, `x.rsub_scalar(1.0)` for
//! `1 - x`), and reading a one-element variable back ([`Var::item`]). The scalar is a
//! constant of the generated kernel, as in `ops::binary_scalar`: nothing is uploaded, so
//! these ops run inside a captured step ([`crate::train::CompiledStep`]), and each distinct
//! scalar is one more cached pipeline. The backward is generated from the one-node body,
//! like every elementwise op's.

use super::var::Var;
use crate::error::Result;
use crate::expr::Binary;
use crate::ops::elementwise::scalar_body;

impl Var {
    /// `op(self, s)` elementwise, or `op(s, self)` when `scalar_first`. (...) -> (...).
    pub fn binary_scalar(&self, op: Binary, s: f32, scalar_first: bool) -> Result<Var> {
        self.scalar_op(op.name(), op, s, scalar_first)
    }

    /// [`Var::binary_scalar`] recorded as `name` (the method the caller called).
    fn scalar_op(&self, name: &'static str, op: Binary, s: f32, scalar_first: bool) -> Result<Var> {
        let bits = s.to_bits();
        let name_of_op = op.name();
        // The tensor op's kernel name for `op(x, s)`: the two share the pipeline.
        let kernel = match scalar_first {
            false => format!("elementwise/{name_of_op}_scalar/{bits:08x}"),
            true => format!("elementwise/scalar_{name_of_op}/{bits:08x}"),
        };
        Var::map(name, &kernel, &scalar_body(op, s, scalar_first)?, &[self])
    }

    /// The one element of a one-element variable (a loss), read back (blocking; native
    /// only). `(..)` of one element -> f32; any other size is an error naming `item`.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn item(&self) -> Result<f32> {
        self.tensor().item()
    }
}

macro_rules! scalar_methods {
    ($($name:ident => $op:ident, $first:expr, $doc:expr;)*) => {
        impl Var {$(
            #[doc = concat!("`", $doc, "` elementwise, s a plain f32 (see [`Var::binary_scalar`]). (...) -> (...).")]
            pub fn $name(&self, s: f32) -> Result<Var> {
                self.scalar_op(stringify!($name), Binary::$op, s, $first)
            }
        )*}
    };
}

scalar_methods! {
    add_scalar => Add, false, "self + s";
    sub_scalar => Sub, false, "self - s";
    rsub_scalar => Sub, true, "s - self";
    mul_scalar => Mul, false, "self * s";
    div_scalar => Div, false, "self / s";
    rdiv_scalar => Div, true, "s / self";
    pow_scalar => Pow, false, "self ^ s";
    maximum_scalar => Max, false, "max(self, s)";
    minimum_scalar => Min, false, "min(self, s)";
}
