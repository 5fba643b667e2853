//! The outer evaluator: an s-expression program over bound tensors -> a [`Graph`].
//!
//! Outer forms: `element-scan`, `lambda`, `let`, `list`, `broadcast-to`, `shape`, `zeros`,
//! `slice` (keeps the axis), `with-numerics` (a scan computes in f32 inside any precision
//! region), numbers, `[..]` shapes, and `+ - * /` on numbers. Tensors come
//! from the [`Bindings`] by name; `lambda` bodies are lowered to IR by [`super::body`] when an
//! `element-scan` gives them their parameter types. The values and the form helpers both
//! share are [`super::forms`]'s.

use std::rc::Rc;

use ndarray::ArrayD;

use super::body;
use super::diagnose::{at, code};
use super::forms::{describe, let_parts, split_keywords, Env, Lambda, Origin, Val};
use super::graph::{GOp, Graph, NodeId, ScanSpec};
use super::sexpr::{Atom, Sexp};
use crate::error::Result;
use crate::expr::{Binary, Ty, Unary, MAX_WIDTH};
use crate::shape::broadcast_shape;

/// What a name is bound to when a program is read.
#[derive(Clone, Debug)]
pub enum Bound {
    /// An outer tensor: usable outside the body; reading it inside is `E-FLOW-002`.
    Tensor(ArrayD<f32>),
    /// A model parameter: like a tensor outside; reading it inside is `E-SCAN-001`.
    Parameter(ArrayD<f32>),
    /// A context scalar (a step, a learning rate): reading it inside is `E-SCAN-001`.
    ContextScalar(f32),
    /// A compile-time number (a size, a constant): the body may capture it.
    Number(f64),
    /// An outer tensor already on a device (views included): read in place when the program
    /// runs on its context, no readback.
    Device(crate::tensor::Tensor),
    /// A model parameter already on a device.
    DeviceParameter(crate::tensor::Tensor),
}

/// Names bound for a program, in the order given.
#[derive(Clone, Debug, Default)]
pub struct Bindings {
    pub(crate) items: Vec<(String, Bound)>,
}

impl Bindings {
    /// No bindings yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Binds `name`, replacing an earlier binding of the same name.
    pub fn set(mut self, name: &str, b: Bound) -> Self {
        match self.items.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = b,
            None => self.items.push((name.into(), b)),
        }
        self
    }

    /// Binds an outer tensor (any shape).
    pub fn tensor(self, name: &str, a: ArrayD<f32>) -> Self {
        self.set(name, Bound::Tensor(a))
    }

    /// Binds a parameter tensor (any shape).
    pub fn parameter(self, name: &str, a: ArrayD<f32>) -> Self {
        self.set(name, Bound::Parameter(a))
    }

    /// Binds an outer tensor that lives on a device (a matmul's output, a view).
    pub fn device(self, name: &str, t: &crate::tensor::Tensor) -> Self {
        self.set(name, Bound::Device(t.clone()))
    }

    /// Binds a parameter tensor that lives on a device.
    pub fn device_parameter(self, name: &str, t: &crate::tensor::Tensor) -> Self {
        self.set(name, Bound::DeviceParameter(t.clone()))
    }

    /// Binds a context scalar.
    pub fn context_scalar(self, name: &str, v: f32) -> Self {
        self.set(name, Bound::ContextScalar(v))
    }

    /// The bindings in order.
    pub fn items(&self) -> &[(String, Bound)] {
        &self.items
    }

    /// Binds a compile-time number.
    pub fn number(self, name: &str, v: f64) -> Self {
        self.set(name, Bound::Number(v))
    }
}

/// The result of evaluating a program: its graph, output and the tensors it reads.
pub(crate) struct Evaluated {
    pub graph: Graph,
    pub output: NodeId,
}

