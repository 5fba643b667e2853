//! The tensor-level program around element scans: a small graph of scans and the tensor
//! ops their gradients need, evaluated on any context and differentiated into more graph.
//!
//! Nodes are appended after their inputs, so node order is a topological order. The gradient
//! of a scan is built from scans ([`super::grad`]'s bodies) and the other node kinds here,
//! whose own gradients are again nodes here: a gradient graph can be differentiated again.

use std::collections::HashMap;
use std::sync::Arc;

use super::grad;
use super::launch;
use super::reduce_to::{broadcast_to, reduce_to};
use super::window::window;
use crate::error::{Error, Result};
use crate::expr::Body;
use crate::ops;
use crate::tensor::Tensor;
use crate::Context;

/// A node index in a [`Graph`].
pub(crate) type NodeId = usize;

/// One element scan: its body and where its axes are.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ScanSpec {
    pub body: Body,
    /// The trip axis, in the output's axes.
    pub axis: usize,
    /// The state is a vector along the last axis (`:state-axis -1`).
    pub vector: bool,
    pub reverse: bool,
}

#[derive(Clone, Debug)]
pub(crate) enum GOp {
    /// A tensor bound by name when the program runs.
    Input(String),
    Zeros,
    /// `[initial, sequences..]` -> the states after every trip.
    Scan(Arc<ScanSpec>, Vec<NodeId>),
    /// Same shapes.
    Add(NodeId, NodeId),
    /// Shift, slice or pad along `axis`; see [`window`]. `fill` only for a shift by one.
    Window {
        x: NodeId,
        fill: Option<NodeId>,
        axis: usize,
        offset: isize,
    },
    BroadcastTo(NodeId),
    ReduceTo(NodeId),
    Reshape(NodeId),
}

#[derive(Clone, Debug)]
pub(crate) struct GNode {
    pub op: GOp,
    pub shape: Vec<usize>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Graph {
    pub nodes: Vec<GNode>,
}

impl Graph {
    pub fn push(&mut self, op: GOp, shape: Vec<usize>) -> NodeId {
        self.nodes.push(GNode { op, shape });
        self.nodes.len() - 1
    }

    pub fn shape(&self, id: NodeId) -> &[usize] {
        &self.nodes[id].shape
    }

    /// The input node named `name`, created on first use.
    pub fn input(&mut self, name: &str, shape: &[usize]) -> NodeId {
        let found = self
            .nodes
            .iter()
            .position(|n| matches!(&n.op, GOp::Input(s) if s == name));
        found.unwrap_or_else(|| self.push(GOp::Input(name.to_string()), shape.to_vec()))
    }

    pub fn add(&mut self, a: NodeId, b: NodeId) -> NodeId {
        let s = self.shape(a).to_vec();
        self.push(GOp::Add(a, b), s)
    }

    pub fn window(&mut self, x: NodeId, fill: Option<NodeId>, axis: usize, offset: isize, len: usize) -> NodeId {
        let mut s = self.shape(x).to_vec();
        s[axis] = len;
        self.push(GOp::Window { x, fill, axis, offset }, s)
    }

    pub fn reshape(&mut self, x: NodeId, shape: &[usize]) -> NodeId {
        if self.shape(x) == shape {
            return x;
        }
        self.push(GOp::Reshape(x), shape.to_vec())
    }

    pub fn broadcast_to(&mut self, x: NodeId, shape: &[usize]) -> NodeId {
        if self.shape(x) == shape {
            return x;
        }
        self.push(GOp::BroadcastTo(x), shape.to_vec())
    }

    pub fn reduce_to(&mut self, x: NodeId, shape: &[usize]) -> NodeId {
        if self.shape(x) == shape {
            return x;
        }
        self.push(GOp::ReduceTo(x), shape.to_vec())
    }

    /// A scan node; shapes were checked by [`super::eval::scan_types`].
    pub fn scan(&mut self, spec: ScanSpec, inputs: Vec<NodeId>, out_shape: Vec<usize>) -> NodeId {
        self.push(GOp::Scan(Arc::new(spec), inputs), out_shape)
    }

