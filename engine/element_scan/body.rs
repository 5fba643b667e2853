//! Lowering a `lambda` body to the IR, given the parameter types an `element-scan` fixes.
//!
//! Local names (parameters, body `let`s) become IR values; names the lambda closes over may
//! be compile-time numbers and bools (constants) or functions (inlined at the call). Reading
//! an outer tensor (`E-FLOW-002`), a parameter or context scalar (`E-SCAN-001`), calling a
//! forbidden operation (see [`diagnose::forbidden`]), reducing in a scalar-state body and asking
//! for bf16 are errors at the offending form.

use std::collections::HashMap;
use std::rc::Rc;

use super::diagnose::{self, at, code, reposition};
use super::forms::{describe, let_parts, split_keywords, Env, Lambda, Origin, Val};
use super::sexpr::{Atom, Sexp};
use crate::error::Result;
use crate::expr::{Binary, Body, Builder, Id, Kind, Reduce, Ty, Unary};

/// Deepest function inlining (a function calling itself would never end).
const MAX_INLINE: usize = 64;

/// Most forms lowered for one body, inlined calls counted at each call. Depth alone does not
/// bound the work: functions that each call the previous one twice double it per level.
pub const MAX_LOWERED_FORMS: usize = 1 << 16;

/// Lowers `f` (state, then one parameter per sequence) to a body of these parameter types.
pub(crate) fn lower(f: &Lambda, types: &[Ty]) -> Result<Body> {
    if f.params.len() != types.len() {
        return Err(at(
            code::FORM,
            f.pos,
            format!(
                "the body takes {} parameter(s); this scan passes the state and {} sequence value(s)",
                f.params.len(),
                types.len() - 1
            ),
        ));
    }
    let b = Body::builder(types);
    let mut locals = HashMap::new();
    for (i, (name, _)) in f.params.iter().enumerate() {
        locals.insert(name.clone(), b.param(i));
    }
    let mut l = Lowerer {
        b,
        vector: types[0].width > 0,
        depth: 0,
        lowered: 0,
    };
    let mut last = None;
    for form in &f.body {
        last = Some((l.expr(form, &locals, &f.env)?, form));
    }
    let (r, form) = last.ok_or_else(|| at(code::FORM, f.pos, "the body is empty"))?;
    let state = types[0];
    let rt = l.b.ty(r)?;
    let r = if rt.kind == Kind::F32 && rt.width <= 1 && state.width > 1 {
        l.b.splat(r, state.width).map_err(|e| reposition(e, form.pos, "body"))?
    } else {
        r
    };
    let rt = l.b.ty(r)?;
    if rt != state {
        return Err(at(
            code::TYPE,
            form.pos,
            format!("the body returns {rt}; it must return the state's type {state}"),
        ));
    }
    l.b.finish(r)
}

struct Lowerer {
    b: Builder,
    vector: bool,
    depth: usize,
    /// Forms lowered so far (bounded by [`MAX_LOWERED_FORMS`]).
    lowered: usize,
}

type Locals = HashMap<String, Id>;

impl Lowerer {
    fn expr(&mut self, form: &Sexp, locals: &Locals, env: &Env) -> Result<Id> {
        self.lowered += 1;
        if self.lowered > MAX_LOWERED_FORMS {
            return Err(at(
                code::TOO_LARGE,
                form.pos,
                format!("the body lowers to more than {MAX_LOWERED_FORMS} forms once its function calls are inlined"),
            ));
        }
        match &form.atom {
            Atom::Num(n) => Ok(self.b.constant(*n as f32)),
            Atom::Bool(v) => Ok(self.b.boolean(*v)),
            Atom::Sym(s) => self.symbol(form, s, locals, env),
            Atom::Keyword(k) => Err(at(
                code::FORM,
                form.pos,
                format!("keyword `:{k}` outside an argument list"),
            )),
            Atom::Vector(_) => Err(at(
                code::TYPE,
                form.pos,
                format!("`{form}`: a literal vector is not a body value; broadcast a scalar instead"),
            )),
            Atom::List(items) => self.call(form, items, locals, env),
        }
    }

    fn symbol(&mut self, form: &Sexp, s: &str, locals: &Locals, env: &Env) -> Result<Id> {
        if let Some(id) = locals.get(s) {
            return Ok(*id);
        }
        match env.get(s) {
            Some(Val::Num(n)) => Ok(self.b.constant(*n as f32)),
            Some(Val::Bool(v)) => Ok(self.b.boolean(*v)),
            Some(Val::Tensor(_, Origin::Outer)) => Err(at(
                code::IMPLICIT_TENSOR,
                form.pos,
                format!(
                    "the body reads the outer tensor `{s}` implicitly; pass it in the sequence list (broadcast to the sequence shape)"
                ),
            )),
            Some(Val::Tensor(_, Origin::Parameter)) => Err(at(
                code::IMPLICIT_PARAM,
                form.pos,
                format!("the body reads the parameter `{s}` implicitly; broadcast it to the sequence shape and pass it in the sequence list"),
            )),
            Some(Val::ContextScalar(_)) => Err(at(
                code::IMPLICIT_PARAM,
                form.pos,
                format!("the body reads the context scalar `{s}` implicitly; broadcast it and pass it in the sequence list"),
            )),
            Some(other) => Err(at(
                code::TYPE,
                form.pos,
                format!("`{s}` is {} and cannot be a body value", describe(other)),
            )),
            None => Err(at(code::NAME, form.pos, format!("`{s}` is not bound"))),
        }
    }

