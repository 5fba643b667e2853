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

use std::collections::HashMap;
use std::fmt;

pub use super::op::{Binary, Reduce, Unary};
use crate::error::{Error, Result};

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

    fn with_kind(self, kind: Kind) -> Ty {
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

/// Builds a [`Body`] node by node, checking types and sharing identical nodes.
///
/// ```
/// use wgsl_compute::expr::{Binary, Body, Ty, Unary};
/// // h[t] = tanh(x[t] + a[t] * h[t-1])
/// let mut b = Body::builder(&[Ty::F32, Ty::F32, Ty::F32]);
/// let (h, x, a) = (b.param(0), b.param(1), b.param(2));
/// let ah = b.binary(Binary::Mul, a, h)?;
/// let s = b.binary(Binary::Add, x, ah)?;
/// let y = b.unary(Unary::Tanh, s)?;
/// let body = b.finish(y)?;
/// # Ok::<(), wgsl_compute::Error>(())
/// ```
pub struct Builder {
    params: Vec<Ty>,
    nodes: Vec<Node>,
    seen: HashMap<Node, Id>,
}

/// The width two operands broadcast to, if they do.
pub(crate) fn broadcast_width(a: u8, b: u8) -> Option<u8> {
    match (a, b) {
        (x, y) if x == y => Some(x),
        (0, y) | (1, y) => Some(y),
        (x, 0) | (x, 1) => Some(x),
        _ => None,
    }
}

impl Builder {
    fn push(&mut self, op: Op, ty: Ty) -> Id {
        let node = Node { op, ty };
        if let Some(id) = self.seen.get(&node) {
            return *id;
        }
        let id = Id(self.nodes.len() as u32);
        self.nodes.push(node);
        self.seen.insert(node, id);
        id
    }

    /// The type of a node built so far; an error for an id this builder did not make.
    pub fn ty(&self, id: Id) -> Result<Ty> {
        self.nodes.get(id.0 as usize).map(|n| n.ty).ok_or_else(|| {
            builder_error(
                code::FORM,
                format!(
                    "value %{} is not a node of this builder ({} nodes)",
                    id.0,
                    self.nodes.len()
                ),
            )
        })
    }

    /// Parameter `i` (0: the state). An `i` past the parameters gives an id that every
    /// operation rejects with an error.
    pub fn param(&self, i: usize) -> Id {
        if i < self.params.len() {
            Id(i as u32)
        } else {
            Id(u32::MAX)
        }
    }

    /// An f32 scalar constant.
    pub fn constant(&mut self, v: f32) -> Id {
        self.push(Op::Const(v.to_bits()), Ty::F32)
    }

    /// A bool scalar constant.
    pub fn boolean(&mut self, v: bool) -> Id {
        self.push(Op::Const(v as u32), Ty::BOOL)
    }

    fn want(&self, id: Id, kind: Kind, what: &str) -> Result<Ty> {
        let ty = self.ty(id)?;
        if ty.kind != kind {
            return Err(builder_error(
                code::TYPE,
                format!("{what} expects {kind:?} operands, got {ty}"),
            ));
        }
        Ok(ty)
    }

    fn width(&self, a: Id, b: Id, what: &str) -> Result<u8> {
        let (ta, tb) = (self.ty(a)?, self.ty(b)?);
        broadcast_width(ta.width, tb.width)
            .ok_or_else(|| builder_error(code::TYPE, format!("{what}: widths do not broadcast: {ta} and {tb}")))
    }

    /// A one-argument operation.
    pub fn unary(&mut self, op: Unary, x: Id) -> Result<Id> {
        let name = op.name();
        let ty = match op {
            Unary::Not => self.want(x, Kind::Bool, name)?,
            Unary::ToF32 => self.want(x, Kind::Bool, name)?.with_kind(Kind::F32),
            Unary::ToBool => self.want(x, Kind::F32, name)?.with_kind(Kind::Bool),
            _ => self.want(x, Kind::F32, name)?,
        };
        Ok(self.push(Op::Unary(op, x), ty))
    }

    /// A two-argument operation, broadcasting a scalar or one-value vector against a vector.
    pub fn binary(&mut self, op: Binary, a: Id, b: Id) -> Result<Id> {
        let name = op.name();
        let operand = if matches!(op, Binary::And | Binary::Or) {
            Kind::Bool
        } else {
            Kind::F32
        };
        self.want(a, operand, name)?;
        self.want(b, operand, name)?;
        let width = self.width(a, b, name)?;
        let kind = if op.is_comparison() { Kind::Bool } else { operand };
        Ok(self.push(Op::Binary(op, a, b), Ty { kind, width }))
    }

    /// `where(cond, a, b)`: a where cond holds, else b (a and b of one kind).
    pub fn select(&mut self, cond: Id, a: Id, b: Id) -> Result<Id> {
        self.want(cond, Kind::Bool, "where")?;
        let kind = self.ty(a)?.kind;
        self.want(b, kind, "where")?;
        let w = self.width(a, b, "where")?;
        let w = broadcast_width(w, self.ty(cond)?.width)
            .ok_or_else(|| builder_error(code::TYPE, "where: the condition's width does not broadcast"))?;
        Ok(self.push(Op::Where(cond, a, b), Ty { kind, width: w }))
    }

    /// Reduces an f32 vector to a scalar, or to a one-value vector with `keepdims`.
    pub fn reduce(&mut self, op: Reduce, x: Id, keepdims: bool) -> Result<Id> {
        let ty = self.want(x, Kind::F32, "reduce")?;
        if ty.width == 0 {
            return Err(builder_error(
                code::SCALAR_REDUCE,
                "a reduction needs a vector; a scalar-state body cannot reduce",
            ));
        }
        let width = if keepdims { 1 } else { 0 };
        Ok(self.push(Op::Reduce(op, x, keepdims), Ty { kind: Kind::F32, width }))
    }

    /// Repeats a scalar or one-value vector to `width` values (no-op when already that wide).
    pub fn splat(&mut self, x: Id, width: u8) -> Result<Id> {
        let ty = self.ty(x)?;
        if ty.width == width {
            return Ok(x);
        }
        if ty.width > 1 || width == 0 || width > MAX_WIDTH {
            return Err(builder_error(code::TYPE, format!("cannot splat {ty} to width {width}")));
        }
        Ok(self.push(Op::Splat(x, width), Ty { kind: ty.kind, width }))
    }

    /// Adds `body`'s nodes, its parameter i read as this builder's parameter `param(i)`;
    /// returns the new id of each node.
    fn emit_all(&mut self, body: &Body, param: impl Fn(usize) -> usize) -> Result<Vec<Id>> {
        let dummy = Id(0);
        self.emit_all_with(body, |i| Some(param(i)), dummy)
    }

    /// [`Builder::emit_all`] where `param(i) = None` reads `replacement` instead.
    fn emit_all_with(
        &mut self,
        body: &Body,
        param: impl Fn(usize) -> Option<usize>,
        replacement: Id,
    ) -> Result<Vec<Id>> {
        let mut map: Vec<Id> = Vec::with_capacity(body.nodes.len());
        for n in &body.nodes {
            let arg = |id: Id| map[id.0 as usize];
            let id = match n.op {
                Op::Param(i) => match param(i as usize) {
                    Some(j) => self.param(j),
                    None => replacement,
                },
                Op::Const(bits) if n.ty == Ty::BOOL => self.boolean(bits != 0),
                Op::Const(bits) => self.constant(f32::from_bits(bits)),
                Op::Unary(u, x) => self.unary(u, arg(x))?,
                Op::Binary(o, x, y) => self.binary(o, arg(x), arg(y))?,
                Op::Where(c, x, y) => self.select(arg(c), arg(x), arg(y))?,
                Op::Reduce(r, x, keep) => self.reduce(r, arg(x), keep)?,
                Op::Splat(x, w) => self.splat(arg(x), w)?,
            };
            map.push(id);
        }
        Ok(map)
    }

    /// Checks the result has the state's type and returns the body.
    pub fn finish(self, result: Id) -> Result<Body> {
        let Some(&want) = self.params.first() else {
            return Err(builder_error(
                code::FORM,
                "a body needs at least one parameter (the state); Body::builder got none",
            ));
        };
        if self.params.len() > MAX_PARAMS {
            return Err(builder_error(
                code::TOO_LARGE,
                format!("{} parameters, above the limit of {MAX_PARAMS}", self.params.len()),
            ));
        }
        if self.nodes.len() > MAX_BODY_NODES {
            return Err(builder_error(
                code::TOO_LARGE,
                format!("{} nodes, above the limit of {MAX_BODY_NODES}", self.nodes.len()),
            ));
        }
        if let Some(bad) = self.params.iter().find(|t| t.width > MAX_WIDTH) {
            return Err(builder_error(
                code::TOO_WIDE,
                format!("parameter type {bad} is wider than {MAX_WIDTH}"),
            ));
        }
        let got = self.ty(result)?;
        if got != want {
            return Err(builder_error(
                code::TYPE,
                format!("the body returns {got}, the state is {want}"),
            ));
        }
        Ok(Body {
            params: self.params,
            nodes: self.nodes,
            result,
        })
    }
}
