//! `std::ops` on variables, as candle has them on tensors: `(&a + &b)?`, `(&x * 2.0)?`,
//! `(1.0 - &z)?`, `(-&x)?`. Each returns the op's `Result` (a shape that does not broadcast
//! is an error, not a panic) and is one call of the named method: `+ - * /` between
//! variables are [`Var::add`], [`Var::sub`], [`Var::mul`], [`Var::div`] (broadcasting);
//! with an `f32` on either side they are the scalar ops ([`Var::add_scalar`],
//! [`Var::rsub_scalar`], ...); unary `-` is [`Var::neg`]. Owned and borrowed operands both
//! work (a `Var` is cheap to clone).

use std::ops::{Add, Div, Mul, Neg, Sub};

use super::var::Var;
use crate::error::Result;

macro_rules! var_var {
    ($($trait:ident $method:ident => $call:ident),*) => {$(
        impl $trait<&Var> for &Var {
            type Output = Result<Var>;
            fn $method(self, rhs: &Var) -> Result<Var> {
                Var::$call(self, rhs)
            }
        }
        impl $trait<Var> for Var {
            type Output = Result<Var>;
            fn $method(self, rhs: Var) -> Result<Var> {
                Var::$call(&self, &rhs)
            }
        }
        impl $trait<&Var> for Var {
            type Output = Result<Var>;
            fn $method(self, rhs: &Var) -> Result<Var> {
                Var::$call(&self, rhs)
            }
        }
        impl $trait<Var> for &Var {
            type Output = Result<Var>;
            fn $method(self, rhs: Var) -> Result<Var> {
                Var::$call(self, &rhs)
            }
        }
    )*};
}

macro_rules! var_scalar {
    ($($trait:ident $method:ident => $var_first:ident, $scalar_first:ident),*) => {$(
        impl $trait<f32> for &Var {
            type Output = Result<Var>;
            fn $method(self, rhs: f32) -> Result<Var> {
                Var::$var_first(self, rhs)
            }
        }
        impl $trait<f32> for Var {
            type Output = Result<Var>;
            fn $method(self, rhs: f32) -> Result<Var> {
                Var::$var_first(&self, rhs)
            }
        }
        impl $trait<&Var> for f32 {
            type Output = Result<Var>;
            fn $method(self, rhs: &Var) -> Result<Var> {
                Var::$scalar_first(rhs, self)
            }
        }
        impl $trait<Var> for f32 {
            type Output = Result<Var>;
            fn $method(self, rhs: Var) -> Result<Var> {
                Var::$scalar_first(&rhs, self)
            }
        }
    )*};
}

var_var!(Add add => add, Sub sub => sub, Mul mul => mul, Div div => div);
var_scalar!(
    Add add => add_scalar, add_scalar,
    Sub sub => sub_scalar, rsub_scalar,
    Mul mul => mul_scalar, mul_scalar,
    Div div => div_scalar, rdiv_scalar
);

impl Neg for &Var {
    type Output = Result<Var>;
    fn neg(self) -> Result<Var> {
        Var::neg(self)
    }
}

impl Neg for Var {
    type Output = Result<Var>;
    fn neg(self) -> Result<Var> {
        Var::neg(&self)
    }
}
