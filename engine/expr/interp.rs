//! The f64 interpreter of the IR: the reference of elementwise ops, fused graphs and element
//! scans, and the CPU context's implementation of all three. One call evaluates a body once.

use super::ir::{Body, Kind, Op};
use crate::error::{Error, Result};

/// Evaluates a body call by call, reusing one value buffer.
pub struct Interp<'a> {
    body: &'a Body,
    /// Start of each node's components in `vals`.
    start: Vec<usize>,
    vals: Vec<f64>,
    /// Why the body cannot be evaluated (a node reading a later one, a parameter out of
    /// range), when its public fields were set by hand; [`Interp::call`] reports it.
    invalid: Option<String>,
}

/// The structure [`Interp::call`] relies on: every parameter node within the parameters and
/// of its parameter's width, every argument an earlier node, the result a node.
fn structure(body: &Body) -> Option<String> {
    for (k, node) in body.nodes.iter().enumerate() {
        let args: &[super::ir::Id] = match &node.op {
            Op::Param(i) => match body.params.get(*i as usize) {
                Some(ty) if ty.lanes() == node.ty.lanes() => &[],
                _ => return Some(format!("node %{k} reads parameter {i} of {:?}", body.params)),
            },
            Op::Const(_) => &[],
            Op::Unary(_, x) | Op::Reduce(_, x, _) | Op::Splat(x, _) => std::slice::from_ref(x),
            Op::Binary(_, x, y) => &[*x, *y],
            Op::Where(c, x, y) => &[*c, *x, *y],
        };
        if let Some(x) = args.iter().find(|x| x.0 as usize >= k) {
            return Some(format!("node %{k} reads %{}, not an earlier node", x.0));
        }
    }
    (body.result.0 as usize >= body.nodes.len()).then(|| format!("the result %{} is not a node", body.result.0))
}

impl<'a> Interp<'a> {
    /// An interpreter of `body` (checked or built by the builder).
    pub fn new(body: &'a Body) -> Self {
        let mut start = Vec::with_capacity(body.nodes.len());
        let mut n = 0;
        for node in &body.nodes {
            start.push(n);
            n += node.ty.lanes();
        }
        Interp {
            body,
            start,
            vals: vec![0.0; n],
            invalid: structure(body),
        }
    }

    /// Component `j` of node `k`, broadcasting scalars and one-value vectors.
    fn get(&self, k: u32, j: usize) -> f64 {
        let k = k as usize;
        let lanes = self.body.nodes[k].ty.lanes();
        self.vals[self.start[k] + if lanes == 1 { 0 } else { j }]
    }

    /// Runs the body once. `args[i]` holds parameter i's components (one value broadcasts);
    /// returns the result's components.
    ///
    /// Errors ([`Error::Value`], op `expr::Interp::call`): the number of argument slices is not
    /// the body's parameter count, or a slice's length is neither 1 nor its parameter's lanes,
    /// or a body built by hand reads a node that is not an earlier one.
    pub fn call(&mut self, args: &[&[f64]]) -> Result<&[f64]> {
        const OP: &str = "expr::Interp::call";
        if let Some(why) = &self.invalid {
            return Err(Error::value(
                OP,
                "body",
                "nodes that read earlier nodes (see Body::validate)",
                why,
            ));
        }
        let params = &self.body.params;
        if args.len() != params.len() {
            return Err(Error::value(
                OP,
                "args",
                format!("{} argument slices (one per parameter)", params.len()),
                format!("{} slices", args.len()),
            ));
        }
        for (i, (a, ty)) in args.iter().zip(params).enumerate() {
            let lanes = ty.lanes();
            if a.len() != 1 && a.len() != lanes {
                return Err(Error::Value {
                    op: OP,
                    arg: "args",
                    expected: format!("parameter {i} to have 1 or {lanes} values"),
                    actual: format!("{} values", a.len()),
                });
            }
        }
        for (k, node) in self.body.nodes.iter().enumerate() {
            let lanes = node.ty.lanes();
            for j in 0..lanes {
                let v = match node.op {
                    Op::Param(i) => {
                        let a = args[i as usize];
                        a[if a.len() == 1 { 0 } else { j }]
                    }
                    Op::Const(bits) if node.ty.kind == Kind::Bool => bits as f64,
                    Op::Const(bits) => f32::from_bits(bits) as f64,
                    Op::Unary(u, x) => u.eval(self.get(x.0, j)),
                    Op::Binary(b, x, y) => b.eval(self.get(x.0, j), self.get(y.0, j)),
                    Op::Where(c, x, y) => {
                        if self.get(c.0, j) != 0.0 {
                            self.get(x.0, j)
                        } else {
                            self.get(y.0, j)
                        }
                    }
                    Op::Reduce(r, x, _) => {
                        let n = self.body.nodes[x.0 as usize].ty.lanes();
                        r.eval((0..n).map(|i| self.get(x.0, i)))
                    }
                    Op::Splat(x, _) => self.get(x.0, 0),
                };
                self.vals[self.start[k] + j] = v;
            }
        }
        let r = self.body.result.0 as usize;
        Ok(&self.vals[self.start[r]..self.start[r] + self.body.nodes[r].ty.lanes()])
    }
}
