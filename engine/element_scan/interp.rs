//! The CPU interpreter of the body IR, in f64: the reference of every element-scan test and
//! the CPU context's implementation. Each trip of each lane is one interpreter call.

use super::ir::{Binary, Body, Kind, Op, Reduce, Unary};
use super::layout::ScanLayout;

/// Evaluates bodies trip by trip, reusing one value buffer.
pub(crate) struct Interp<'a> {
    body: &'a Body,
    /// Start of each node's components in `vals`.
    start: Vec<usize>,
    vals: Vec<f64>,
}

impl<'a> Interp<'a> {
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
        }
    }

    /// Component `j` of node `k`, broadcasting scalars and one-value vectors.
    fn get(&self, k: u32, j: usize) -> f64 {
        let k = k as usize;
        let lanes = self.body.nodes[k].ty.lanes();
        self.vals[self.start[k] + if lanes == 1 { 0 } else { j }]
    }

    /// Runs the body once. `args[i]` holds parameter i's components; returns the result's.
    pub fn call(&mut self, args: &[&[f64]]) -> &[f64] {
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
                    Op::Unary(u, x) => unary(u, self.get(x.0, j)),
                    Op::Binary(b, x, y) => binary(b, self.get(x.0, j), self.get(y.0, j)),
                    Op::Where(c, x, y) => {
                        if self.get(c.0, j) != 0.0 {
                            self.get(x.0, j)
                        } else {
                            self.get(y.0, j)
                        }
                    }
                    Op::Reduce(r, x, _) => {
                        let n = self.body.nodes[x.0 as usize].ty.lanes();
                        let it = (0..n).map(|i| self.get(x.0, i));
                        match r {
                            Reduce::Sum => it.sum(),
                            Reduce::Max => it.fold(f64::MIN, f64::max),
                        }
                    }
                    Op::Splat(x, _) => self.get(x.0, 0),
                };
                self.vals[self.start[k] + j] = v;
            }
        }
        let r = self.body.result.0 as usize;
        &self.vals[self.start[r]..self.start[r] + self.body.nodes[r].ty.lanes()]
    }
}

pub(crate) fn unary(u: Unary, x: f64) -> f64 {
    match u {
        Unary::Neg => -x,
        Unary::Exp => x.exp(),
        Unary::Log => x.ln(),
        Unary::Tanh => x.tanh(),
        Unary::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        Unary::Sqrt => x.sqrt(),
        Unary::Abs => x.abs(),
        Unary::Sin => x.sin(),
        Unary::Cos => x.cos(),
        Unary::Not => (x == 0.0) as u8 as f64,
        Unary::ToF32 => x,
        Unary::ToBool => (x != 0.0) as u8 as f64,
    }
}

pub(crate) fn binary(b: Binary, x: f64, y: f64) -> f64 {
    let t = |c: bool| c as u8 as f64;
    match b {
        Binary::Add => x + y,
        Binary::Sub => x - y,
        Binary::Mul => x * y,
        Binary::Div => x / y,
        Binary::Pow => x.powf(y),
        Binary::Max => x.max(y),
        Binary::Min => x.min(y),
        Binary::Lt => t(x < y),
        Binary::Le => t(x <= y),
        Binary::Gt => t(x > y),
        Binary::Ge => t(x >= y),
        Binary::Eq => t(x == y),
        Binary::Ne => t(x != y),
        Binary::And => t(x != 0.0 && y != 0.0),
        Binary::Or => t(x != 0.0 || y != 0.0),
    }
}

/// Runs the scan on host data. `inputs[0]` is the initial state, `inputs[1..]` the
/// sequences, each a dense row-major buffer read through `layout`'s views; returns the
/// dense output (the state after every trip).
pub(crate) fn run(body: &Body, layout: &ScanLayout, inputs: &[&[f32]]) -> Vec<f32> {
    let mut interp = Interp::new(body);
    let mut out = vec![0.0f32; layout.out_len()];
    let widths: Vec<usize> = body.params.iter().map(|t| t.lanes()).collect();
    let mut args: Vec<Vec<f64>> = widths.iter().map(|w| vec![0.0; *w]).collect();
    let n = widths[0];
    for lane in 0..layout.lanes() {
        let bases: Vec<usize> = layout.views.iter().map(|v| v.base(&layout.lane_shape, lane)).collect();
        let ov = &layout.views[layout.views.len() - 1];
        let iv = &layout.views[0];
        for j in 0..n {
            args[0][j] = inputs[0][bases[0] + j * iv.comp] as f64;
        }
        for i in 0..layout.trips {
            let t = if layout.reverse { layout.trips - 1 - i } else { i };
            for s in 1..inputs.len() {
                let v = &layout.views[s];
                for j in 0..widths[s] {
                    args[s][j] = inputs[s][bases[s] + t * v.trip + j * v.comp] as f64;
                }
            }
            let refs: Vec<&[f64]> = args.iter().map(|a| a.as_slice()).collect();
            let h = interp.call(&refs).to_vec();
            for j in 0..n {
                let hj = h[if h.len() == 1 { 0 } else { j }];
                out[bases[bases.len() - 1] + t * ov.trip + j * ov.comp] = hj as f32;
                args[0][j] = hj;
            }
        }
    }
    out
}