/// Evaluates the program `form` with `bindings`.
pub(crate) fn evaluate(form: &Sexp, bindings: &Bindings) -> Result<Evaluated> {
    let mut ev = Evaluator {
        graph: Graph::default(),
    };
    let mut env = Env::new();
    for (name, b) in &bindings.items {
        let v = match b {
            Bound::Tensor(a) => Val::Tensor(ev.graph.input(name, a.shape()), Origin::Outer),
            Bound::Parameter(a) => Val::Tensor(ev.graph.input(name, a.shape()), Origin::Parameter),
            Bound::Device(t) => Val::Tensor(ev.graph.input(name, t.shape()), Origin::Outer),
            Bound::DeviceParameter(t) => Val::Tensor(ev.graph.input(name, t.shape()), Origin::Parameter),
            Bound::ContextScalar(v) => Val::ContextScalar(*v),
            Bound::Number(v) => Val::Num(*v),
        };
        env.insert(name.clone(), v);
    }
    match ev.eval(form, &env)? {
        Val::Tensor(output, _) => Ok(Evaluated {
            graph: ev.graph,
            output,
        }),
        other => Err(at(
            code::FORM,
            form.pos,
            format!("the program must produce a tensor, it produced {}", describe(&other)),
        )),
    }
}

/// A checked scan's trip axis, vector-state flag, parameter types and output shape.
pub(crate) type ScanTypes = (usize, bool, Vec<Ty>, Vec<usize>);

/// Checks an `element-scan`'s shapes and returns (axis, vector state, parameter types,
/// output shape). Errors are (code, message).
pub(crate) fn scan_types(
    init: &[usize],
    seqs: &[Vec<usize>],
    axis: i64,
    state_axis: Option<i64>,
) -> std::result::Result<ScanTypes, (&'static str, String)> {
    let Some(first) = seqs.first() else {
        return Err((code::FORM, "needs at least one sequence in its list".into()));
    };
    let r = first.len();
    if r == 0 || init.len() + 1 != r {
        return Err((
            code::SHAPE,
            format!("the initial state {init:?} must have one axis fewer than the sequences {first:?}"),
        ));
    }
    let ax = if axis < 0 { axis + r as i64 } else { axis };
    if ax < 0 || ax >= r as i64 {
        return Err((code::FORM, format!(":axis {axis} is outside the sequences' {r} axes")));
    }
    let ax = ax as usize;
    let vector = match state_axis {
        None => false,
        Some(s) if s == -1 || s == r as i64 - 1 => true,
        Some(s) => {
            return Err((
                code::FORM,
                format!(":state-axis {s}: only the last axis (-1) can hold the state"),
            ))
        }
    };
    if vector && ax == r - 1 {
        return Err((code::FORM, "the trip axis cannot also be the state axis".into()));
    }
    let trips = first[ax];
    let mut out = init.to_vec();
    out.insert(ax, trips);
    let width = |n: usize, what: &str| -> std::result::Result<Ty, (&'static str, String)> {
        if n > MAX_WIDTH as usize {
            return Err((
                code::TOO_WIDE,
                format!("{what} is a vector of {n} values; at most {MAX_WIDTH}"),
            ));
        }
        if n == 0 {
            return Err((code::SHAPE, format!("{what} is an empty vector")));
        }
        Ok(Ty::vector(n as u8))
    };
    let mut types = vec![if vector {
        width(out[r - 1], "the state")?
    } else {
        Ty::F32
    }];
    for (i, s) in seqs.iter().enumerate() {
        let fits = s.len() == r
            && s[ax] == trips
            && (0..r).all(|d| d == ax || (vector && d == r - 1) || s[d] == out[d] || s[d] == 1);
        if !fits {
            return Err((
                code::SHAPE,
                format!(
                    "sequence {} has shape {s:?}; with the initial state {init:?} and :axis {ax} it must be {out:?}{}",
                    i + 1,
                    if vector { " (any width on the last axis)" } else { "" }
                ),
            ));
        }
        types.push(if vector {
            width(s[r - 1], &format!("sequence {}", i + 1))?
        } else {
            Ty::F32
        });
    }
    Ok((ax, vector, types, out))
}

