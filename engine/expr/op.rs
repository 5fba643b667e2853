//! The one op vocabulary: every unary and binary operation of elementwise ops, fused graphs
//! and element-scan bodies, each with its f64 value (the interpreter's) and its WGSL
//! expression (the code generator's), side by side under one name.
//!
//! Bools travel as 0.0 / 1.0 in the interpreter and as `bool` in WGSL. The WGSL of an op is
//! written once for both widths of [`Width`]: a scalar register, or a `vec4` holding four
//! neighbouring elements (the vec4 form of fused kernels), which differ only in how a
//! literal is spelled (WGSL's builtins do not splat a scalar operand).

/// The register width the code generator emits an expression for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// `f32` / `bool`: one element.
    Scalar,
    /// `vec4<f32>` / `vec4<bool>`: four elements, every op applied componentwise.
    Vec4,
}

impl Width {
    /// The WGSL type of an f32 value.
    pub fn f32_ty(self) -> &'static str {
        match self {
            Self::Scalar => "f32",
            Self::Vec4 => "vec4<f32>",
        }
    }

    /// The WGSL type of a bool value.
    pub fn bool_ty(self) -> &'static str {
        match self {
            Self::Scalar => "bool",
            Self::Vec4 => "vec4<bool>",
        }
    }

    /// The f32 literal (or scalar expression) `v` at this width.
    pub fn f32(self, v: &str) -> String {
        match self {
            Self::Scalar => v.to_string(),
            Self::Vec4 => format!("vec4<f32>({v})"),
        }
    }

    /// The bool literal `v` at this width.
    pub fn bool(self, v: bool) -> String {
        match self {
            Self::Scalar => v.to_string(),
            Self::Vec4 => format!("vec4<bool>({v})"),
        }
    }
}

/// The float ops that `ops` has as functions, `Tensor` and `Var` as methods, each `name =>
/// variant`: one table, so a new op is named once. `float_unaries!(m)` expands to `m!(neg =>
/// Neg, ...)`; `float_binaries!(m)` likewise for the broadcasting two-argument ops.
macro_rules! float_unaries {
    ($m:ident) => {
        $m!(
            neg => Neg, exp => Exp, log => Log, tanh => Tanh, sqrt => Sqrt, abs => Abs, sigmoid => Sigmoid,
            relu => Relu, softplus => Softplus, sin => Sin, cos => Cos,
        );
    };
}
pub(crate) use float_unaries;

/// See [`float_unaries`].
macro_rules! float_binaries {
    ($m:ident) => {
        $m!(add => Add, sub => Sub, mul => Mul, div => Div, maximum => Max, minimum => Min, pow => Pow);
    };
}
pub(crate) use float_binaries;

/// A one-argument operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unary {
    /// `x` (the strided copy that makes a view dense).
    Identity,
    /// `-x`.
    Neg,
    /// `e^x`.
    Exp,
    /// Natural logarithm.
    Log,
    /// Hyperbolic tangent.
    Tanh,
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// Square root.
    Sqrt,
    /// Absolute value.
    Abs,
    /// `max(x, 0)`.
    Relu,
    /// `log(1 + e^x)`, computed as `max(x, 0) + log1p(e^-|x|)`: no overflow for any finite x
    /// (`softplus(1000) = 1000`, `softplus(-1000) = 0`) and full relative precision where
    /// it is tiny (`softplus(-50) = e^-50`; `shaders/expr/special.wgsl`,
    /// `softplus_stable`).
    Softplus,
    /// Sine (WGSL's `sin` in the generated code: accurate on [-pi, pi], see `docs/src/ops.md`,
    /// "Special values").
    Sin,
    /// Cosine (WGSL's `cos`, as [`Unary::Sin`]).
    Cos,
    /// bool -> bool.
    Not,
    /// bool -> f32 (1.0 or 0.0).
    ToF32,
    /// f32 -> bool (`x != 0`; NaN is true, -0.0 false).
    ToBool,
}

/// A two-argument operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binary {
    /// `x + y`.
    Add,
    /// `x - y`.
    Sub,
    /// `x * y`.
    Mul,
    /// `x / y`.
    Div,
    /// `x ^ y`.
    Pow,
    /// The larger of the two.
    Max,
    /// The smaller of the two.
    Min,
    /// `x < y` (bool).
    Lt,
    /// `x <= y` (bool).
    Le,
    /// `x > y` (bool).
    Gt,
    /// `x >= y` (bool).
    Ge,
    /// `x == y` (bool).
    Eq,
    /// `x != y` (bool).
    Ne,
    /// Logical and of two bools.
    And,
    /// Logical or of two bools.
    Or,
}

/// Reductions of a vector to a scalar (or a one-value vector with `keepdims`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduce {
    /// Sum of the components.
    Sum,
    /// Largest component.
    Max,
}

