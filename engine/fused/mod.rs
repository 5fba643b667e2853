//! Fused elementwise kernels: an expression [`Graph`] over broadcast, strided inputs, lowered
//! to the one expression IR ([`crate::expr`]) as a body without state and compiled into ONE
//! WGSL kernel, cached under a name holding the graph's hash (shapes travel in the uniform, so
//! one pipeline serves every shape). GELU, bias + GELU and residual adds are one launch each;
//! `ops::unary` and `ops::binary` are one-node graphs. CPU context: the IR's f64 interpreter
//! per element.
//!
//! Two forms of each kernel come from the one body (`codegen`): where every input is dense
//! along the last axis from a 16-byte boundary or constant along it, and the last axis is a
//! multiple of 4 (or the only axis), the vec4 form loads and stores `vec4`s, four per input
//! per invocation, with the `n % 4` elements past the last full `vec4` done one at a time;
//! any other layout (a transposed view, an offset off the 16-byte grid, a row of odd length
//! under a broadcast) runs the scalar form, one element per invocation. The dense copy
//! `ops::unary(Unary::Identity, ..)` is the vec4 form of the identity body.
//!
//! # Where a fused kernel belongs
//!
//! "Fused" names five places in the engine, one rule placing each:
//!
//! - **Generated elementwise graphs: here.** Any composition of unary and binary ops over
//!   broadcast inputs is built as a [`Graph`] (or an [`expr`](crate::expr) body) and never
//!   written by hand: this module generates, caches and launches its one kernel, and a plan
//!   capture fuses chains of elementwise ops through it by itself.
//! - **An op's own epilogue or neighbour: next to the op.** The bias, GELU and residual
//!   epilogue of the products is part of the matmul kernels' uniform and WGSL
//!   (`shaders/ops/matmul/common.wgsl`), so it lives in [`ops::matmul`](mod@crate::ops::matmul); a
//!   row op fused with the op before it lives beside the op it extends
//!   ([`ops::linear_residual_layer_norm`](crate::ops::linear_residual_layer_norm) in
//!   `ops/layer_norm.rs`: the norm's kernel sums the product's split-K slices); a scan fused
//!   with the construction of its transitions lives beside its family (`mixer/fused.rs`, the
//!   rotation mixers' angle-fused scan, on the scans' recurrence launch).
//! - **A kernel only one model's step uses: in the model.** GPT-2's decode-step kernels
//!   (layer norm fused into the projections, the cache write, the device sampler) read the
//!   model's decode state and KV-cache layout, which no op should know: `models/gpt2/decode.rs`,
//!   their WGSL in `shaders/models/gpt2/`.
//!
//! Why not one folder: layers only look down (`tests/layering.rs`). This module sits below
//! `ops`, so it cannot name a matmul; an epilogue changes its op's kernels and uniform, so it
//! belongs with them; and a model's kernels sit above every op they replace. A new fused op
//! goes to the first of the three places its kernel fits.
//!
//! ```
//! use wgsl_compute::fused::{self, Graph};
//! use wgsl_compute::Unary; // the one op vocabulary, `expr::Unary`
//! use wgsl_compute::{Context, Tensor};
//! // y = exp(-x) * b, with b broadcast along the rows: one kernel on a GPU context.
//! let mut g = Graph::new();
//! let (x, b) = (g.input(), g.input());
//! let e = g.unary(Unary::Neg, x);
//! let e = g.unary(Unary::Exp, e);
//! g.mul(e, b);
//! let ctx = Context::cpu();
//! let x = Tensor::from_slice(&ctx, &[2, 2], &[0.0, 0.0, 0.0, 0.0])?;
//! let b = Tensor::from_slice(&ctx, &[2], &[2.0, 3.0])?;
//! assert_eq!(fused::run(&g, &[&x, &b])?.to_vec()?, vec![2.0, 3.0, 2.0, 3.0]);
//! println!("{}", fused::wgsl(&g)?); // the generated kernel
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

