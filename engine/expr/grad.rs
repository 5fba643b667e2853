//! Reverse-mode differentiation of a body, emitted into a builder (IR -> IR): [`vjp`] is
//! the one place the derivative rules of the shared ops are written. Element scans build
//! their backward bodies from it (`element_scan::grad`).
//!
//! The forward body is recomputed inside (no per-node storage), the trip's Jacobian is never
//! formed, and every rule is written with differentiable operations, so the bodies these
//! produce can be differentiated again. Comparisons and bool casts have no derivative;
//! `where` routes the cotangent to the selected branch; at a tie `maximum`/`minimum` split
//! the cotangent evenly between their arguments and a vector `max` among its maximal
//! components (PyTorch's rules), and `abs` has derivative 0 at 0.

use super::ir::{Binary, Body, Builder, Id, Kind, Op, Reduce, Ty, Unary};
use crate::error::Result;

/// Zero of type `ty` when there is no adjoint, else the adjoint fitted to `ty`.
pub(crate) fn fit_or_zero(b: &mut Builder, adj: Option<Id>, ty: Ty) -> Result<Id> {
    match adj {
        Some(g) => fit(b, g, ty),
        None => {
            let z = b.constant(0.0);
            b.splat(z, ty.width)
        }
    }
}

/// Sums a contribution over the components it was broadcast along, or repeats it, so it
/// has the width of `ty`.
fn fit(b: &mut Builder, g: Id, ty: Ty) -> Result<Id> {
    let gw = b.ty(g)?.width;
    match (gw, ty.width) {
        (x, y) if x == y => Ok(g),
        (x, 0) if x >= 1 => b.reduce(Reduce::Sum, g, false),
        (x, 1) if x > 1 => b.reduce(Reduce::Sum, g, true),
        _ => b.splat(g, ty.width),
    }
}