struct Evaluator {
    graph: Graph,
}

impl Evaluator {
    fn eval(&mut self, form: &Sexp, env: &Env) -> Result<Val> {
        match &form.atom {
            Atom::Num(n) => Ok(Val::Num(*n)),
            Atom::Bool(b) => Ok(Val::Bool(*b)),
            Atom::Keyword(k) => Err(at(
                code::FORM,
                form.pos,
                format!("keyword `:{k}` outside an argument list"),
            )),
            Atom::Sym(s) => env
                .get(s)
                .cloned()
                .ok_or_else(|| at(code::NAME, form.pos, format!("`{s}` is not bound"))),
            Atom::Vector(items) => {
                let mut nums = vec![];
                for it in items {
                    nums.push(self.number(it, env)?);
                }
                Ok(Val::Nums(nums))
            }
            Atom::List(items) => self.call(form, items, env),
        }
    }

    fn number(&mut self, form: &Sexp, env: &Env) -> Result<f64> {
        match self.eval(form, env)? {
            Val::Num(n) => Ok(n),
            Val::ContextScalar(v) => Ok(v as f64),
            other => Err(at(
                code::FORM,
                form.pos,
                format!("expected a number, got {}", describe(&other)),
            )),
        }
    }

    fn integer(&mut self, form: &Sexp, env: &Env) -> Result<i64> {
        let n = self.number(form, env)?;
        if n.fract() != 0.0 || n.abs() > 1e12 {
            return Err(at(code::FORM, form.pos, format!("expected an integer, got {n}")));
        }
        Ok(n as i64)
    }

    fn shape(&mut self, form: &Sexp, env: &Env) -> Result<Vec<usize>> {
        match self.eval(form, env)? {
            Val::Nums(ns) => ns
                .iter()
                .map(|&n| {
                    if n >= 0.0 && n.fract() == 0.0 && n < 1e9 {
                        Ok(n as usize)
                    } else {
                        Err(at(code::FORM, form.pos, format!("a shape needs sizes >= 0, got {n}")))
                    }
                })
                .collect(),
            other => Err(at(
                code::FORM,
                form.pos,
                format!("expected a shape like [2 3], got {}", describe(&other)),
            )),
        }
    }

    fn tensor(&mut self, form: &Sexp, env: &Env) -> Result<NodeId> {
        match self.eval(form, env)? {
            Val::Tensor(id, _) => Ok(id),
            other => Err(at(
                code::FORM,
                form.pos,
                format!("expected a tensor, got {}", describe(&other)),
            )),
        }
    }

    fn arity(&self, form: &Sexp, head: &str, args: &[&Sexp], n: usize) -> Result<()> {
        if args.len() != n {
            return Err(at(
                code::FORM,
                form.pos,
                format!("`{head}` takes {n} argument(s), got {}", args.len()),
            ));
        }
        Ok(())
    }