    /// Evaluates `want` on `ctx`; `feeds` holds every input node's tensor by name.
    pub fn eval(&self, ctx: &Context, feeds: &HashMap<String, Tensor>, want: &[NodeId]) -> Result<Vec<Tensor>> {
        let mut needed = vec![false; self.nodes.len()];
        for &w in want {
            needed[w] = true;
        }
        for k in (0..self.nodes.len()).rev() {
            if needed[k] {
                for d in deps(&self.nodes[k].op) {
                    needed[d] = true;
                }
            }
        }
        let mut vals: Vec<Option<Tensor>> = vec![None; self.nodes.len()];
        for k in 0..self.nodes.len() {
            if !needed[k] {
                continue;
            }
            let node = &self.nodes[k];
            // Nodes come in dependency order, so every operand was evaluated before.
            let unevaluated = |id: NodeId| Error::value("element_scan", "graph", "operands evaluated first", id);
            let v = |id: NodeId| vals[id].as_ref().ok_or_else(|| unevaluated(id));
            let t = match &node.op {
                GOp::Input(name) => {
                    let t = feeds.get(name).ok_or_else(|| {
                        Error::value("element_scan", "bindings", format!("a tensor named `{name}`"), "none")
                    })?;
                    t.expect_context(ctx, "element_scan", "bound tensor")?;
                    t.clone()
                }
                GOp::Zeros => Tensor::zeros(ctx, &node.shape)?,
                GOp::Scan(spec, inputs) => {
                    let ins: Vec<&Tensor> = inputs.iter().map(|&i| v(i)).collect::<Result<_>>()?;
                    launch::run(&spec.body, spec.axis, spec.vector, spec.reverse, &node.shape, &ins)?
                }
                GOp::Add(a, b) => ops::add(v(*a)?, v(*b)?)?,
                GOp::Window { x, fill, axis, offset } => {
                    let fill = fill.map(&v).transpose()?;
                    window(v(*x)?, fill, *axis, *offset, node.shape[*axis])?
                }
                GOp::BroadcastTo(x) => broadcast_to(v(*x)?, &node.shape)?,
                GOp::ReduceTo(x) => reduce_to(v(*x)?, &node.shape)?,
                GOp::Reshape(x) => v(*x)?.reshape(&node.shape)?,
            };
            vals[k] = Some(t);
        }
        want.iter()
            .map(|&w| {
                vals[w]
                    .clone()
                    .ok_or_else(|| Error::value("element_scan", "graph", "outputs evaluated", w))
            })
            .collect()
    }

    /// Appends the gradient of `out` (cotangent `seed`, out's shape) and returns the adjoint
    /// node of every node that was in the graph before (None: no path from it to `out`).
    pub fn grad(&mut self, out: NodeId, seed: NodeId) -> Result<Vec<Option<NodeId>>> {
        let n = out + 1;
        let mut adj: Vec<Option<NodeId>> = vec![None; n];
        adj[out] = Some(seed);
        for k in (0..n).rev() {
            let Some(g) = adj[k] else { continue };
            let op = self.nodes[k].op.clone();
            let mut contributions: Vec<(NodeId, NodeId)> = vec![];
            match op {
                GOp::Input(_) | GOp::Zeros => {}
                GOp::Add(a, b) => {
                    contributions.push((a, g));
                    contributions.push((b, g));
                }
                GOp::Window { x, fill, axis, offset } => {
                    let t_in = self.shape(x)[axis];
                    let len = self.shape(k)[axis];
                    contributions.push((x, self.window(g, None, axis, -offset, t_in)));
                    if let Some(f) = fill {
                        // Only shifts by one carry a fill: it sits at the first (offset -1)
                        // or the last (offset +1) position.
                        let at = if offset < 0 { 0 } else { len as isize - 1 };
                        let w = self.window(g, None, axis, at, 1);
                        let fs = self.shape(f).to_vec();
                        contributions.push((f, self.reshape(w, &fs)));
                    }
                }
                GOp::BroadcastTo(x) => {
                    let s = self.shape(x).to_vec();
                    contributions.push((x, self.reduce_to(g, &s)));
                }
                GOp::ReduceTo(x) => {
                    let s = self.shape(x).to_vec();
                    contributions.push((x, self.broadcast_to(g, &s)));
                }
                GOp::Reshape(x) => {
                    let s = self.shape(x).to_vec();
                    contributions.push((x, self.reshape(g, &s)));
                }
                GOp::Scan(spec, inputs) => contributions.extend(self.scan_grad(k, &spec, &inputs, g)?),
            }
            for (target, d) in contributions {
                adj[target] = Some(match adj[target] {
                    Some(prev) => self.add(prev, d),
                    None => d,
                });
            }
        }
        Ok(adj)
    }

