//! Nonlinear element scans: a user body run as a recurrence at every lane of a tensor.
//!
//! `h[t] = f(h[t-1], x1[t], x2[t], ..)` from `h[-1] = initial`, independently at every
//! position outside the trip axis (a *lane*); the output holds the state after every trip.
//! The body is the engine's typed expression IR ([`crate::expr`]) written with the Rust [`Builder`] or as the
//! spec's s-expression text, compiled once into a WGSL kernel (one invocation per lane, the
//! state in registers, a loop over the trips) and cached under the hash of the IR. The CPU
//! interpreter of the IR is the reference and the CPU context's implementation.
//!
//! ```no_run
//! use wgsl_compute::element_scan::{spec_programs, Bindings, ElementScan};
//! use wgsl_compute::Context;
//! use ndarray::ArrayD;
//! let ctx = Context::new()?;
//! let x = ArrayD::<f32>::zeros(ndarray::IxDyn(&[2, 8, 3]));        // (batch, time, width)
//! let b = Bindings::new()
//!     .tensor("x", x.clone())
//!     .tensor("decay", ArrayD::from_elem(ndarray::IxDyn(&[3]), 0.9))  // broadcast to x
//!     .tensor("initial", ArrayD::zeros(ndarray::IxDyn(&[2, 3])));      // (batch, width)
//! // The spec's first program: (element-scan (lambda (h x a) (tanh (+ x (* a h)))) ..)
//! let scan = ElementScan::from_sexpr(spec_programs::TANH_SCAN, &b)?;
//! let h = scan.run(&ctx)?;                                              // (2, 8, 3)
//! let grads = scan.grad(&ctx, &ArrayD::ones(ndarray::IxDyn(&[2, 8, 3])))?;
//! let d_decay = &grads["decay"];                                        // (3,)
//! # Ok::<(), wgsl_compute::Error>(())
//! ```
//!
//! Inputs are host arrays (uploaded on every run) or tensors already on a device, views
//! included ([`Bindings::device`], [`ElementScan::from_body_tensors`],
//! [`ElementScan::with_input`], [`ElementScan::grad_tensor`]), read in place so a matmul's
//! output feeds a scan without a readback. On a GPU each scan runs through the one
//! recurrence launch (`crate::recurrence::launch`), which splits walks longer than a software
//! adapter's loop limit into several dispatches.
//!
//! Gradients ([`ElementScan::grad`]) are another element scan run in the opposite direction
//! over the saved states, plus pointwise scans and tensor ops (the `graph` module); they are
//! programs themselves ([`ElementScan::grad_program`]), so smooth bodies can be
//! differentiated again. The spec's three example programs live in [`spec_programs`].

mod body;
mod codegen;
pub mod diagnose;
mod eval;
mod forms;
mod grad;
mod graph;
mod interp;
mod launch;
mod layout;
pub(crate) mod reduce_to;
pub mod sexpr;
pub mod spec_programs;
mod window;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use ndarray::ArrayD;

pub use crate::expr::{Body, Builder, Id, Kind, Op, Reduce, Ty, MAX_BODY_NODES, MAX_PARAMS, MAX_WIDTH};
pub use body::MAX_LOWERED_FORMS;
pub use eval::{Bindings, Bound};
use graph::{GOp, Graph, NodeId, ScanSpec};

use crate::error::{Error, Result};
use crate::tensor::Tensor;
use crate::Context;

/// A program of element scans over named input tensors, ready to run on any context.
#[derive(Clone, Debug)]
pub struct ElementScan {
    graph: Graph,
    output: NodeId,
    /// Input tensors by name.
    feeds: Vec<(String, Feed)>,
}

/// One input's data: host data (uploaded on every run, to any context) or a tensor on a
/// device (read in place, views included, on its own context only).
#[derive(Clone, Debug)]
enum Feed {
    Host(ArrayD<f32>),
    Device(Tensor),
}

impl Feed {
    fn shape(&self) -> &[usize] {
        match self {
            Feed::Host(a) => a.shape(),
            Feed::Device(t) => t.shape(),
        }
    }

    /// The input as a tensor on `ctx`.
    fn on(&self, ctx: &Context) -> Result<Tensor> {
        match self {
            Feed::Host(a) => Tensor::from_array(ctx, a),
            Feed::Device(t) => {
                t.expect_context(ctx, "element_scan", "bound tensor")?;
                Ok(t.clone())
            }
        }
    }
}