mod codegen;
mod graph;

use std::borrow::Cow;
use std::hash::{DefaultHasher, Hash, Hasher};

use ndarray::{ArrayD, IxDyn};

pub use graph::{Graph, Node, NodeId, MAX_GRAPH_NODES};

use std::sync::Arc;

use crate::context::gpu::{CapturedDispatch, Gpu};
use crate::error::{Error, Result};
use crate::expr::{Body, Interp};
use crate::kernel::{groups_1d, push_dims, Binding, Kernel, KernelKey, KernelSource, Params};
use crate::shape::{broadcast_shape, broadcast_strides, check_rank, collapse, vec4_reads, Vec4Read};
use crate::tensor::Tensor;

/// The WGSL of the scalar form that [`run`] compiles for `graph` (for inspection and tests);
/// an error for a graph that [`Graph::body`] rejects or that has no input.
pub fn wgsl(graph: &Graph) -> Result<String> {
    if graph.inputs == 0 {
        return Err(Error::value("fused", "graph", "at least one input", 0));
    }
    Ok(codegen::wgsl(&graph.body()?, graph.inputs))
}

/// The WGSL of the vec4 form that [`run`] compiles for `graph` when its inputs read as
/// `reads` (one per input; see [`vec4_reads`]).
pub fn wgsl_vec4(graph: &Graph, reads: &[Vec4Read]) -> Result<String> {
    if graph.inputs == 0 || reads.len() != graph.inputs {
        return Err(Error::value(
            "fused",
            "reads",
            format!("one per graph input ({}, at least one)", graph.inputs),
            reads.len(),
        ));
    }
    Ok(codegen::wgsl_vec4(&graph.body()?, reads))
}

/// Evaluates `graph` elementwise over `inputs` (broadcast numpy-style to one shape) in one
/// kernel launch. inputs: one tensor per `Graph::input`, any strided views -> (broadcast shape).
pub fn run(graph: &Graph, inputs: &[&Tensor]) -> Result<Tensor> {
    let op = "fused";
    graph.validate()?;
    if inputs.len() != graph.inputs || inputs.is_empty() {
        return Err(Error::value(
            op,
            "inputs",
            format!("{} tensors (one per graph input, at least one)", graph.inputs),
            inputs.len(),
        ));
    }
    let body = graph.body()?;
    let mut h = DefaultHasher::new();
    graph.hash(&mut h);
    run_body(&body, inputs, op, &format!("fused/{:016x}", h.finish()))
}

