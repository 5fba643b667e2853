//! The [`Builder`]: adds a body's nodes one at a time, typing each operation (kinds,
//! broadcast widths) and sharing identical nodes, and checks the limits when it finishes.

use std::collections::HashMap;

use super::{
    builder_error, code, Binary, Body, Id, Kind, Node, Op, Reduce, Ty, Unary, MAX_BODY_NODES, MAX_PARAMS, MAX_WIDTH,
};
use crate::error::Result;

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
    pub(super) params: Vec<Ty>,
    pub(super) nodes: Vec<Node>,
    pub(super) seen: HashMap<Node, Id>,
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
    pub(super) fn push(&mut self, op: Op, ty: Ty) -> Id {
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
    pub(super) fn emit_all(&mut self, body: &Body, param: impl Fn(usize) -> usize) -> Result<Vec<Id>> {
        let dummy = Id(0);
        self.emit_all_with(body, |i| Some(param(i)), dummy)
    }

    /// [`Builder::emit_all`] where `param(i) = None` reads `replacement` instead.
    pub(super) fn emit_all_with(
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