    fn args(&mut self, args: &[&Sexp], locals: &Locals, env: &Env) -> Result<Vec<Id>> {
        args.iter().map(|a| self.expr(a, locals, env)).collect()
    }

    fn call(&mut self, form: &Sexp, items: &[Sexp], locals: &Locals, env: &Env) -> Result<Id> {
        let Some((head, rest)) = items.split_first() else {
            return Err(at(code::FORM, form.pos, "empty list `()` is not a form"));
        };
        let Some(name) = head.sym() else {
            return Err(at(code::FORM, head.pos, format!("`{head}` cannot be called")));
        };
        if let Some((code, why)) = diagnose::forbidden(name) {
            return Err(at(
                code,
                form.pos,
                format!("`{name}` cannot appear in an element-scan body: it {why}"),
            ));
        }
        if !locals.contains_key(name) {
            if let Some(Val::Lambda(f)) = env.get(name) {
                return self.inline(form, f.clone(), rest, locals, env);
            }
        }
        let fail = |e| reposition(e, form.pos, name);
        let arity = |n: usize| -> Result<()> {
            if rest.len() != n {
                return Err(at(
                    code::FORM,
                    form.pos,
                    format!("`{name}` takes {n} argument(s), got {}", rest.len()),
                ));
            }
            Ok(())
        };
        let all: Vec<&Sexp> = rest.iter().collect();
        let unary = |u| Some(u);
        let un = match name {
            "neg" => unary(Unary::Neg),
            "exp" => unary(Unary::Exp),
            "log" => unary(Unary::Log),
            "tanh" => unary(Unary::Tanh),
            "sigmoid" => unary(Unary::Sigmoid),
            "sqrt" => unary(Unary::Sqrt),
            "abs" => unary(Unary::Abs),
            "sin" => unary(Unary::Sin),
            "cos" => unary(Unary::Cos),
            "not" => unary(Unary::Not),
            "f32" | "float" => unary(Unary::ToF32),
            "bool" => unary(Unary::ToBool),
            _ => None,
        };
        if let Some(u) = un {
            arity(1)?;
            let x = self.expr(&rest[0], locals, env)?;
            return self.b.unary(u, x).map_err(fail);
        }
        let bin = match name {
            "pow" => Some(Binary::Pow),
            "maximum" => Some(Binary::Max),
            "minimum" => Some(Binary::Min),
            "<" => Some(Binary::Lt),
            "<=" => Some(Binary::Le),
            ">" => Some(Binary::Gt),
            ">=" => Some(Binary::Ge),
            "=" | "==" => Some(Binary::Eq),
            "!=" => Some(Binary::Ne),
            _ => None,
        };
        if let Some(op) = bin {
            arity(2)?;
            let v = self.args(&all, locals, env)?;
            return self.b.binary(op, v[0], v[1]).map_err(fail);
        }
        match name {
            "+" | "*" | "and" | "or" => {
                let op = match name {
                    "+" => Binary::Add,
                    "*" => Binary::Mul,
                    "and" => Binary::And,
                    _ => Binary::Or,
                };
                let v = self.args(&all, locals, env)?;
                let Some((&first, more)) = v.split_first() else {
                    return Err(at(code::FORM, form.pos, format!("`{name}` needs arguments")));
                };
                more.iter()
                    .try_fold(first, |acc, &x| self.b.binary(op, acc, x))
                    .map_err(fail)
            }
            "-" | "/" => {
                let v = self.args(&all, locals, env)?;
                let op = if name == "-" { Binary::Sub } else { Binary::Div };
                match v.as_slice() {
                    [] => Err(at(code::FORM, form.pos, format!("`{name}` needs arguments"))),
                    [x] if name == "-" => self.b.unary(Unary::Neg, *x).map_err(fail),
                    [x] => {
                        let one = self.b.constant(1.0);
                        self.b.binary(Binary::Div, one, *x).map_err(fail)
                    }
                    [first, more @ ..] => more
                        .iter()
                        .try_fold(*first, |acc, &x| self.b.binary(op, acc, x))
                        .map_err(fail),
                }
            }
            "where" | "select" => {
                arity(3)?;
                let v = self.args(&all, locals, env)?;
                self.b.select(v[0], v[1], v[2]).map_err(fail)
            }
            "cast" | "astype" => {
                arity(2)?;
                let x = self.expr(&rest[0], locals, env)?;
                match &rest[1].atom {
                    Atom::Keyword(k) if k == "f32" => self.b.unary(Unary::ToF32, x).map_err(fail),
                    Atom::Keyword(k) if k == "bool" => self.b.unary(Unary::ToBool, x).map_err(fail),
                    _ => Err(at(code::FORM, rest[1].pos, "cast takes :f32 or :bool")),
                }
            }
            "sum" | "max" if rest.len() == 2 && name == "max" && !matches!(rest[1].atom, Atom::Keyword(_)) => {
                let v = self.args(&all, locals, env)?;
                self.b.binary(Binary::Max, v[0], v[1]).map_err(fail)
            }
            "sum" | "max" => self.reduce(form, name, rest, locals, env),
            "broadcast-to" | "reshape" => {
                // Scalar reshape and broadcast are identities in a body: every value already
                // broadcasts against the state.
                arity(2)?;
                self.expr(&rest[0], locals, env)
            }
            "let" | "let*" => {
                let (pairs, body) = let_parts(form, rest)?;
                let mut inner = locals.clone();
                for (name, value) in pairs {
                    let v = self.expr(value, &inner, env)?;
                    inner.insert(name.to_string(), v);
                }
                self.sequence(form, body, &inner, env)
            }
            "with-numerics" => {
                let mut i = 0;
                while i + 1 < rest.len() && matches!(rest[i].atom, Atom::Keyword(_)) {
                    let Atom::Keyword(k) = &rest[i].atom else { break };
                    if k == "precision"
                        && matches!(&rest[i + 1].atom, Atom::Keyword(v) if v == "bf16" || v == "bfloat16")
                    {
                        return Err(at(
                            code::BF16,
                            form.pos,
                            "`with-numerics :precision :bf16` inside an element-scan body: the recurrence always computes in f32",
                        ));
                    }
                    i += 2;
                }
                self.sequence(form, &rest[i..], locals, env)
            }
            _ => Err(at(code::NAME, head.pos, format!("unknown body operation `{name}`"))),
        }
    }