    fn call(&mut self, form: &Sexp, items: &[Sexp], env: &Env) -> Result<Val> {
        let Some((head, args)) = items.split_first() else {
            return Err(at(code::FORM, form.pos, "empty list `()` is not a form"));
        };
        let Some(name) = head.sym() else {
            return Err(at(code::FORM, head.pos, format!("`{head}` cannot be called")));
        };
        match name {
            "let" => {
                let (env, rest) = self.bind_let(form, args, env)?;
                let mut last = None;
                for f in rest {
                    last = Some(self.eval(f, &env)?);
                }
                last.ok_or_else(|| at(code::FORM, form.pos, "`let` needs a body"))
            }
            "lambda" => {
                let Some((params, rest)) = args.split_first() else {
                    return Err(at(code::FORM, form.pos, "`lambda` needs a parameter list and a body"));
                };
                let Atom::List(ps) = &params.atom else {
                    return Err(at(
                        code::FORM,
                        params.pos,
                        "`lambda` parameters must be a list of names",
                    ));
                };
                let mut names = vec![];
                for p in ps {
                    let Some(s) = p.sym() else {
                        return Err(at(code::FORM, p.pos, format!("`{p}` is not a parameter name")));
                    };
                    names.push((s.to_string(), p.pos));
                }
                if rest.is_empty() {
                    return Err(at(code::FORM, form.pos, "`lambda` needs a body"));
                }
                Ok(Val::Lambda(Rc::new(Lambda {
                    params: names,
                    body: rest.to_vec(),
                    env: env.clone(),
                    pos: form.pos,
                })))
            }
            "list" => Ok(Val::List(
                args.iter().map(|a| self.eval(a, env)).collect::<Result<_>>()?,
            )),
            "shape" => {
                let a: Vec<&Sexp> = args.iter().collect();
                self.arity(form, name, &a, 1)?;
                let t = self.tensor(a[0], env)?;
                Ok(Val::Nums(self.graph.shape(t).iter().map(|&d| d as f64).collect()))
            }
            "zeros" => {
                let a: Vec<&Sexp> = args.iter().collect();
                self.arity(form, name, &a, 1)?;
                let s = self.shape(a[0], env)?;
                Ok(Val::Tensor(self.graph.push(GOp::Zeros, s), Origin::Outer))
            }
            "broadcast-to" => {
                let a: Vec<&Sexp> = args.iter().collect();
                self.arity(form, name, &a, 2)?;
                let (t, origin) = match self.eval(a[0], env)? {
                    Val::Tensor(t, o) => (t, o),
                    other => {
                        return Err(at(
                            code::FORM,
                            a[0].pos,
                            format!("expected a tensor, got {}", describe(&other)),
                        ))
                    }
                };
                let s = self.shape(a[1], env)?;
                let from = self.graph.shape(t).to_vec();
                match broadcast_shape("broadcast-to", &from, &s) {
                    Ok(b) if b == s => Ok(Val::Tensor(self.graph.broadcast_to(t, &s), origin)),
                    _ => Err(at(
                        code::SHAPE,
                        form.pos,
                        format!("cannot broadcast shape {from:?} to {s:?}"),
                    )),
                }
            }
            "slice" => {
                let a: Vec<&Sexp> = args.iter().collect();
                self.arity(form, name, &a, 4)?;
                let t = self.tensor(a[0], env)?;
                let shape = self.graph.shape(t).to_vec();
                let axis = self.integer(a[1], env)?;
                let (start, end) = (self.integer(a[2], env)?, self.integer(a[3], env)?);
                let r = shape.len() as i64;
                let ax = if axis < 0 { axis + r } else { axis };
                if ax < 0 || ax >= r {
                    return Err(at(
                        code::FORM,
                        a[1].pos,
                        format!("axis {axis} is outside the tensor's {r} axes"),
                    ));
                }
                let n = shape[ax as usize] as i64;
                if start < 0 || start > end || end > n {
                    return Err(at(
                        code::FORM,
                        form.pos,
                        format!("slice {start}..{end} does not fit axis {ax} of size {n}"),
                    ));
                }
                let w = self
                    .graph
                    .window(t, None, ax as usize, start as isize, (end - start) as usize);
                Ok(Val::Tensor(w, Origin::Outer))
            }
            "element-scan" => self.element_scan(form, args, env),
            "with-numerics" => {
                // Tensors here are f32 and a scan always computes in f32, so a precision
                // region changes nothing inside it; its keywords are checked and passed over.
                let mut i = 0;
                while i + 1 < args.len() && matches!(args[i].atom, Atom::Keyword(_)) {
                    i += 2;
                }
                let mut last = None;
                for f in &args[i..] {
                    last = Some(self.eval(f, env)?);
                }
                last.ok_or_else(|| at(code::FORM, form.pos, "`with-numerics` needs a body"))
            }
            "+" | "-" | "*" | "/" => {
                let mut nums = vec![];
                for a in args {
                    nums.push(self.number(a, env)?);
                }
                let Some((&first, rest)) = nums.split_first() else {
                    return Err(at(code::FORM, form.pos, format!("`{name}` needs arguments")));
                };
                // The IR's op values: numbers outside a body compute as they would inside.
                let op = match name {
                    "+" => Binary::Add,
                    "-" => Binary::Sub,
                    "*" => Binary::Mul,
                    _ => Binary::Div,
                };
                Ok(Val::Num(match (name, rest.is_empty()) {
                    ("-", true) => Unary::Neg.eval(first),
                    ("/", true) => op.eval(1.0, first),
                    _ => rest.iter().fold(first, |acc, &x| op.eval(acc, x)),
                }))
            }
            _ => match env.get(name) {
                Some(Val::Lambda(_)) => Err(at(
                    code::FORM,
                    form.pos,
                    format!("`{name}` is a function; outside a scan body functions are only passed to `element-scan`"),
                )),
                _ => Err(at(code::NAME, head.pos, format!("unknown form `{name}`"))),
            },
        }
    }

