//! The tensor ops' rules: elementwise (each unary and binary op, broadcasting, a fused
//! graph), products, row ops, views, attention, embedding and cross-entropy.

use wgsl_compute::autograd::Var;
use wgsl_compute::expr::{Binary, Unary};
use wgsl_compute::fused;

use super::{check, input, CROSS};

#[test]
fn autograd_unary_ops_match_finite_differences() {
    let cases: &[(Unary, f64, f64)] = &[
        (Unary::Neg, -1.0, 1.0),
        (Unary::Exp, -1.0, 1.0),
        (Unary::Log, 0.5, 2.0),
        (Unary::Tanh, -1.0, 1.0),
        (Unary::Sqrt, 0.5, 2.0),
        (Unary::Abs, 0.1, 1.0),
        (Unary::Sigmoid, -2.0, 2.0),
        (Unary::Relu, 0.1, 1.0),
        (Unary::Sin, -2.0, 2.0),
        (Unary::Cos, -2.0, 2.0),
    ];
    for (i, &(op, lo, hi)) in cases.iter().enumerate() {
        check(op.name(), 100 + i as u64, &[input(&[3, 5], lo, hi)], CROSS, |v| {
            v[0].unary(op)
        });
        // The negative side of abs and relu.
        if matches!(op, Unary::Abs | Unary::Relu) {
            check(op.name(), 200 + i as u64, &[input(&[3, 5], -1.0, -0.1)], CROSS, |v| {
                v[0].unary(op)
            });
        }
    }
    check("gelu", 111, &[input(&[2, 3, 7], -2.0, 2.0)], CROSS, |v| v[0].gelu());
    check("scale", 112, &[input(&[3, 5], -1.0, 1.0)], CROSS, |v| v[0].scale(-2.5));
}

#[test]
fn autograd_binary_ops_sum_over_broadcast_axes() {
    // (op, shape of a, shape of b, range of both)
    type Case = (Binary, [usize; 2], [usize; 2], f64, f64);
    let cases: &[Case] = &[
        (Binary::Add, [3, 5], [1, 5], -1.0, 1.0),
        (Binary::Sub, [3, 5], [3, 1], -1.0, 1.0),
        (Binary::Mul, [3, 5], [3, 5], -1.0, 1.0),
        (Binary::Div, [3, 5], [1, 5], 0.5, 2.0),
        (Binary::Pow, [3, 5], [3, 1], 0.5, 2.0),
        (Binary::Max, [3, 5], [3, 5], -1.0, 1.0),
        (Binary::Min, [3, 5], [3, 5], -1.0, 1.0),
    ];
    for (i, &(op, a, b, lo, hi)) in cases.iter().enumerate() {
        let inputs = [input(&a, lo, hi), input(&b, lo, hi)];
        check(op.name(), 300 + i as u64, &inputs, CROSS, |v| v[0].binary(op, &v[1]));
    }
    // A rank-1 operand against a rank-3 one, and a variable used twice.
    let inputs = [input(&[2, 3, 7], -1.0, 1.0), input(&[7], -1.0, 1.0)];
    check("mul (2, 3, 7) * (7,)", 310, &inputs, CROSS, |v| v[0].mul(&v[1]));
    check("x * x", 311, &[input(&[3, 5], -1.0, 1.0)], CROSS, |v| v[0].mul(&v[0]));
}

#[test]
fn autograd_fused_graph_backward_is_generated() {
    let g = fused::bias_gelu_graph();
    let inputs = [input(&[3, 5], -1.0, 1.0), input(&[5], -1.0, 1.0)];
    check("bias_gelu graph", 320, &inputs, CROSS, |v| {
        Var::fused(&g, &[&v[0], &v[1]])
    });
}

