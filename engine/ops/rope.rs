//! Rotary position embeddings (`shaders/ops/rope.wgsl`) and SwiGLU's gate, the elementwise
//! parts of a Llama-style block that are not plain unary or binary ops.

use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::expr::{Binary, Unary};
use crate::fused::{self, Graph};
use crate::kernel::{shader, KernelDef, Params};
use crate::shape::DType;
use crate::tensor::Tensor;

const ROPE: KernelDef = KernelDef::new("ops/rope", shader!("ops/rope.wgsl"), "rope");

/// Rotary position embedding in Hugging Face's rotate-half layout:
/// `x cos + rotate_half(x) sin`, rotate_half(x) = (-x2, x1) for the halves x1, x2 of the last
/// axis. x (T, heads, D) with D even, cos and sin (T, D) (each position's angles, the
/// frequencies repeated for both halves) -> (T, heads, D). One launch on a GPU context.
pub fn rope(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    rope_with(x, cos, sin, false)
}

/// The adjoint of [`rope`] in x (its backward): `g cos + rotate_half^T(g sin)`, with
/// rotate_half^T(y) = (y2, -y1). Shapes as for [`rope`].
pub fn rope_adjoint(g: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    rope_with(g, cos, sin, true)
}

fn rope_with(x: &Tensor, cos: &Tensor, sin: &Tensor, adjoint: bool) -> Result<Tensor> {
    let op = if adjoint { "rope_adjoint" } else { "rope" };
    let ctx = x.context();
    for (arg, t) in [("x", x), ("cos", cos), ("sin", sin)] {
        t.expect_dtype(op, arg, &[DType::F32])?;
        t.expect_context(ctx, op, arg)?;
    }
    let [t, heads, d] = *x.shape() else {
        return Err(Error::shape(op, "x", "(T, heads, D)", x.shape()));
    };
    if d % 2 != 0 {
        return Err(Error::shape(op, "x", "(T, heads, D) with D even", x.shape()));
    }
    for (arg, table) in [("cos", cos), ("sin", sin)] {
        if table.shape() != [t, d] {
            return Err(Error::shape(
                op,
                arg,
                format!("[{t}, {d}] (T and D of x)"),
                table.shape(),
            ));
        }
    }
    let Some(gpu) = ctx.gpu() else {
        // The host arrays in logical order (a view's elements gathered).
        let flat = |t: &Tensor| -> Result<Vec<f32>> { Ok(t.host(op)?.iter().copied().collect()) };
        let (xs, c, s) = (flat(x)?, flat(cos)?, flat(sin)?);
        let out = crate::reference::nn::rope(&xs, &c, &s, [t, heads, d], adjoint);
        return Tensor::from_slice(ctx, x.shape(), &out);
    };
    // Dense operands are read in place from their offsets (a column block of a fused
    // product's row, a row range of an angle table); others are copied dense first.
    let dense = |t: &Tensor| {
        if t.layout().is_dense() {
            Ok(t.clone())
        } else {
            t.contiguous()
        }
    };
    let (x, cos, sin) = (dense(x)?, dense(cos)?, dense(sin)?);
    let out = Tensor::uninit(ctx, x.shape(), op)?;
    let n = out.len();
    if n == 0 {
        return Ok(out);
    }
    let params = Params::new()
        .usize(n)
        .usize(heads)
        .usize(d)
        .u32(u32::from(adjoint))
        .usize(x.layout().offset)
        .usize(cos.layout().offset)
        .usize(sin.layout().offset);
    let buffers = [
        x.gpu_buffer(op)?,
        cos.gpu_buffer(op)?,
        sin.gpu_buffer(op)?,
        out.gpu_buffer(op)?,
    ];
    gpu.dispatch_items(&gpu.kernel(&ROPE, &[])?, &params, &buffers, n)?;
    Ok(out)
}

/// SwiGLU's gate: `silu(gate) * up = gate sigmoid(gate) up`, one fused launch. gate and up
/// (...) of one shape -> (...).
pub fn swiglu(gate: &Tensor, up: &Tensor) -> Result<Tensor> {
    let op = "swiglu";
    gate.expect_dtype(op, "gate", &[DType::F32])?;
    up.expect_dtype(op, "up", &[DType::F32])?;
    if gate.shape() != up.shape() {
        return Err(Error::mismatch(op, "gate", gate.shape(), "up", up.shape()));
    }
    static GRAPH: OnceLock<Graph> = OnceLock::new();
    let graph = GRAPH.get_or_init(|| {
        let mut g = Graph::new();
        let (a, b) = (g.input(), g.input());
        let s = g.unary(Unary::Sigmoid, a);
        let silu = g.binary(Binary::Mul, a, s);
        g.binary(Binary::Mul, silu, b);
        g
    });
    fused::run(graph, &[gate, up])
}