/// Runs an IR body without state elementwise over `inputs` (parameter k reads input k,
/// broadcast numpy-style to one shape) in one kernel launch cached under `kernel`; errors
/// name `op`. The body's result is an f32 scalar. The path of [`run`] and of
/// `ops::unary` / `ops::binary`. inputs: any strided views -> (broadcast shape).
pub(crate) fn run_body(body: &Body, inputs: &[&Tensor], op: &'static str, kernel: &str) -> Result<Tensor> {
    debug_assert_eq!(body.params.len(), inputs.len());
    let Some(first) = inputs.first() else {
        return Err(Error::value(op, "inputs", "at least one tensor", 0));
    };
    let ctx = first.context();
    let mut shape = first.shape().to_vec();
    for t in inputs {
        t.expect_dtype(op, "inputs", &[crate::DType::F32])?;
    }
    for t in &inputs[1..] {
        t.expect_context(ctx, op, "inputs")?;
        shape = broadcast_shape(op, &shape, t.shape())?;
    }
    let Some(gpu) = ctx.gpu() else {
        let hosts = inputs.iter().map(|t| t.host(op)).collect::<Result<Vec<_>>>()?;
        let views = hosts
            .iter()
            .map(|h| {
                h.broadcast(IxDyn(&shape))
                    .ok_or_else(|| Error::mismatch(op, "input", h.shape(), "output", &shape))
            })
            .collect::<Result<Vec<_>>>()?;
        let n: usize = shape.iter().product();
        let iters: Vec<Vec<f64>> = views.iter().map(|v| v.iter().map(|&x| x as f64).collect()).collect();
        let mut interp = Interp::new(body);
        let mut args: Vec<[f64; 1]> = vec![[0.0]; iters.len()];
        let data: Vec<f32> = (0..n)
            .map(|i| {
                for (a, v) in args.iter_mut().zip(&iters) {
                    a[0] = v[i];
                }
                let refs: Vec<&[f64]> = args.iter().map(|a| &a[..]).collect();
                Ok(interp.call(&refs)?[0] as f32)
            })
            .collect::<Result<_>>()?;
        let out = ArrayD::from_shape_vec(IxDyn(&shape), data)
            .map_err(|e| Error::value(op, "output", "sizes that agree", e))?;
        return Tensor::from_host(ctx, out);
    };
    // Every input plus the output is a storage binding.
    let limit = gpu.info.max_storage_buffers as usize;
    if inputs.len() + 1 > limit {
        return Err(Error::Fallback {
            op,
            reason: format!(
                "{} inputs + 1 output exceed the adapter's {limit} storage buffers",
                inputs.len()
            ),
        });
    }
    let out = Tensor::uninit(ctx, &shape, op)?;
    if out.is_empty() {
        return Ok(out);
    }
    let mut l = launch(gpu, body, inputs, &out, op, kernel, true)?;
    // The tuner may measure the scalar form faster where the vec4 form is the rule: the same
    // expression on each element either way, so the same bits.
    if let Some(reads) = l.vec4.clone() {
        let form = ctx.choose(
            crate::tune::Family::Elementwise,
            || {
                let reads: String = reads
                    .iter()
                    .map(|x| if *x == Vec4Read::Vec4 { 'v' } else { 's' })
                    .collect();
                let n = out.len();
                crate::tune::key::shape_key(&[("n", n)], &[("n", n)], &[kernel, &reads])
            },
            true,
            &[false],
            |vec4| if vec4 { "vec4" } else { "scalar" },
            |vec4| {
                let out = Tensor::uninit(ctx, &shape, op)?;
                let l = launch(gpu, body, inputs, &out, op, kernel, vec4)?;
                let refs: Vec<&wgpu::Buffer> = l.buffers.iter().collect();
                gpu.dispatch_items(&l.kernel, &l.params, &refs, l.invocations)
            },
        );
        if !form {
            l = launch(gpu, body, inputs, &out, op, kernel, false)?;
        }
    }
    let refs: Vec<&wgpu::Buffer> = l.buffers.iter().collect();
    gpu.dispatch_items(&l.kernel, &l.params, &refs, l.invocations)?;
    // Inside a plan capture the dispatch keeps what it computes, so the plan can fuse it
    // into the elementwise kernel that reads it (`fuse_captured`).
    gpu.with_capture(|c| {
        if let Some(dispatch) = c.dispatches.last_mut() {
            dispatch.fusible = Some(Box::new(Deferred {
                body: body.clone(),
                inputs: inputs.iter().map(|t| (*t).clone()).collect(),
                out: out.clone(),
                op,
            }));
        }
    });
    Ok(out)
}

/// One launch of a body: the kernel, its uniform, its storage buffers (inputs, then the
/// output) and how many invocations it runs.
struct Launch {
    kernel: Arc<Kernel>,
    params: Params,
    buffers: Vec<wgpu::Buffer>,
    invocations: usize,
    /// The vec4 form's reads, `None` for the scalar form.
    vec4: Option<Vec<Vec4Read>>,
}