/// Re-emits `f` into `b` with parameters `args`, then sweeps backwards from the result with
/// cotangent `cot`. Returns the adjoint of each of `f`'s parameters (None: no dependence).
pub(crate) fn vjp(b: &mut Builder, f: &Body, args: &[Id], cot: Id) -> Result<Vec<Option<Id>>> {
    let active = f.active();
    let mut map: Vec<Id> = Vec::with_capacity(f.nodes.len());
    for node in &f.nodes {
        let m = |id: Id| map[id.0 as usize];
        let id = match node.op {
            Op::Param(i) => args[i as usize],
            Op::Const(bits) if node.ty.kind == Kind::Bool => b.boolean(bits != 0),
            Op::Const(bits) => b.constant(f32::from_bits(bits)),
            Op::Unary(u, x) => b.unary(u, m(x))?,
            Op::Binary(o, x, y) => b.binary(o, m(x), m(y))?,
            Op::Where(c, x, y) => b.select(m(c), m(x), m(y))?,
            Op::Reduce(r, x, keep) => b.reduce(r, m(x), keep)?,
            Op::Splat(x, w) => b.splat(m(x), w)?,
        };
        map.push(id);
    }
    let mut adj: Vec<Option<Id>> = vec![None; f.nodes.len()];
    adj[f.result.0 as usize] = Some(cot);
    let mut params = vec![None; f.params.len()];
    for k in (0..f.nodes.len()).rev() {
        let node = f.nodes[k];
        let Some(g) = adj[k] else { continue };
        if !active[k] || node.ty.kind != Kind::F32 {
            continue;
        }
        let m = |id: Id| map[id.0 as usize];
        let y = map[k];
        let mut contributions: Vec<(Id, Id)> = vec![];
        match node.op {
            Op::Param(i) => {
                let fitted = fit(b, g, f.params[i as usize])?;
                params[i as usize] = Some(match params[i as usize] {
                    Some(prev) => b.binary(Binary::Add, prev, fitted)?,
                    None => fitted,
                });
            }
            Op::Const(_) => {}
            Op::Unary(u, x) => {
                let xv = m(x);
                let one = b.constant(1.0);
                let d = match u {
                    Unary::Identity => Some(g),
                    Unary::Neg => Some(b.unary(Unary::Neg, g)?),
                    Unary::Exp => Some(b.binary(Binary::Mul, g, y)?),
                    Unary::Log => Some(b.binary(Binary::Div, g, xv)?),
                    Unary::Tanh => {
                        let yy = b.binary(Binary::Mul, y, y)?;
                        let d = b.binary(Binary::Sub, one, yy)?;
                        Some(b.binary(Binary::Mul, g, d)?)
                    }
                    Unary::Sigmoid => {
                        let om = b.binary(Binary::Sub, one, y)?;
                        let d = b.binary(Binary::Mul, y, om)?;
                        Some(b.binary(Binary::Mul, g, d)?)
                    }
                    // d/dx log(1 + e^x) = sigmoid(x).
                    Unary::Softplus => {
                        let s = b.unary(Unary::Sigmoid, xv)?;
                        Some(b.binary(Binary::Mul, g, s)?)
                    }
                    Unary::Sqrt => {
                        let two = b.constant(2.0);
                        let d = b.binary(Binary::Mul, two, y)?;
                        Some(b.binary(Binary::Div, g, d)?)
                    }
                    Unary::Abs => {
                        // sign(x) * g, with sign(0) = 0.
                        let zero = b.constant(0.0);
                        let pos = b.binary(Binary::Gt, xv, zero)?;
                        let neg = b.binary(Binary::Lt, xv, zero)?;
                        let ng = b.unary(Unary::Neg, g)?;
                        let rest = b.select(neg, ng, zero)?;
                        Some(b.select(pos, g, rest)?)
                    }
                    Unary::Relu => {
                        let zero = b.constant(0.0);
                        let pos = b.binary(Binary::Gt, xv, zero)?;
                        Some(b.select(pos, g, zero)?)
                    }
                    Unary::Sin => {
                        let c = b.unary(Unary::Cos, xv)?;
                        Some(b.binary(Binary::Mul, g, c)?)
                    }
                    Unary::Cos => {
                        let s = b.unary(Unary::Sin, xv)?;
                        let gs = b.binary(Binary::Mul, g, s)?;
                        Some(b.unary(Unary::Neg, gs)?)
                    }
                    Unary::Not | Unary::ToF32 | Unary::ToBool => None,
                };
                if let Some(d) = d {
                    contributions.push((x, d));
                }
            }
            Op::Binary(o, x, z) => {
                let (xv, zv) = (m(x), m(z));
                let zero = b.constant(0.0);
                match o {
                    Binary::Add => {
                        contributions.push((x, g));
                        contributions.push((z, g));
                    }
                    Binary::Sub => {
                        contributions.push((x, g));
                        let ng = b.unary(Unary::Neg, g)?;
                        contributions.push((z, ng));
                    }
                    Binary::Mul => {
                        let gx = b.binary(Binary::Mul, g, zv)?;
                        let gz = b.binary(Binary::Mul, g, xv)?;
                        contributions.push((x, gx));
                        contributions.push((z, gz));
                    }
                    Binary::Div => {
                        let gx = b.binary(Binary::Div, g, zv)?;
                        contributions.push((x, gx));
                        if active[z.0 as usize] {
                            let gy = b.binary(Binary::Mul, gx, y)?;
                            let gz = b.unary(Unary::Neg, gy)?;
                            contributions.push((z, gz));
                        }
                    }
                    Binary::Pow => {
                        if active[x.0 as usize] {
                            let one = b.constant(1.0);
                            let zm1 = b.binary(Binary::Sub, zv, one)?;
                            let p = b.binary(Binary::Pow, xv, zm1)?;
                            let d = b.binary(Binary::Mul, zv, p)?;
                            let gx = b.binary(Binary::Mul, g, d)?;
                            contributions.push((x, gx));
                        }
                        if active[z.0 as usize] {
                            let l = b.unary(Unary::Log, xv)?;
                            let d = b.binary(Binary::Mul, y, l)?;
                            let gz = b.binary(Binary::Mul, g, d)?;
                            contributions.push((z, gz));
                        }
                    }
                    Binary::Max | Binary::Min => {
                        // The selected argument takes the cotangent; a tie splits it evenly.
                        let cmp = if o == Binary::Max { Binary::Gt } else { Binary::Lt };
                        let first = b.binary(cmp, xv, zv)?;
                        let tie = b.binary(Binary::Eq, xv, zv)?;
                        let half = b.constant(0.5);
                        let hg = b.binary(Binary::Mul, g, half)?;
                        let tx = b.select(tie, hg, zero)?;
                        let tz = b.select(tie, hg, g)?;
                        let gx = b.select(first, g, tx)?;
                        let gz = b.select(first, zero, tz)?;
                        contributions.push((x, gx));
                        contributions.push((z, gz));
                    }
                    _ => {}
                }
            }
            Op::Where(c, x, z) => {
                let zero = b.constant(0.0);
                let gx = b.select(m(c), g, zero)?;
                let gz = b.select(m(c), zero, g)?;
                contributions.push((x, gx));
                contributions.push((z, gz));
            }
            Op::Reduce(r, x, _) => {
                let w = f.node(x).ty.width;
                let d = match r {
                    Reduce::Sum => b.splat(g, w)?,
                    Reduce::Max => {
                        // Every maximal component takes an equal share.
                        let at_max = b.binary(Binary::Eq, m(x), y)?;
                        let share = b.unary(Unary::ToF32, at_max)?;
                        let count = b.reduce(Reduce::Sum, share, true)?;
                        let gs = b.binary(Binary::Div, g, count)?;
                        b.binary(Binary::Mul, share, gs)?
                    }
                };
                contributions.push((x, d));
            }
            Op::Splat(x, _) => contributions.push((x, g)),
        }
        for (target, d) in contributions {
            if !active[target.0 as usize] || f.node(target).ty.kind != Kind::F32 {
                continue;
            }
            let d = fit(b, d, f.node(target).ty)?;
            adj[target.0 as usize] = Some(match adj[target.0 as usize] {
                Some(prev) => b.binary(Binary::Add, prev, d)?,
                None => d,
            });
        }
    }
    Ok(params)
}
