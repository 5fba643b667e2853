//! The expression graph: nodes in topological order (SSA), each naming its operands by index,
//! over the IR's one op vocabulary ([`crate::expr`]). It lowers to an IR body whose
//! parameters are its inputs (a body without state), which the one interpreter evaluates and
//! the one code generator emits. The graph is its own cache key: equal graphs hash alike and
//! share one pipeline.

use crate::error::{Error, Result};
use crate::expr::{Binary, Unary};
use crate::expr::{Body, Interp, Kind, Ty};

/// Most nodes a fused graph may have: it becomes one straight-line WGSL expression, and
/// drivers' compilers slow down sharply (and overflow their stack) on very long ones. The
/// IR's limit ([`crate::expr::MAX_BODY_NODES`]).
pub const MAX_GRAPH_NODES: usize = crate::expr::MAX_BODY_NODES;

/// One node of a [`Graph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// Input tensor `i` (broadcast to the output shape).
    Input(usize),
    /// A constant, stored as f32 bits so the node hashes.
    Const(u32),
    /// A one-argument function of an earlier node.
    Unary(Unary, NodeId),
    /// A two-argument function of two earlier nodes.
    Binary(Binary, NodeId, NodeId),
}

/// A node's position in its graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeId(pub(crate) usize);

/// An elementwise expression over `inputs` tensors, compiled into one kernel by
/// [`super::run`]. Build it with the methods below; the last node added is the output.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Graph {
    pub(crate) nodes: Vec<Node>,
    pub(crate) inputs: usize,
}

impl Graph {
    /// An empty graph (no inputs, no nodes).
    pub fn new() -> Self {
        Graph::default()
    }

    fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        NodeId(self.nodes.len() - 1)
    }

    /// The next input tensor (inputs are numbered in the order they are declared).
    pub fn input(&mut self) -> NodeId {
        self.inputs += 1;
        self.push(Node::Input(self.inputs - 1))
    }

    /// A constant `v`, broadcast to the output shape.
    pub fn constant(&mut self, v: f32) -> NodeId {
        self.push(Node::Const(v.to_bits()))
    }

    /// `op(x)`.
    pub fn unary(&mut self, op: Unary, x: NodeId) -> NodeId {
        self.push(Node::Unary(op, x))
    }

    /// `op(x, y)`.
    pub fn binary(&mut self, op: Binary, x: NodeId, y: NodeId) -> NodeId {
        self.push(Node::Binary(op, x, y))
    }

    /// `x + y`.
    pub fn add(&mut self, x: NodeId, y: NodeId) -> NodeId {
        self.binary(Binary::Add, x, y)
    }

    /// `x * y`.
    pub fn mul(&mut self, x: NodeId, y: NodeId) -> NodeId {
        self.binary(Binary::Mul, x, y)
    }

    /// GELU, tanh form: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, as primitive nodes.
    pub fn gelu_tanh(&mut self, x: NodeId) -> NodeId {
        let x2 = self.mul(x, x);
        let x3 = self.mul(x2, x);
        let c = self.constant(0.044715);
        let cx3 = self.mul(c, x3);
        let inner = self.add(x, cx3);
        let k = self.constant(0.797_884_6);
        let u = self.mul(k, inner);
        let t = self.unary(Unary::Tanh, u);
        let one = self.constant(1.0);
        let s = self.add(one, t);
        let half = self.constant(0.5);
        let hx = self.mul(half, x);
        self.mul(hx, s)
    }

    /// The output node (the last one added).
    pub fn output(&self) -> Option<NodeId> {
        self.nodes.len().checked_sub(1).map(NodeId)
    }

    /// Number of input tensors.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Checks the graph [`super::run`] is given: at least one node, at most
    /// [`MAX_GRAPH_NODES`], every operand an earlier node of this graph (a `NodeId` taken
    /// from another graph is caught here), every input numbered below [`Graph::inputs`].
    pub fn validate(&self) -> Result<()> {
        let op = "fused";
        if self.nodes.is_empty() {
            return Err(Error::value(op, "graph", "at least one node", "an empty graph"));
        }
        if self.nodes.len() > MAX_GRAPH_NODES {
            return Err(Error::value(
                op,
                "graph",
                format!("at most {MAX_GRAPH_NODES} nodes"),
                self.nodes.len(),
            ));
        }
        for (k, node) in self.nodes.iter().enumerate() {
            let ok = match *node {
                Node::Input(i) => i < self.inputs,
                Node::Const(_) => true,
                Node::Unary(_, a) => a.0 < k,
                Node::Binary(_, a, b) => a.0 < k && b.0 < k,
            };
            if !ok {
                return Err(Error::value(
                    op,
                    "graph",
                    "operands that are earlier nodes of the same graph",
                    format!("node {k} is {node:?}"),
                ));
            }
        }
        Ok(())
    }

    /// The graph as an IR body: parameter i is input i (one parameter when there is no
    /// input), every node typed f32; a bool result (a comparison) becomes 0.0 / 1.0. An
    /// operation that does not take f32 operands (`not`, `and`, ..) is a type error.
    pub fn body(&self) -> Result<Body> {
        self.validate()?;
        let mut b = Body::builder(&vec![Ty::F32; self.inputs.max(1)]);
        let mut ids = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let at = |a: NodeId| ids[a.0];
            let id = match *node {
                Node::Input(i) => b.param(i),
                Node::Const(bits) => b.constant(f32::from_bits(bits)),
                Node::Unary(op, a) => b.unary(op, at(a))?,
                Node::Binary(op, x, y) => b.binary(op, at(x), at(y))?,
            };
            ids.push(id);
        }
        let mut out = ids[ids.len() - 1];
        if b.ty(out)?.kind == Kind::Bool {
            out = b.unary(Unary::ToF32, out)?;
        }
        b.finish(out)
    }

    /// Evaluates the graph at one point in f64 (the CPU reference) with the IR's interpreter.
    /// A graph that does not lower ([`Graph::body`]) or a missing input reads as NaN.
    pub fn eval(&self, inputs: &[f64]) -> f64 {
        let Ok(body) = self.body() else {
            return f64::NAN;
        };
        let args: Vec<[f64; 1]> = (0..body.params.len())
            .map(|i| [inputs.get(i).copied().unwrap_or(f64::NAN)])
            .collect();
        let refs: Vec<&[f64]> = args.iter().map(|a| &a[..]).collect();
        Interp::new(&body).call(&refs).map_or(f64::NAN, |r| r[0])
    }
}
