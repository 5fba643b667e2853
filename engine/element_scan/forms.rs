//! What the outer evaluator ([`super::eval`]) and the body lowering ([`super::body`]) share:
//! the outer values ([`Val`], a `lambda` and the scope it closes over) and the helpers that
//! take a call's forms apart (`let` bindings, `:keyword` arguments), with one error vocabulary.

use std::collections::HashMap;
use std::rc::Rc;

use super::diagnose::{at, code};
use super::graph::NodeId;
use super::sexpr::{Atom, Pos, Sexp};
use crate::error::Result;

/// Where a tensor value came from (decides the error when a body reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    Outer,
    Parameter,
}

/// A `lambda` and the scope it closes over.
#[derive(Debug)]
pub(crate) struct Lambda {
    pub params: Vec<(String, Pos)>,
    pub body: Vec<Sexp>,
    pub env: Env,
    pub pos: Pos,
}

/// An outer value.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    Tensor(NodeId, Origin),
    Num(f64),
    ContextScalar(f32),
    Bool(bool),
    Nums(Vec<f64>),
    List(Vec<Val>),
    Lambda(Rc<Lambda>),
}

pub(crate) type Env = HashMap<String, Val>;

/// What a value is, for errors: "a tensor", "a number", ...
pub(crate) fn describe(v: &Val) -> &'static str {
    match v {
        Val::Tensor(..) => "a tensor",
        Val::Num(_) => "a number",
        Val::ContextScalar(_) => "a context scalar",
        Val::Bool(_) => "a bool",
        Val::Nums(_) => "a shape",
        Val::List(_) => "a list",
        Val::Lambda(_) => "a function",
    }
}

/// Positional forms and `(keyword, value)` pairs of a call.
pub(crate) type Args<'a> = (Vec<&'a Sexp>, Vec<(&'a str, &'a Sexp)>);

/// A `let`'s (name, value form) pairs and its body forms.
pub(crate) type LetParts<'a> = (Vec<(&'a str, &'a Sexp)>, &'a [Sexp]);

/// The parts of `(let ((name value) ..) body..)` from its arguments: the (name, value form)
/// pairs in order and the body forms. The outer evaluator and the body lowering both bind
/// with it; an error names the offending form.
pub(crate) fn let_parts<'a>(form: &Sexp, args: &'a [Sexp]) -> Result<LetParts<'a>> {
    let Some((binds, rest)) = args.split_first() else {
        return Err(at(code::FORM, form.pos, "`let` needs a binding list and a body"));
    };
    let Atom::List(pairs) = &binds.atom else {
        return Err(at(
            code::FORM,
            binds.pos,
            "`let` bindings must be a list of (name value) pairs",
        ));
    };
    let mut out = Vec::with_capacity(pairs.len());
    for p in pairs {
        let pair = match &p.atom {
            Atom::List(kv) if kv.len() == 2 => kv[0].sym().map(|name| (name, &kv[1])),
            _ => None,
        };
        out.push(pair.ok_or_else(|| at(code::FORM, p.pos, format!("`{p}` is not a (name value) pair")))?);
    }
    Ok((out, rest))
}

/// Splits `args` into positional forms and `:keyword value` pairs (keywords come last).
pub(crate) fn split_keywords<'a>(head: &str, args: &'a [Sexp], allowed: &[&str]) -> Result<Args<'a>> {
    let mut pos = vec![];
    let mut kws = vec![];
    let mut i = 0;
    while i < args.len() {
        if let Atom::Keyword(k) = &args[i].atom {
            if !allowed.contains(&k.as_str()) {
                return Err(at(
                    code::FORM,
                    args[i].pos,
                    format!(
                        "`{head}` takes no keyword `:{k}` (it takes {})",
                        allowed.iter().map(|a| format!(":{a}")).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            let Some(v) = args.get(i + 1) else {
                return Err(at(
                    code::FORM,
                    args[i].pos,
                    format!("keyword `:{k}` of `{head}` needs a value"),
                ));
            };
            kws.push((k.as_str(), v));
            i += 2;
        } else {
            if !kws.is_empty() {
                return Err(at(
                    code::FORM,
                    args[i].pos,
                    format!("`{head}`: positional argument after keywords"),
                ));
            }
            pos.push(&args[i]);
            i += 1;
        }
    }
    Ok((pos, kws))
}