#[test]
fn autograd_matmul_and_linear_match_finite_differences() {
    let mm = [input(&[3, 5], -1.0, 1.0), input(&[5, 3], -1.0, 1.0)];
    check("matmul", 400, &mm, CROSS, |v| v[0].matmul(&v[1]));
    let batched = [input(&[2, 3, 5], -1.0, 1.0), input(&[5, 3], -1.0, 1.0)];
    check("matmul, broadcast batch", 401, &batched, CROSS, |v| v[0].matmul(&v[1]));
    let lin = [
        input(&[2, 3, 5], -1.0, 1.0),
        input(&[5, 3], -1.0, 1.0),
        input(&[3], -1.0, 1.0),
    ];
    check("linear", 402, &lin, CROSS, |v| v[0].linear(&v[1], Some(&v[2])));
    check("linear, no bias", 403, &lin[..2], CROSS, |v| v[0].linear(&v[1], None));
    check("linear_gelu", 404, &lin, CROSS, |v| v[0].linear_gelu(&v[1], &v[2]));
    let res = [
        input(&[3, 5], -1.0, 1.0),
        input(&[5, 3], -1.0, 1.0),
        input(&[3], -1.0, 1.0),
        input(&[3, 3], -1.0, 1.0),
    ];
    check("linear_residual", 405, &res, CROSS, |v| {
        v[0].linear_residual(&v[1], &v[2], &v[3])
    });
}

#[test]
fn autograd_row_ops_match_finite_differences() {
    check("sum_last", 500, &[input(&[3, 5], -1.0, 1.0)], CROSS, |v| {
        v[0].sum_last()
    });
    check("sum_all", 501, &[input(&[2, 3, 7], -1.0, 1.0)], CROSS, |v| {
        v[0].sum_all()
    });
    check("softmax_last", 502, &[input(&[3, 5], -2.0, 2.0)], CROSS, |v| {
        v[0].softmax_last(None)
    });
    check(
        "softmax_last, causal",
        503,
        &[input(&[2, 3, 5], -2.0, 2.0)],
        CROSS,
        |v| v[0].softmax_last(Some(1)),
    );
    let ln = [input(&[3, 5], -1.0, 1.0), input(&[5], 0.5, 1.5), input(&[5], -1.0, 1.0)];
    check("layer_norm", 504, &ln, CROSS, |v| v[0].layer_norm(&v[1], &v[2], 1e-5));
}

#[test]
fn autograd_views_match_finite_differences() {
    let x = [input(&[3, 5], -1.0, 1.0), input(&[5, 3], -1.0, 1.0)];
    // A transposed view into an elementwise op (read in place) and into a product.
    check("transpose", 600, &x, CROSS, |v| v[0].transpose(0, 1)?.mul(&v[1]));
    check("narrow", 601, &x[..1], CROSS, |v| v[0].narrow(1, 1, 4)?.exp());
    check("reshape", 602, &x, CROSS, |v| v[0].reshape(&[5, 3])?.mul(&v[1]));
}

#[test]
fn autograd_attention_matches_finite_differences() {
    let qkv = [
        input(&[2, 3, 5], -1.0, 1.0),
        input(&[2, 4, 5], -1.0, 1.0),
        input(&[2, 4, 5], -1.0, 1.0),
    ];
    check("attention", 700, &qkv, CROSS, |v| {
        Var::attention(&v[0], &v[1], &v[2], 1)
    });
}

#[test]
fn autograd_embedding_scatters_by_id() {
    let tables = [input(&[7, 5], -1.0, 1.0), input(&[6, 5], -1.0, 1.0)];
    // Token 3 twice: its row sums two gradients; rows 2, 4, 5, 6 get none.
    check("embedding", 800, &tables, CROSS, |v| {
        Var::embedding(&v[0], &v[1], &[3, 1, 3, 0], 1)
    });
}

#[test]
fn autograd_cross_entropy_matches_finite_differences() {
    check("cross_entropy", 900, &[input(&[3, 5], -2.0, 2.0)], CROSS, |v| {
        v[0].cross_entropy(&[1, 4, 0])
    });
}
