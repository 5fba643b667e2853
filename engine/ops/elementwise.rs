//! Broadcasting elementwise ops: binary (add, sub, mul, div, max, min, pow) and unary
//! (neg, exp, log, tanh, sqrt, abs, sigmoid, relu), over any strided views.
//!
//! GPU: `shaders/elementwise/{binary,unary}.wgsl`, one pipeline per op (the op is a WGSL
//! `override`), shapes and strides in the uniform. CPU context: `reference::elementwise`.

use crate::error::Result;
use crate::kernel::{groups_1d, Binding, KernelDef, Params};
use crate::ops::broadcast::{broadcast_shape, broadcast_strides, check_rank, collapse, push_dims};
use crate::reference;
use crate::tensor::Tensor;

const BINARY: KernelDef = KernelDef {
    name: "elementwise/binary",
    wgsl: include_str!("../../shaders/elementwise/binary.wgsl"),
    entry: "binary",
    bindings: &[Binding::Uniform, Binding::Read, Binding::Read, Binding::ReadWrite],
};

const UNARY: KernelDef = KernelDef {
    name: "elementwise/unary",
    wgsl: include_str!("../../shaders/elementwise/unary.wgsl"),
    entry: "unary",
    bindings: &[Binding::Uniform, Binding::Read, Binding::ReadWrite],
};

/// A binary elementwise operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `x + y`.
    Add,
    /// `x - y`.
    Sub,
    /// `x * y`.
    Mul,
    /// `x / y`.
    Div,
    /// The larger of the two.
    Max,
    /// The smaller of the two.
    Min,
    /// `x ^ y`.
    Pow,
}

impl BinaryOp {
    /// Every operation, for tests and tables.
    pub const ALL: [BinaryOp; 7] = [
        Self::Add,
        Self::Sub,
        Self::Mul,
        Self::Div,
        Self::Max,
        Self::Min,
        Self::Pow,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Sub => "sub",
            Self::Mul => "mul",
            Self::Div => "div",
            Self::Max => "max",
            Self::Min => "min",
            Self::Pow => "pow",
        }
    }

    /// The value in f64, as the reference computes it.
    pub fn apply(self, x: f64, y: f64) -> f64 {
        match self {
            Self::Add => x + y,
            Self::Sub => x - y,
            Self::Mul => x * y,
            Self::Div => x / y,
            Self::Max => x.max(y),
            Self::Min => x.min(y),
            Self::Pow => x.powf(y),
        }
    }
}

/// A unary elementwise operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `x`.
    Identity,
    /// `-x`.
    Neg,
    /// `e^x`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Hyperbolic tangent.
    Tanh,
    /// Square root.
    Sqrt,
    /// Absolute value.
    Abs,
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// `max(x, 0)`.
    Relu,
}

impl UnaryOp {
    /// Every operation, for tests and tables.
    pub const ALL: [UnaryOp; 9] = [
        Self::Identity,
        Self::Neg,
        Self::Exp,
        Self::Log,
        Self::Tanh,
        Self::Sqrt,
        Self::Abs,
        Self::Sigmoid,
        Self::Relu,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::Identity => "identity",
            Self::Neg => "neg",
            Self::Exp => "exp",
            Self::Log => "log",
            Self::Tanh => "tanh",
            Self::Sqrt => "sqrt",
            Self::Abs => "abs",
            Self::Sigmoid => "sigmoid",
            Self::Relu => "relu",
        }
    }

    /// The value in f64, as the reference computes it.
    pub fn apply(self, x: f64) -> f64 {
        match self {
            Self::Identity => x,
            Self::Neg => -x,
            Self::Exp => x.exp(),
            Self::Log => x.ln(),
            Self::Tanh => x.tanh(),
            Self::Sqrt => x.sqrt(),
            Self::Abs => x.abs(),
            Self::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Self::Relu => x.max(0.0),
        }
    }
}

/// `op(a, b)` with numpy broadcasting: shapes align at the last axis and size-1 axes stretch.
/// a (..., shape_a), b (..., shape_b) -> (broadcast shape).
pub fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let name = op.name();
    let ctx = a.context();
    b.expect_context(ctx, name, "rhs")?;
    let shape = broadcast_shape(name, a.shape(), b.shape())?;
    let Some(gpu) = ctx.gpu() else {
        let (x, y) = (a.host(name)?, b.host(name)?);
        return Tensor::from_host(ctx, reference::elementwise::binary(op, &x.view(), &y.view())?);
    };
    let out = Tensor::uninit(ctx, &shape, name)?;
    let (dims, strides) = collapse(
        &shape,
        &[
            broadcast_strides(a.layout(), &shape),
            broadcast_strides(b.layout(), &shape),
        ],
    );
    check_rank(name, &dims)?;
    let params = Params::new()
        .usize(out.len())
        .usize(dims.len())
        .usize(a.layout().offset)
        .usize(b.layout().offset);
    let params = push_dims(push_dims(push_dims(params, &dims), &strides[0]), &strides[1]);
    let kernel = gpu.kernel(&BINARY, &[("OP", op as u32 as f64)])?;
    let buffers = [a.gpu_buffer(name)?, b.gpu_buffer(name)?, out.gpu_buffer(name)?];
    gpu.dispatch(&kernel, &params, &buffers, groups_1d(out.len().div_ceil(256) as u32))?;
    Ok(out)
}

/// `op(x)` elementwise; the output is dense whatever the view of x. x (...) -> (...).
pub fn unary(op: UnaryOp, x: &Tensor) -> Result<Tensor> {
    let name = op.name();
    let ctx = x.context();
    let Some(gpu) = ctx.gpu() else {
        return Tensor::from_host(ctx, reference::elementwise::unary(op, &x.host(name)?.view()));
    };
    let out = Tensor::uninit(ctx, x.shape(), name)?;
    let (dims, strides) = collapse(x.shape(), &[x.layout().strides.clone()]);
    check_rank(name, &dims)?;
    let params = Params::new()
        .usize(out.len())
        .usize(dims.len())
        .usize(x.layout().offset)
        .u32(0);
    let params = push_dims(push_dims(params, &dims), &strides[0]);
    let kernel = gpu.kernel(&UNARY, &[("OP", op as u32 as f64)])?;
    gpu.dispatch(
        &kernel,
        &params,
        &[x.gpu_buffer(name)?, out.gpu_buffer(name)?],
        groups_1d(out.len().div_ceil(256) as u32),
    )?;
    Ok(out)
}

macro_rules! binary_fns {
    ($($fn_name:ident => $op:ident),* $(,)?) => {$(
        #[doc = concat!("Elementwise `", stringify!($fn_name), "` with broadcasting; see [`binary`].")]
        pub fn $fn_name(a: &Tensor, b: &Tensor) -> Result<Tensor> {
            binary(BinaryOp::$op, a, b)
        }
    )*};
}

macro_rules! unary_fns {
    ($($fn_name:ident => $op:ident),* $(,)?) => {$(
        #[doc = concat!("Elementwise `", stringify!($fn_name), "`; see [`unary`].")]
        pub fn $fn_name(x: &Tensor) -> Result<Tensor> {
            unary(UnaryOp::$op, x)
        }
    )*};
}

binary_fns!(add => Add, sub => Sub, mul => Mul, div => Div, maximum => Max, minimum => Min, pow => Pow);
unary_fns!(neg => Neg, exp => Exp, log => Log, tanh => Tanh, sqrt => Sqrt, abs => Abs, sigmoid => Sigmoid, relu => Relu);