/// The launch of `body` elementwise over `inputs` broadcast to `out`'s shape, cached as
/// `kernel` (scalar form) or `kernel/vec4_<reads>` (vec4 form, where every input's layout
/// allows it: [`vec4_reads`], and `vec4` allows it).
fn launch(
    gpu: &Gpu,
    body: &Body,
    inputs: &[&Tensor],
    out: &Tensor,
    op: &'static str,
    kernel: &str,
    vec4: bool,
) -> Result<Launch> {
    let shape = out.shape();
    let strides: Vec<Vec<usize>> = inputs
        .iter()
        .map(|t| broadcast_strides(t.layout(), shape))
        .collect::<Result<_>>()?;
    let (dims, strides) = collapse(shape, &strides)?;
    check_rank(op, &dims)?;
    let offsets: Vec<usize> = inputs.iter().map(|t| t.layout().offset).collect();
    let mut params = Params::new().usize(out.len()).usize(dims.len()).u32(0).u32(0);
    params = push_dims(params, &dims);
    for k in 0..inputs.len().div_ceil(4) * 4 {
        params = params.usize(offsets.get(k).copied().unwrap_or(0));
    }
    for s in &strides {
        params = push_dims(params, s);
    }
    let mut buffers = inputs
        .iter()
        .map(|t| t.gpu_buffer(op).cloned())
        .collect::<Result<Vec<_>>>()?;
    buffers.push(out.gpu_buffer(op)?.clone());
    // The vec4 form addresses a view's last, partial vec4: buffers must end on 16 bytes (the
    // pool's sizes all do; the check keeps a foreign buffer on the scalar form).
    let reads = vec4_reads(&dims, &strides, &offsets).filter(|_| vec4 && buffers.iter().all(|b| b.size() % 16 == 0));
    let name = match &reads {
        Some(r) => format!(
            "{kernel}/vec4_{}",
            r.iter()
                .map(|x| if *x == Vec4Read::Vec4 { 'v' } else { 's' })
                .collect::<String>()
        ),
        None => kernel.to_string(),
    };
    let key = KernelKey {
        name: Cow::Owned(name),
        entry: Cow::Borrowed("main"),
        constants: vec![],
    };
    let kernel = gpu.kernels.get(&gpu.device, &key, || {
        let mut bindings = vec![Binding::Uniform];
        bindings.extend(std::iter::repeat_n(Binding::Read, inputs.len()));
        bindings.push(Binding::ReadWrite);
        let wgsl = match &reads {
            Some(r) => codegen::wgsl_vec4(body, r),
            None => codegen::wgsl(body, inputs.len()),
        };
        Ok(KernelSource {
            wgsl: Cow::Owned(wgsl),
            bindings,
        })
    })?;
    let invocations = match reads {
        Some(_) => codegen::vec4_invocations(out.len()),
        None => out.len(),
    };
    Ok(Launch {
        kernel,
        params,
        buffers,
        invocations,
        vec4: reads,
    })
}

/// A captured elementwise dispatch: what it computes, from which tensors, into which.
struct Deferred {
    body: Body,
    inputs: Vec<Tensor>,
    out: Tensor,
    op: &'static str,
}