impl Unary {
    /// The f32 -> f32 operations that `ops::unary` runs on tensors, in table order.
    pub const ALL: [Unary; 10] = [
        Self::Identity,
        Self::Neg,
        Self::Exp,
        Self::Log,
        Self::Tanh,
        Self::Sqrt,
        Self::Abs,
        Self::Sigmoid,
        Self::Relu,
        Self::Softplus,
    ];

    /// The lowercase name (op names in errors, kernel names and IR dumps).
    pub fn name(self) -> &'static str {
        match self {
            Self::Identity => "identity",
            Self::Neg => "neg",
            Self::Exp => "exp",
            Self::Log => "log",
            Self::Tanh => "tanh",
            Self::Sigmoid => "sigmoid",
            Self::Sqrt => "sqrt",
            Self::Abs => "abs",
            Self::Relu => "relu",
            Self::Softplus => "softplus",
            Self::Sin => "sin",
            Self::Cos => "cos",
            Self::Not => "not",
            Self::ToF32 => "tof32",
            Self::ToBool => "tobool",
        }
    }

    /// The value in f64, as the reference computes it.
    pub fn eval(self, x: f64) -> f64 {
        match self {
            Self::Identity | Self::ToF32 => x,
            Self::Neg => -x,
            Self::Exp => x.exp(),
            Self::Log => x.ln(),
            Self::Tanh => x.tanh(),
            Self::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Self::Sqrt => x.sqrt(),
            Self::Abs => x.abs(),
            // NaN propagates (torch's rule): `f64::max` would return the other operand.
            Self::Relu => nan_or(x, x, || x.max(0.0)),
            Self::Softplus => nan_or(x, x, || x.max(0.0) + (-x.abs()).exp().ln_1p()),
            Self::Sin => x.sin(),
            Self::Cos => x.cos(),
            Self::Not => (x == 0.0) as u8 as f64,
            Self::ToBool => (x != 0.0) as u8 as f64,
        }
    }

    /// The WGSL expression of `self` applied to the expression `x` of width `w`.
    pub fn wgsl(self, x: &str, w: Width) -> String {
        let f = |v: &str| w.f32(v);
        match self {
            Self::Identity => x.to_string(),
            Self::Neg => format!("-({x})"),
            Self::Exp => format!("exp({x})"),
            Self::Log => format!("log({x})"),
            // tanh saturates in f32 long before 15; clamping keeps backends that compute it
            // from exp(2x) away from inf / inf. A clamp may turn NaN into a bound, so NaN is
            // passed through by a bit test (`is_nan_bits`, `shaders/expr/special.wgsl`).
            Self::Tanh => format!(
                "select(tanh(clamp({x}, {}, {})), {x}, {}({x}))",
                f("-15.0"),
                f("15.0"),
                nan_test(w)
            ),
            Self::Sigmoid => format!(
                "select((1.0 / (1.0 + exp(-clamp({x}, {}, {})))), {x}, {}({x}))",
                f("-88.0"),
                f("88.0"),
                nan_test(w)
            ),
            Self::Sqrt => format!("sqrt({x})"),
            Self::Abs => format!("abs({x})"),
            Self::Relu => format!("{}({x}, {})", max_fn(w), f("0.0")),
            Self::Softplus => match w {
                Width::Scalar => format!("softplus_stable({x})"),
                Width::Vec4 => format!("softplus_stable4({x})"),
            },
            Self::Sin => format!("sin({x})"),
            Self::Cos => format!("cos({x})"),
            Self::Not => format!("!({x})"),
            Self::ToF32 => format!("select({}, {}, {x})", f("0.0"), f("1.0")),
            // A bit test, not `x != 0.0`: a driver may fold the comparison assuming no NaN
            // (lavapipe took NaN for false), and NaN is true here as on the CPU.
            Self::ToBool => match w {
                Width::Scalar => format!("((bitcast<u32>({x}) & 0x7fffffffu) != 0u)"),
                Width::Vec4 => format!("((bitcast<vec4<u32>>({x}) & vec4<u32>(0x7fffffffu)) != vec4<u32>(0u))"),
            },
        }
    }
}

/// `x` when it is NaN, else `y` when it is NaN, else `f()`: the NaN-propagating form of
/// max and min (the first NaN operand comes back, as the WGSL helpers return it).
fn nan_or(x: f64, y: f64, f: impl FnOnce() -> f64) -> f64 {
    if x.is_nan() {
        x
    } else if y.is_nan() {
        y
    } else {
        f()
    }
}

/// The NaN-propagating max at width `w` (`shaders/expr/special.wgsl`).
fn max_fn(w: Width) -> &'static str {
    match w {
        Width::Scalar => "max_nan",
        Width::Vec4 => "max_nan4",
    }
}

/// The NaN-propagating min at width `w`.
fn min_fn(w: Width) -> &'static str {
    match w {
        Width::Scalar => "min_nan",
        Width::Vec4 => "min_nan4",
    }
}