    /// `(let ((name value) ..) body..)`: binds in order, each value seeing the earlier names.
    fn bind_let<'a>(&mut self, form: &Sexp, args: &'a [Sexp], env: &Env) -> Result<(Env, &'a [Sexp])> {
        let (pairs, rest) = let_parts(form, args)?;
        let mut env = env.clone();
        for (name, value) in pairs {
            let v = self.eval(value, &env)?;
            env.insert(name.to_string(), v);
        }
        Ok((env, rest))
    }

    fn element_scan(&mut self, form: &Sexp, args: &[Sexp], env: &Env) -> Result<Val> {
        let (pos, kws) = split_keywords("element-scan", args, &["axis", "state-axis", "reverse"])?;
        self.arity(form, "element-scan", &pos, 3)?;
        let f = match self.eval(pos[0], env)? {
            Val::Lambda(l) => l,
            other => {
                return Err(at(
                    code::FORM,
                    pos[0].pos,
                    format!("the body must be a lambda, got {}", describe(&other)),
                ))
            }
        };
        let init = self.tensor(pos[1], env)?;
        let seqs: Vec<NodeId> = match self.eval(pos[2], env)? {
            Val::List(items) => items
                .iter()
                .map(|v| match v {
                    Val::Tensor(t, _) => Ok(*t),
                    other => Err(at(
                        code::FORM,
                        pos[2].pos,
                        format!("sequences must be tensors, got {}", describe(other)),
                    )),
                })
                .collect::<Result<_>>()?,
            Val::Tensor(t, _) => vec![t],
            other => {
                return Err(at(
                    code::FORM,
                    pos[2].pos,
                    format!("expected (list sequences..), got {}", describe(&other)),
                ))
            }
        };
        let (mut axis, mut state_axis, mut reverse) = (None, None, false);
        for (k, v) in kws {
            match k {
                "axis" => axis = Some(self.integer(v, env)?),
                "state-axis" => state_axis = Some(self.integer(v, env)?),
                _ => match self.eval(v, env)? {
                    Val::Bool(b) => reverse = b,
                    other => {
                        return Err(at(
                            code::FORM,
                            v.pos,
                            format!(":reverse takes true or false, got {}", describe(&other)),
                        ))
                    }
                },
            }
        }
        let Some(axis) = axis else {
            return Err(at(code::FORM, form.pos, "`element-scan` needs :axis"));
        };
        let init_shape = self.graph.shape(init).to_vec();
        let seq_shapes: Vec<Vec<usize>> = seqs.iter().map(|&s| self.graph.shape(s).to_vec()).collect();
        let (axis, vector, types, out) = scan_types(&init_shape, &seq_shapes, axis, state_axis)
            .map_err(|(c, m)| at(c, form.pos, format!("element-scan: {m}")))?;
        let body = body::lower(&f, &types)?;
        let mut inputs = vec![init];
        inputs.extend(seqs);
        let spec = ScanSpec {
            body,
            axis,
            vector,
            reverse,
        };
        Ok(Val::Tensor(self.graph.scan(spec, inputs, out), Origin::Outer))
    }
}