    /// The adjoints of a scan's inputs, given the cotangent `g` of its output `out`.
    ///
    /// With `hp` the state before each trip (the output shifted by one, the initial state at
    /// the first trip), a backward scan carries `c = (df/dh)^T (g + c_next)` from the last
    /// trip to the first; then `a = g + c_next` and each sequence's adjoint is a pointwise
    /// `(df/dx_i)^T a`, summed back to the sequence's shape when it was broadcast.
    fn scan_grad(
        &mut self,
        out: NodeId,
        spec: &ScanSpec,
        inputs: &[NodeId],
        g: NodeId,
    ) -> Result<Vec<(NodeId, NodeId)>> {
        let (axis, rev) = (spec.axis, spec.reverse);
        let shape = self.shape(out).to_vec();
        let trips = shape[axis];
        let init = inputs[0];
        let init_shape = self.shape(init).to_vec();
        let step: isize = if rev { 1 } else { -1 };
        let hp = self.window(out, Some(init), axis, step, trips);
        let zeros = self.push(GOp::Zeros, init_shape.clone());
        let mut carry_inputs = vec![zeros, g, hp];
        carry_inputs.extend_from_slice(&inputs[1..]);
        let carry = ScanSpec {
            body: grad::carry_body(&spec.body)?,
            axis,
            vector: spec.vector,
            reverse: !rev,
        };
        let c = self.scan(carry, carry_inputs, shape.clone());
        let first = if rev { trips as isize - 1 } else { 0 };
        let c0 = self.window(c, None, axis, first, 1);
        let mut out = vec![(init, self.reshape(c0, &init_shape))];
        let c_next = self.window(c, None, axis, -step, trips);
        let a = self.add(g, c_next);
        for i in 1..inputs.len() {
            let x_shape = self.shape(inputs[i]).to_vec();
            let mut full = shape.clone();
            let mut lane = init_shape.clone();
            if spec.vector {
                let w = x_shape[x_shape.len() - 1];
                if let (Some(f), Some(l)) = (full.last_mut(), lane.last_mut()) {
                    *f = w;
                    *l = w;
                }
            }
            let dummy = self.push(GOp::Zeros, lane);
            let mut map_inputs = vec![dummy, a, hp];
            map_inputs.extend_from_slice(&inputs[1..]);
            let map = ScanSpec {
                body: grad::input_body(&spec.body, i)?,
                axis,
                vector: spec.vector,
                reverse: false,
            };
            let gx = self.scan(map, map_inputs, full);
            out.push((inputs[i], self.reduce_to(gx, &x_shape)));
        }
        Ok(out)
    }
}

fn deps(op: &GOp) -> Vec<NodeId> {
    match op {
        GOp::Input(_) | GOp::Zeros => vec![],
        GOp::Scan(_, ins) => ins.clone(),
        GOp::Add(a, b) => vec![*a, *b],
        GOp::Window { x, fill, .. } => std::iter::once(*x).chain(*fill).collect(),
        GOp::BroadcastTo(x) | GOp::ReduceTo(x) | GOp::Reshape(x) => vec![*x],
    }
}
