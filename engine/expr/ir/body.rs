//! The nodes of a body ([`Op`], [`Node`], [`Id`]) and the checked [`Body`]: nodes in
//! dependency order, every argument an earlier node. Checking a hand-built body, substituting
//! one body into another's parameter, and the one-line-per-node text form live here; the
//! typing rules are the [`Builder`]'s.

use std::collections::HashMap;
use std::fmt;

use super::builder::Builder;
use super::{builder_error, code, Binary, Kind, Reduce, Ty, Unary, MAX_BODY_NODES};
use crate::error::Result;

/// A node index inside one [`Body`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(pub u32);

/// A body operation; arguments are earlier nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Parameter `i`: 0 is the state, `1..` the sequences.
    Param(u16),
    /// An f32 constant (bits) or a bool constant (0 or 1), broadcast as a scalar.
    Const(u32),
    /// A one-argument operation of an earlier node.
    Unary(Unary, Id),
    /// A two-argument operation of two earlier nodes.
    Binary(Binary, Id, Id),
    /// `where(cond, a, b)`, componentwise with broadcasting.
    Where(Id, Id, Id),
    /// Reduce a vector; `true` keeps a one-value vector.
    Reduce(Reduce, Id, bool),
    /// A scalar or one-value vector repeated to a vector of this width.
    Splat(Id, u8),
}

/// One node: its operation and its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    /// What the node computes.
    pub op: Op,
    /// The type of its value.
    pub ty: Ty,
}

/// A checked body: parameters, nodes in dependency order, the result (of the state's type).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Body {
    /// Parameter types: 0 is the state, `1..` the sequences.
    pub params: Vec<Ty>,
    /// Nodes in dependency order (each refers only to earlier ones).
    pub nodes: Vec<Node>,
    /// The node whose value is the next state.
    pub result: Id,
}

impl Body {
    /// A builder for a body whose parameters have these types (0: state, 1..: sequences).
    pub fn builder(params: &[Ty]) -> Builder {
        let mut b = Builder {
            params: params.to_vec(),
            nodes: vec![],
            seen: HashMap::new(),
        };
        for (i, ty) in params.iter().enumerate() {
            b.push(Op::Param(i as u16), *ty);
        }
        b
    }

    /// The node `id`.
    pub fn node(&self, id: Id) -> Node {
        self.nodes[id.0 as usize]
    }

    /// Checks a body built by hand (its fields are public): at least the state parameter,
    /// parameters first, every argument an earlier node, every type what the builder would
    /// give, the result of the state's type, at most [`MAX_BODY_NODES`] nodes. Bodies from
    /// [`Builder::finish`] pass; running a body checks it first.
    pub fn validate(&self) -> Result<()> {
        let mut b = Body::builder(&self.params);
        if self.nodes.len() > MAX_BODY_NODES {
            return Err(builder_error(
                code::TOO_LARGE,
                format!("{} nodes, above the limit of {MAX_BODY_NODES}", self.nodes.len()),
            ));
        }
        let mut map: Vec<Id> = Vec::with_capacity(self.nodes.len());
        for (k, n) in self.nodes.iter().enumerate() {
            let arg = |id: Id| -> Result<Id> {
                map.get(id.0 as usize)
                    .copied()
                    .ok_or_else(|| builder_error(code::FORM, format!("node %{k} reads %{}, not an earlier node", id.0)))
            };
            let id = match n.op {
                Op::Param(i) if i as usize == k && k < self.params.len() => b.param(k),
                Op::Param(i) => {
                    return Err(builder_error(
                        code::FORM,
                        format!("node %{k} is parameter {i}; parameters come first, in order"),
                    ))
                }
                Op::Const(bits) if n.ty == Ty::BOOL => b.boolean(bits != 0),
                Op::Const(bits) => b.constant(f32::from_bits(bits)),
                Op::Unary(u, x) => b.unary(u, arg(x)?)?,
                Op::Binary(o, x, y) => b.binary(o, arg(x)?, arg(y)?)?,
                Op::Where(c, x, y) => b.select(arg(c)?, arg(x)?, arg(y)?)?,
                Op::Reduce(r, x, keep) => b.reduce(r, arg(x)?, keep)?,
                Op::Splat(x, w) => b.splat(arg(x)?, w)?,
            };
            if k < self.params.len() && !matches!(n.op, Op::Param(_)) {
                return Err(builder_error(code::FORM, format!("node %{k} should be parameter {k}")));
            }
            let ty = b.ty(id)?;
            if ty != n.ty {
                return Err(builder_error(
                    code::TYPE,
                    format!("node %{k} is typed {}, its operation gives {ty}", n.ty),
                ));
            }
            map.push(id);
        }
        if self.nodes.len() < self.params.len() {
            return Err(builder_error(code::FORM, "fewer nodes than parameters"));
        }
        let result = map
            .get(self.result.0 as usize)
            .copied()
            .ok_or_else(|| builder_error(code::FORM, format!("the result %{} is not a node", self.result.0)))?;
        b.finish(result).map(|_| ())
    }

