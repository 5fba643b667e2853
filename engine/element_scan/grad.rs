//! Element-scan gradients as bodies, built with the shared derivative rules
//! ([`crate::expr::grad`]). For a body `h' = f(h, x_1, .., x_k)` and a cotangent `a` of `h'`:
//! - [`carry_body`]`(f)` is the body of the backward scan: state `c`, sequences `(g, hp, x..)`;
//!   it forms `a = g + c` and returns `c' = (df/dh)^T a` evaluated at `(hp, x..)`.
//! - [`input_body`]`(f, i)` is a pointwise body (its state is ignored): sequences
//!   `(a, hp, x..)`, returns `(df/dx_i)^T a`.

use crate::error::Result;
use crate::expr::grad::{fit_or_zero, vjp};
use crate::expr::{Binary, Body, Id};

/// The backward scan's body; params `[c: state, g: state, hp: state, x_1.., x_k..]`.
pub(crate) fn carry_body(f: &Body) -> Result<Body> {
    let s = f.state();
    let mut params = vec![s, s, s];
    params.extend_from_slice(&f.params[1..]);
    let mut b = Body::builder(&params);
    let (g, c) = (b.param(1), b.param(0));
    let a = b.binary(Binary::Add, g, c)?;
    let args: Vec<Id> = (2..params.len()).map(|i| b.param(i)).collect();
    let adj = vjp(&mut b, f, &args, a)?;
    let r = fit_or_zero(&mut b, adj[0], s)?;
    b.finish(r)
}

/// The gradient of sequence `i` (1-based, as in the body); params
/// `[_: x_i's type, a: state, hp: state, x_1.., x_k..]`.
pub(crate) fn input_body(f: &Body, i: usize) -> Result<Body> {
    let s = f.state();
    let ti = f.params[i];
    let mut params = vec![ti, s, s];
    params.extend_from_slice(&f.params[1..]);
    let mut b = Body::builder(&params);
    let args: Vec<Id> = (2..params.len()).map(|j| b.param(j)).collect();
    let a = b.param(1);
    let adj = vjp(&mut b, f, &args, a)?;
    let r = fit_or_zero(&mut b, adj[i], ti)?;
    b.finish(r)
}