/// How a body built with the Rust API is scanned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ElementScanOptions {
    /// The trip axis of the sequences (negative counts from the end).
    pub axis: i64,
    /// The state is a vector along the last axis (`:state-axis -1`).
    pub vector_state: bool,
    /// Trips run from the last position to the first (`:reverse true`).
    pub reverse: bool,
}

/// Gradients by input name, each of that input's shape.
pub type Gradients = BTreeMap<String, Tensor>;

/// The shape every sequence of a builder scan has once broadcast: the initial state's shape
/// with the trip axis inserted at `axis`, its length taken from the first sequence of full
/// rank (None when none has it or the axis is out of range: `scan_types` then says why).
fn full_sequence_shape(init: &[usize], seqs: &[(String, Feed)], axis: i64) -> Option<Vec<usize>> {
    let r = init.len() + 1;
    let ax = if axis < 0 { axis + r as i64 } else { axis };
    let ax = usize::try_from(ax).ok().filter(|&a| a < r)?;
    let trips = seqs.iter().map(|(_, f)| f.shape()).find(|s| s.len() == r)?[ax];
    let mut full = init.to_vec();
    full.insert(ax, trips);
    Some(full)
}

impl ElementScan {
    /// Reads a program in the spec's s-expression form; `bindings` name its tensors and
    /// numbers. Shapes and the body are checked here (errors carry the code and position).
    pub fn from_sexpr(text: &str, bindings: &Bindings) -> Result<Self> {
        let form = sexpr::read(text)?;
        let ev = eval::evaluate(&form, bindings)?;
        let feeds = bindings
            .items
            .iter()
            .filter_map(|(name, b)| match b {
                Bound::Tensor(a) | Bound::Parameter(a) => Some((name.clone(), Feed::Host(a.clone()))),
                Bound::Device(t) | Bound::DeviceParameter(t) => Some((name.clone(), Feed::Device(t.clone()))),
                _ => None,
            })
            .collect();
        Ok(ElementScan {
            graph: ev.graph,
            output: ev.output,
            feeds,
        })
    }

    /// One scan of a body built with [`Body::builder`]: `initial` (the sequences' shape
    /// without the trip axis) and `sequences` (each with the trip axis at `opts.axis`; with
    /// a vector state the last axis is each value's width). A sequence with fewer axes (a
    /// per-channel `(W,)` parameter) broadcasts numpy-style to the others' shape, as
    /// `(broadcast-to p (shape x))` in the text form, and its gradient comes back in its own
    /// shape. The inputs are named `initial` and `x1`, `x2`, .. for [`ElementScan::grad`].
    pub fn from_body(
        body: Body,
        opts: ElementScanOptions,
        initial: ArrayD<f32>,
        sequences: Vec<ArrayD<f32>>,
    ) -> Result<Self> {
        let feeds = std::iter::once(initial).chain(sequences).map(Feed::Host).collect();
        Self::from_body_feeds(body, opts, feeds)
    }

    /// [`ElementScan::from_body`] over tensors on a device (views included): the program
    /// reads them in place and runs on their context, so a matmul's output feeds a scan
    /// without a readback.
    pub fn from_body_tensors(
        body: Body,
        opts: ElementScanOptions,
        initial: &Tensor,
        sequences: &[&Tensor],
    ) -> Result<Self> {
        let feeds = std::iter::once(initial)
            .chain(sequences.iter().copied())
            .map(|t| Feed::Device(t.clone()))
            .collect();
        Self::from_body_feeds(body, opts, feeds)
    }