    /// This body with parameter `k` replaced by the value of `inner` (a body without state
    /// whose result has parameter `k`'s type): the parameters become this body's others, in
    /// order, then `inner`'s. How a chain of elementwise kernels becomes one (`crate::fused`).
    pub fn substitute(&self, k: usize, inner: &Body) -> Result<Body> {
        if k >= self.params.len() || inner.node(inner.result).ty != self.params[k] {
            return Err(builder_error(
                code::TYPE,
                format!(
                    "parameter {k} of {:?} cannot take a body of {}",
                    self.params,
                    inner.node(inner.result).ty
                ),
            ));
        }
        let mut params: Vec<Ty> = self
            .params
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != k)
            .map(|(_, t)| *t)
            .collect();
        let first_inner = params.len();
        params.extend(&inner.params);
        let mut b = Body::builder(&params);
        let inner_ids = b.emit_all(inner, |i| first_inner + i)?;
        let inner_result = inner_ids[inner.result.0 as usize];
        let outer_ids = b.emit_all_with(
            self,
            |i| {
                if i < k {
                    Some(i)
                } else if i == k {
                    None
                } else {
                    Some(i - 1)
                }
            },
            inner_result,
        )?;
        b.finish(outer_ids[self.result.0 as usize])
    }

    /// The state's type (parameter 0).
    pub fn state(&self) -> Ty {
        self.params[0]
    }

    /// A 64-bit hash of the whole body, the name of its kernels.
    pub fn hash64(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }

    /// Which nodes depend on a parameter (the others are constants of the body).
    pub fn active(&self) -> Vec<bool> {
        let mut act = vec![false; self.nodes.len()];
        for (k, n) in self.nodes.iter().enumerate() {
            act[k] = match n.op {
                Op::Param(_) => true,
                Op::Const(_) => false,
                Op::Unary(_, a) | Op::Reduce(_, a, _) | Op::Splat(a, _) => act[a.0 as usize],
                Op::Binary(_, a, b) => act[a.0 as usize] || act[b.0 as usize],
                Op::Where(c, a, b) => act[c.0 as usize] || act[a.0 as usize] || act[b.0 as usize],
            };
        }
        act
    }
}

impl fmt::Display for Body {
    /// One line per operation: `%3 = mul %2 %0 : f32[16]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, n) in self.nodes.iter().enumerate() {
            let a = |id: &Id| format!("%{}", id.0);
            let text = match &n.op {
                Op::Param(0) => "state".to_string(),
                Op::Param(i) => format!("sequence {i}"),
                Op::Const(bits) if n.ty.kind == Kind::Bool => format!("const {}", *bits != 0),
                Op::Const(bits) => format!("const {}", f32::from_bits(*bits)),
                Op::Unary(u, x) => format!("{} {}", u.name(), a(x)),
                Op::Binary(o, x, y) => format!("{} {} {}", o.name(), a(x), a(y)),
                Op::Where(c, x, y) => format!("where {} {} {}", a(c), a(x), a(y)),
                Op::Reduce(r, x, keep) => {
                    format!("{} {}{}", r.name(), a(x), if *keep { " keepdims" } else { "" })
                }
                Op::Splat(x, w) => format!("splat {} {w}", a(x)),
            };
            writeln!(f, "%{k} = {text} : {}", n.ty)?;
        }
        write!(f, "return %{}", self.result.0)
    }
}