    fn sequence(&mut self, form: &Sexp, body: &[Sexp], locals: &Locals, env: &Env) -> Result<Id> {
        let mut last = None;
        for f in body {
            last = Some(self.expr(f, locals, env)?);
        }
        last.ok_or_else(|| at(code::FORM, form.pos, "empty body"))
    }

    /// `(sum v :axes [-1] :keepdims true)` and `(max v ..)`.
    fn reduce(&mut self, form: &Sexp, name: &str, rest: &[Sexp], locals: &Locals, env: &Env) -> Result<Id> {
        let (pos, kws) = split_keywords(name, rest, &["axes", "axis", "keepdims"])?;
        if pos.len() != 1 {
            return Err(at(
                code::FORM,
                form.pos,
                format!("`{name}` reduces one value, got {}", pos.len()),
            ));
        }
        if !self.vector {
            return Err(at(
                code::SCALAR_REDUCE,
                form.pos,
                format!(
                    "`{name}` reduces, and a scalar-state body cannot reduce (use :state-axis -1 for a vector state)"
                ),
            ));
        }
        let mut keep = false;
        for (k, v) in kws {
            match (k, &v.atom) {
                ("keepdims", Atom::Bool(b)) => keep = *b,
                ("axes", Atom::Vector(ax)) if ax.len() == 1 && matches!(ax[0].atom, Atom::Num(n) if n == -1.0) => {}
                ("axis", Atom::Num(n)) if *n == -1.0 => {}
                _ => {
                    return Err(at(
                        code::FORM,
                        v.pos,
                        format!("`{name}` takes :axes [-1] and :keepdims true|false"),
                    ))
                }
            }
        }
        let x = self.expr(pos[0], locals, env)?;
        if self.b.ty(x)?.width == 0 {
            return Err(at(
                code::SCALAR_REDUCE,
                form.pos,
                format!("`{name}` of a scalar: a vector state's body reduces only its vectors"),
            ));
        }
        let op = if name == "sum" { Reduce::Sum } else { Reduce::Max };
        self.b.reduce(op, x, keep).map_err(|e| reposition(e, form.pos, name))
    }

    /// Calls a function the lambda closed over: its body lowered with the arguments bound.
    fn inline(&mut self, form: &Sexp, f: Rc<Lambda>, rest: &[Sexp], locals: &Locals, env: &Env) -> Result<Id> {
        if f.params.len() != rest.len() {
            return Err(at(
                code::FORM,
                form.pos,
                format!("the function takes {} argument(s), got {}", f.params.len(), rest.len()),
            ));
        }
        if self.depth >= MAX_INLINE {
            return Err(at(
                code::FORM,
                form.pos,
                "functions call each other too deeply (recursion?)",
            ));
        }
        let mut inner = Locals::new();
        for (p, a) in f.params.iter().zip(rest) {
            let v = self.expr(a, locals, env)?;
            inner.insert(p.0.clone(), v);
        }
        self.depth += 1;
        let r = self.sequence(form, &f.body, &inner, &f.env);
        self.depth -= 1;
        r
    }
}