    fn from_body_feeds(body: Body, opts: ElementScanOptions, inputs: Vec<Feed>) -> Result<Self> {
        body.validate()?;
        let mut graph = Graph::default();
        let feeds: Vec<(String, Feed)> = inputs
            .into_iter()
            .enumerate()
            .map(|(i, f)| (if i == 0 { "initial".to_string() } else { format!("x{i}") }, f))
            .collect();
        let mut inputs: Vec<NodeId> = feeds.iter().map(|(n, a)| graph.input(n, a.shape())).collect();
        // A sequence of fewer axes (a per-channel (W,) parameter) broadcasts to the
        // sequences' shape, as `(broadcast-to p (shape x))` does in the text form: the graph
        // reads it in place, and its gradient is summed back to its own shape.
        let init_shape = feeds[0].1.shape().to_vec();
        let full = full_sequence_shape(&init_shape, &feeds[1..], opts.axis);
        for (k, (_, f)) in feeds.iter().enumerate().skip(1) {
            let s = f.shape();
            let Some(full) = full.as_ref().filter(|full| s.len() < full.len()) else {
                continue;
            };
            let mut target = full.clone();
            if let (true, Some(last), Some(&w)) = (opts.vector_state, target.last_mut(), s.last()) {
                *last = w; // a vector input keeps its own width
            }
            if crate::shape::broadcast_shape("element_scan", s, &target).is_ok_and(|b| b == target) {
                inputs[k] = graph.broadcast_to(inputs[k], &target);
            }
        }
        let seq_shapes: Vec<Vec<usize>> = inputs[1..].iter().map(|&i| graph.shape(i).to_vec()).collect();
        let (axis, vector, types, out) = eval::scan_types(
            feeds[0].1.shape(),
            &seq_shapes,
            opts.axis,
            opts.vector_state.then_some(-1),
        )
        .map_err(|(c, m)| crate::expr::ir::builder_error(c, m))?;
        if body.params != types {
            return Err(crate::expr::ir::builder_error(
                diagnose::code::TYPE,
                format!(
                    "the body's parameters are {:?}; these inputs give {:?}",
                    body.params, types
                ),
            ));
        }
        let spec = ScanSpec {
            body,
            axis,
            vector,
            reverse: opts.reverse,
        };
        let output = graph.scan(spec, inputs, out);
        Ok(ElementScan { graph, output, feeds })
    }

    /// The output's shape.
    pub fn shape(&self) -> &[usize] {
        self.graph.shape(self.output)
    }

