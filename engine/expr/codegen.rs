//! The one WGSL code generator of the IR: every node a `let`, vectors unrolled into scalar
//! registers (`v{node}_{component}`, at most 16 per value), each operation written by
//! [`Unary::wgsl`](super::Unary::wgsl) / [`Binary::wgsl`](super::Binary::wgsl). The caller
//! says how a parameter's component is read (an input at its index, a state register) and
//! wraps the lines in its kernel: fused elementwise kernels and element-scan kernels both
//! emit their bodies here. A body emitted at [`Width::Vec4`] computes four neighbouring
//! elements per register (the vec4 form of fused kernels) from the same IR and op table.

use std::fmt::Write;

use super::ir::{Body, Id, Kind, Op};
pub use super::op::Width;

/// The WGSL helpers that some ops' expressions call (NaN bit tests, IEEE `pow`): a kernel
/// whose body [`needs_helpers`] includes them once at module scope.
pub const HELPERS: &str = include_str!("../../shaders/expr/special.wgsl");

/// True when `body` uses an op whose WGSL calls one of [`HELPERS`].
pub fn needs_helpers(body: &Body) -> bool {
    body.nodes.iter().any(|n| match n.op {
        Op::Unary(u, _) => u.uses_helpers(),
        Op::Binary(b, _, _) => b.uses_helpers(),
        Op::Reduce(r, _, _) => r == super::Reduce::Max,
        _ => false,
    })
}

/// [`HELPERS`] when `body` needs them, else nothing: what a kernel generator writes at
/// module scope before the body's functions.
pub fn helpers(body: &Body) -> &'static str {
    if needs_helpers(body) {
        HELPERS
    } else {
        ""
    }
}

/// Component `j` of node `k`'s register, broadcasting one-component values.
pub fn comp(body: &Body, k: Id, j: usize) -> String {
    if body.node(k).ty.lanes() == 1 {
        format!("v{}_0", k.0)
    } else {
        format!("v{}_{j}", k.0)
    }
}

/// Appends one `let v{k}_{j}: ty = ...;` line per node component to `out`, each indented by
/// `indent`, every register of width `w`; `param(i, j)` is the WGSL expression (of width `w`)
/// of parameter i's component j. The result's components are then
/// `comp(body, body.result, j)`.
pub fn emit(out: &mut String, body: &Body, indent: &str, w: Width, param: impl Fn(u16, usize) -> String) {
    for (idx, node) in body.nodes.iter().enumerate() {
        let ty = if node.ty.kind == Kind::Bool {
            w.bool_ty()
        } else {
            w.f32_ty()
        };
        for j in 0..node.ty.lanes() {
            let e = match node.op {
                Op::Param(i) => param(i, j),
                Op::Const(bits) if node.ty.kind == Kind::Bool => w.bool(bits != 0),
                Op::Const(bits) => w.f32(&format!("bitcast<f32>({bits}u)")),
                Op::Unary(u, x) => u.wgsl(&comp(body, x, j), w),
                Op::Binary(b, x, y) => b.wgsl(&comp(body, x, j), &comp(body, y, j), w),
                Op::Where(c, x, y) => format!(
                    "select({}, {}, {})",
                    comp(body, y, j),
                    comp(body, x, j),
                    comp(body, c, j)
                ),
                Op::Reduce(r, x, _) => {
                    let parts: Vec<String> = (0..body.node(x).ty.lanes()).map(|i| comp(body, x, i)).collect();
                    r.wgsl(&parts, w)
                }
                Op::Splat(x, _) => comp(body, x, 0),
            };
            let _ = writeln!(out, "{indent}let v{idx}_{j}: {ty} = {e};");
        }
    }
}