/// The name of the NaN bit test at width `w` (`shaders/expr/special.wgsl`).
fn nan_test(w: Width) -> &'static str {
    match w {
        Width::Scalar => "is_nan_bits",
        Width::Vec4 => "is_nan_bits4",
    }
}

impl Unary {
    /// True when the WGSL of this op calls a helper of [`crate::expr::codegen::HELPERS`].
    pub fn uses_helpers(self) -> bool {
        matches!(self, Self::Tanh | Self::Sigmoid | Self::Relu | Self::Softplus)
    }
}

impl Binary {
    /// True when the WGSL of this op calls a helper of [`crate::expr::codegen::HELPERS`].
    pub fn uses_helpers(self) -> bool {
        matches!(self, Self::Pow | Self::Max | Self::Min)
    }
}

impl Binary {
    /// The f32 x f32 -> f32 operations that `ops::binary` runs on tensors, in table order.
    pub const ALL: [Binary; 7] = [
        Self::Add,
        Self::Sub,
        Self::Mul,
        Self::Div,
        Self::Max,
        Self::Min,
        Self::Pow,
    ];

    /// The lowercase name (op names in errors, kernel names and IR dumps).
    pub fn name(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Sub => "sub",
            Self::Mul => "mul",
            Self::Div => "div",
            Self::Pow => "pow",
            Self::Max => "max",
            Self::Min => "min",
            Self::Lt => "lt",
            Self::Le => "le",
            Self::Gt => "gt",
            Self::Ge => "ge",
            Self::Eq => "eq",
            Self::Ne => "ne",
            Self::And => "and",
            Self::Or => "or",
        }
    }

    /// True for `< <= > >= = !=` (f32 operands, bool result).
    pub fn is_comparison(self) -> bool {
        matches!(self, Self::Lt | Self::Le | Self::Gt | Self::Ge | Self::Eq | Self::Ne)
    }

    /// The value in f64, as the reference computes it.
    pub fn eval(self, x: f64, y: f64) -> f64 {
        let t = |c: bool| c as u8 as f64;
        match self {
            Self::Add => x + y,
            Self::Sub => x - y,
            Self::Mul => x * y,
            Self::Div => x / y,
            Self::Pow => x.powf(y),
            Self::Max => nan_or(x, y, || x.max(y)),
            Self::Min => nan_or(x, y, || x.min(y)),
            Self::Lt => t(x < y),
            Self::Le => t(x <= y),
            Self::Gt => t(x > y),
            Self::Ge => t(x >= y),
            Self::Eq => t(x == y),
            Self::Ne => t(x != y),
            Self::And => t(x != 0.0 && y != 0.0),
            Self::Or => t(x != 0.0 || y != 0.0),
        }
    }

    /// The WGSL expression of `self` applied to the expressions `x` and `y`, both of width `w`
    /// (no binary op writes a literal; `pow` calls the width's helper).
    pub fn wgsl(self, x: &str, y: &str, w: Width) -> String {
        let infix = |o: &str| format!("({x} {o} {y})");
        match self {
            Self::Add => infix("+"),
            Self::Sub => infix("-"),
            Self::Mul => infix("*"),
            Self::Div => infix("/"),
            // powf's special values (zeros, infinities, NaN, negative bases), which WGSL's
            // `pow` leaves undefined: `shaders/expr/special.wgsl`.
            Self::Pow => match w {
                Width::Scalar => format!("pow_ieee({x}, {y})"),
                Width::Vec4 => format!("pow_ieee4({x}, {y})"),
            },
            Self::Max => format!("{}({x}, {y})", max_fn(w)),
            Self::Min => format!("{}({x}, {y})", min_fn(w)),
            Self::Lt => infix("<"),
            Self::Le => infix("<="),
            Self::Gt => infix(">"),
            Self::Ge => infix(">="),
            Self::Eq => infix("=="),
            Self::Ne => infix("!="),
            Self::And => infix("&&"),
            Self::Or => infix("||"),
        }
    }
}

impl Reduce {
    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sum => "sum",
            Self::Max => "max",
        }
    }

    /// The reduction of `xs` in f64.
    pub fn eval(self, xs: impl Iterator<Item = f64>) -> f64 {
        match self {
            Self::Sum => xs.sum(),
            Self::Max => xs.fold(f64::NEG_INFINITY, |m, v| nan_or(m, v, || m.max(v))),
        }
    }

    /// The WGSL expression reducing the component expressions `parts` (at least one) of
    /// width `w`.
    pub fn wgsl(self, parts: &[String], w: Width) -> String {
        match self {
            Self::Sum => format!("({})", parts.join(" + ")),
            Self::Max => match parts.split_first() {
                Some((first, rest)) => rest
                    .iter()
                    .fold(first.clone(), |acc, p| format!("{}({acc}, {p})", max_fn(w))),
                None => String::from("0.0"),
            },
        }
    }
}