    /// The names of the input tensors, in binding order.
    pub fn inputs(&self) -> Vec<&str> {
        self.feeds.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The same program with input `name` bound to `tensor`, a tensor on a device of the
    /// input's shape (views included): rerun a program on new device data without a readback.
    pub fn with_input(mut self, name: &str, tensor: &Tensor) -> Result<Self> {
        let op = "element_scan::with_input";
        let Some(slot) = self.feeds.iter_mut().find(|(n, _)| n == name) else {
            return Err(Error::value(op, "name", "the name of an input", name));
        };
        if slot.1.shape() != tensor.shape() {
            return Err(Error::shape(
                op,
                "tensor",
                format!("{:?}, the shape of input `{name}`", slot.1.shape()),
                tensor.shape(),
            ));
        }
        slot.1 = Feed::Device(tensor.clone());
        Ok(self)
    }

    fn upload(&self, ctx: &Context) -> Result<HashMap<String, Tensor>> {
        self.feeds.iter().map(|(n, f)| Ok((n.clone(), f.on(ctx)?))).collect()
    }

    /// Runs the program on `ctx` (a GPU, or the CPU interpreter) and returns its output.
    /// Inputs bound to device tensors must live on `ctx`.
    pub fn run(&self, ctx: &Context) -> Result<Tensor> {
        let feeds = self.upload(ctx)?;
        Ok(self.graph.eval(ctx, &feeds, &[self.output])?.remove(0))
    }

    /// The gradient of `sum(seed * output)` with respect to every input tensor (seed has the
    /// output's shape), each summed back to its input's shape.
    pub fn grad(&self, ctx: &Context, seed: &ArrayD<f32>) -> Result<Gradients> {
        self.grad_feed(ctx, Feed::Host(seed.clone()))
    }

    /// [`ElementScan::grad`] with the seed (the output's shape) a tensor on `ctx`: the
    /// gradients of a device-resident program without a readback.
    pub fn grad_tensor(&self, ctx: &Context, seed: &Tensor) -> Result<Gradients> {
        self.grad_feed(ctx, Feed::Device(seed.clone()))
    }

    fn grad_feed(&self, ctx: &Context, seed: Feed) -> Result<Gradients> {
        let (g, adj) = self.grad_graph(seed)?;
        let feeds = g.upload(ctx)?;
        // Inputs with a path to the output get their adjoint node; the others get zeros.
        let live: Vec<(&str, NodeId)> = self
            .feeds
            .iter()
            .filter_map(|(name, _)| self.input_node(name).and_then(|i| adj[i]).map(|id| (name.as_str(), id)))
            .collect();
        let ids: Vec<NodeId> = live.iter().map(|l| l.1).collect();
        let values = g.graph.eval(ctx, &feeds, &ids)?;
        let mut out: Gradients = live.iter().map(|l| l.0.to_string()).zip(values).collect();
        for (name, f) in &self.feeds {
            if !out.contains_key(name) {
                out.insert(name.clone(), Tensor::zeros(ctx, f.shape())?);
            }
        }
        Ok(out)
    }

    /// The graph node of the input named `name`.
    fn input_node(&self, name: &str) -> Option<NodeId> {
        self.graph
            .nodes
            .iter()
            .position(|n| matches!(&n.op, GOp::Input(s) if s == name))
    }

    fn grad_graph(&self, seed: Feed) -> Result<(ElementScan, Vec<Option<NodeId>>)> {
        if seed.shape() != self.shape() {
            return Err(Error::mismatch(
                "element_scan::grad",
                "seed",
                seed.shape(),
                "output",
                self.shape(),
            ));
        }
        let mut graph = self.graph.clone();
        let s = graph.input(SEED, seed.shape());
        let adj = graph.grad(self.output, s)?;
        let mut feeds = self.feeds.clone();
        feeds.push((SEED.into(), seed));
        Ok((
            ElementScan {
                graph,
                output: self.output,
                feeds,
            },
            adj,
        ))
    }

    /// A program whose output is the gradient of `sum(seed * output)` with respect to the
    /// input `wrt`, built from element scans and tensor ops: differentiate it again with
    /// [`ElementScan::grad`] for second derivatives of smooth bodies.
    pub fn grad_program(&self, wrt: &str, seed: &ArrayD<f32>) -> Result<ElementScan> {
        let (mut g, adj) = self.grad_graph(Feed::Host(seed.clone()))?;
        let Some((_, a)) = self.feeds.iter().find(|(n, _)| n == wrt) else {
            return Err(Error::value(
                "element_scan::grad_program",
                "wrt",
                "the name of an input",
                wrt,
            ));
        };
        g.output = match self.input_node(wrt).and_then(|i| adj[i]) {
            Some(node) => node,
            None => g.graph.push(GOp::Zeros, a.shape().to_vec()),
        };
        // The seed of this program is fixed data; later gradients treat it as an input too.
        let n = g.feeds.len();
        g.feeds[n - 1].0 = format!("{SEED}{n}");
        if let Some(node) = g
            .graph
            .nodes
            .iter_mut()
            .find(|x| matches!(&x.op, GOp::Input(s) if s == SEED))
        {
            node.op = GOp::Input(format!("{SEED}{n}"));
        }
        Ok(g)
    }

    /// The program's operations: every node, and under each `element_scan` node its body.
    pub fn ir(&self) -> String {
        let mut s = String::new();
        for (k, n) in self.graph.nodes.iter().enumerate() {
            let _ = match &n.op {
                GOp::Input(name) => writeln!(s, "t{k} = input {name} {:?}", n.shape),
                GOp::Zeros => writeln!(s, "t{k} = zeros {:?}", n.shape),
                GOp::Add(a, b) => writeln!(s, "t{k} = add t{a} t{b} {:?}", n.shape),
                GOp::Window { x, fill, axis, offset } => writeln!(
                    s,
                    "t{k} = window t{x} axis={axis} offset={offset}{} {:?}",
                    fill.map(|f| format!(" fill=t{f}")).unwrap_or_default(),
                    n.shape
                ),
                GOp::BroadcastTo(x) => writeln!(s, "t{k} = broadcast-to t{x} {:?}", n.shape),
                GOp::ReduceTo(x) => writeln!(s, "t{k} = reduce-to t{x} {:?}", n.shape),
                GOp::Reshape(x) => writeln!(s, "t{k} = reshape t{x} {:?}", n.shape),
                GOp::Scan(spec, ins) => {
                    let ins: Vec<String> = ins.iter().map(|i| format!("t{i}")).collect();
                    let _ = writeln!(
                        s,
                        "t{k} = element_scan({}) axis={} reverse={} state={} kernel={} {:?}",
                        ins.join(", "),
                        spec.axis,
                        spec.reverse,
                        spec.body.state(),
                        codegen::kernel_name(&spec.body, spec.reverse),
                        n.shape
                    );
                    let body = spec.body.to_string();
                    body.lines().try_for_each(|l| writeln!(s, "    {l}"))
                }
            };
        }
        let _ = writeln!(s, "output t{}", self.output);
        s
    }

    /// The generated WGSL of every scan in the program (for inspection and naga checks).
    pub fn wgsl(&self) -> Vec<String> {
        self.graph
            .nodes
            .iter()
            .filter_map(|n| match &n.op {
                GOp::Scan(spec, _) => Some(codegen::wgsl(&spec.body, spec.reverse)),
                _ => None,
            })
            .collect()
    }
}

/// The name the cotangent input takes in gradient graphs.
const SEED: &str = "__seed";