/// The fusion pass of a plan capture (`crate::plan::Plan::capture`): every captured
/// elementwise dispatch B that reads the output of an earlier one A absorbs A's expression
/// (`Body::substitute`) when nothing else can see A's output: no other dispatch binds it, no
/// tensor outside the two holds it (the capture's result included), and no dispatch between
/// them writes one of A's inputs. A then disappears, and chains fold into one kernel. Returns
/// how many dispatches it removed.
pub(crate) fn fuse_captured(gpu: &Gpu, dispatches: &mut Vec<CapturedDispatch>) -> Result<usize> {
    let limit = gpu.info.max_storage_buffers as usize;
    let mut removed = vec![false; dispatches.len()];
    for b in 0..dispatches.len() {
        while let Some((a, k)) = producer(dispatches, &removed, b, limit) {
            let (Some(da), Some(db)) = (deferred(&dispatches[a]), deferred(&dispatches[b])) else {
                break;
            };
            let Ok(body) = db.body.substitute(k, &da.body) else {
                break;
            };
            let mut inputs: Vec<Tensor> = db
                .inputs
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != k)
                .map(|(_, t)| t.clone())
                .collect();
            inputs.extend(da.inputs.iter().cloned());
            let refs: Vec<&Tensor> = inputs.iter().collect();
            let name = format!("fused/{:016x}", body.hash64());
            let (out, op) = (db.out.clone(), db.op);
            let l = launch(gpu, &body, &refs, &out, op, &name, true)?;
            let per_group = l.kernel.workgroup_size[0].max(1) as usize;
            let groups = groups_1d(u32::try_from(l.invocations.div_ceil(per_group)).unwrap_or(u32::MAX));
            dispatches[b] = CapturedDispatch {
                params: Some(l.params.bytes()),
                kernel: l.kernel,
                buffers: l.buffers,
                groups,
                fusible: Some(Box::new(Deferred { body, inputs, out, op })),
            };
            dispatches[a].fusible = None;
            removed[a] = true;
        }
    }
    let before = dispatches.len();
    let mut keep = removed.iter().map(|r| !r);
    dispatches.retain(|_| keep.next().unwrap_or(true));
    Ok(before - dispatches.len())
}

fn deferred(dispatch: &CapturedDispatch) -> Option<&Deferred> {
    dispatch.fusible.as_ref().and_then(|p| p.downcast_ref::<Deferred>())
}

/// An earlier captured elementwise dispatch `a` whose output input `k` of dispatch `b` reads,
/// and that `b` may absorb (see [`fuse_captured`]).
fn producer(dispatches: &[CapturedDispatch], removed: &[bool], b: usize, limit: usize) -> Option<(usize, usize)> {
    let db = deferred(&dispatches[b])?;
    for (k, input) in db.inputs.iter().enumerate() {
        let buf = input.buffer()?;
        let Some(a) = (0..b)
            .rev()
            .find(|&a| !removed[a] && dispatches[a].buffers.iter().any(|x| x == buf))
        else {
            continue;
        };
        let Some(da) = deferred(&dispatches[a]) else { continue };
        let only_here = da.out.buffer() == Some(buf)
            && da.out.layout() == input.layout()
            // A's own handle and this input: nobody else holds the output.
            && da.out.handles() == 2
            && dispatches.iter().enumerate().all(|(j, x)| j == a || j == b || removed[j] || !x.buffers.iter().any(|y| y == buf));
        let inputs_unchanged = (a + 1..b).filter(|&j| !removed[j]).all(|j| {
            let dispatch = &dispatches[j];
            let storage = dispatch.kernel.bindings.iter().filter(|x| **x != Binding::Uniform);
            storage.zip(&dispatch.buffers).all(|(kind, written)| {
                *kind != Binding::ReadWrite || !da.inputs.iter().any(|t| t.buffer() == Some(written))
            })
        });
        let fits = db.inputs.len() - 1 + da.inputs.len() < limit;
        if only_here && inputs_unchanged && fits {
            return Some((a, k));
        }
    }
    None
}

/// `gelu_tanh(x)`: one input.
pub fn gelu_graph() -> Graph {
    let mut g = Graph::new();
    let x = g.input();
    g.gelu_tanh(x);
    g
}

/// `gelu_tanh(x + bias)`: inputs x, bias.
pub fn bias_gelu_graph() -> Graph {
    let mut g = Graph::new();
    let (x, b) = (g.input(), g.input());
    let s = g.add(x, b);
    g.gelu_tanh(s);
    g
}

/// `x + y + bias` (a residual add with the projection's bias folded in): inputs x, y, bias.
pub fn residual_bias_graph() -> Graph {
    let mut g = Graph::new();
    let (x, y, b) = (g.input(), g.input(), g.input());
    let s = g.add(y, b);
    g.add(x, s);
    g
}
