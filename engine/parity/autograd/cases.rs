//! The gradient checks' case list: every differentiable op of the tape at small odd shapes,
//! each case once against finite differences and once against the CPU tape. The seeds are
//! fixed, so a failing row reproduces.

use super::{input, input_away, Against, Body, GradCase, Input};
use crate::autograd::Var;
use crate::check::{gates, Gate};
use crate::element_scan::spec_programs::TANH_SCAN;
use crate::element_scan::{Bindings, ElementScan};
use crate::error::Result;
use crate::expr::{Binary, Unary};
use crate::fused;
use crate::mixer::{MixerKind, MixerPath};
use crate::tensor::Tensor;

/// Collects cases, two rows each.
struct List(Vec<GradCase>);

impl List {
    fn push(&mut self, name: impl Into<String>, seed: u64, inputs: &[Input], gate: Gate, body: Body) {
        let name = name.into();
        for against in [Against::FiniteDifferences, Against::CpuTape] {
            self.0.push(GradCase {
                name: name.clone(),
                seed,
                inputs: inputs.to_vec(),
                body,
                gate,
                against,
            });
        }
    }

    /// A tensor op's case, its device tape held to [`gates::GRADIENT_TAPE`].
    fn op(&mut self, name: &str, seed: u64, inputs: &[Input], f: fn(&[Var]) -> Result<Var>) {
        self.push(name, seed, inputs, gates::GRADIENT_TAPE, Body::Formula(f));
    }
}

/// Every gradient check (one list for the quick and the full suite: every case is small).
pub fn autograd_cases() -> Vec<GradCase> {
    let mut out = elementwise_cases();
    out.extend(product_cases());
    out.extend(row_cases());
    out.extend(recurrence_cases());
    out
}

/// Each unary and binary op (broadcast over either operand), a fused graph, and the methods'
/// compositions (`cat`, `where_`, the means).
pub fn elementwise_cases() -> Vec<GradCase> {
    let mut l = List(Vec::new());
    let tape = gates::GRADIENT_TAPE;
    let unary: &[(Unary, f64, f64)] = &[
        (Unary::Neg, -1.0, 1.0),
        (Unary::Exp, -1.0, 1.0),
        (Unary::Log, 0.5, 2.0),
        (Unary::Tanh, -1.0, 1.0),
        (Unary::Sqrt, 0.5, 2.0),
        (Unary::Abs, 0.1, 1.0),
        (Unary::Sigmoid, -2.0, 2.0),
        (Unary::Relu, 0.1, 1.0),
        (Unary::Softplus, -2.0, 2.0),
        (Unary::Sin, -2.0, 2.0),
        (Unary::Cos, -2.0, 2.0),
    ];
    for (i, &(op, lo, hi)) in unary.iter().enumerate() {
        l.push(
            op.name(),
            100 + i as u64,
            &[input(&[3, 5], lo, hi)],
            tape,
            Body::Unary(op),
        );
        // The negative side of abs and relu.
        if matches!(op, Unary::Abs | Unary::Relu) {
            let neg = [input(&[3, 5], -1.0, -0.1)];
            l.push(
                format!("{}, negative", op.name()),
                200 + i as u64,
                &neg,
                tape,
                Body::Unary(op),
            );
        }
    }
    l.op("gelu", 111, &[input(&[2, 3, 7], -2.0, 2.0)], |v| v[0].gelu());
    l.op("scale", 112, &[input(&[3, 5], -1.0, 1.0)], |v| v[0].scale(-2.5));
    // The scalar ops (a constant of the kernel), either side.
    let x = [input(&[3, 5], 0.5, 2.0)];
    l.op("add_scalar", 113, &x, |v| v[0].add_scalar(0.75));
    l.op("sub_scalar", 114, &x, |v| v[0].sub_scalar(0.75));
    l.op("rsub_scalar", 115, &x, |v| v[0].rsub_scalar(1.0));
    l.op("mul_scalar", 116, &x, |v| v[0].mul_scalar(-1.5));
    l.op("div_scalar", 117, &x, |v| v[0].div_scalar(3.0));
    l.op("rdiv_scalar", 118, &x, |v| v[0].rdiv_scalar(2.0));
    l.op("pow_scalar", 119, &x, |v| v[0].pow_scalar(1.5));
    l.op("maximum_scalar", 120, &x, |v| v[0].maximum_scalar(1.25));
    l.op("minimum_scalar", 121, &x, |v| v[0].minimum_scalar(1.25));
    // The operators, as a formula reads: (1 - z) h + z x / 2, -h.
    let zhx = [
        input(&[3, 5], 0.1, 0.9),
        input(&[3, 5], -1.0, 1.0),
        input(&[1, 5], -1.0, 1.0),
    ];
    l.op("operators", 122, &zhx, |v| {
        let (z, h, x) = (&v[0], &v[1], &v[2]);
        ((((1.0 - z)? * h)? + ((z * x)? / 2.0)?)? - (-h)?)? * 0.5
    });
    // (op, shape of a, shape of b, range of both)
    type Pair = (Binary, [usize; 2], [usize; 2], f64, f64);
    let binary: &[Pair] = &[
        (Binary::Add, [3, 5], [1, 5], -1.0, 1.0),
        (Binary::Sub, [3, 5], [3, 1], -1.0, 1.0),
        (Binary::Mul, [3, 5], [3, 5], -1.0, 1.0),
        (Binary::Div, [3, 5], [1, 5], 0.5, 2.0),
        (Binary::Pow, [3, 5], [3, 1], 0.5, 2.0),
        (Binary::Max, [3, 5], [3, 5], -1.0, 1.0),
        (Binary::Min, [3, 5], [3, 5], -1.0, 1.0),
    ];
    for (i, &(op, a, b, lo, hi)) in binary.iter().enumerate() {
        let inputs = [input(&a, lo, hi), input(&b, lo, hi)];
        l.push(op.name(), 300 + i as u64, &inputs, tape, Body::Binary(op));
    }
    // A rank-1 operand against a rank-3 one, and a variable used twice.
    let inputs = [input(&[2, 3, 7], -1.0, 1.0), input(&[7], -1.0, 1.0)];
    l.op("mul (2, 3, 7) * (7,)", 310, &inputs, |v| v[0].mul(&v[1]));
    l.op("x * x", 311, &[input(&[3, 5], -1.0, 1.0)], |v| v[0].mul(&v[0]));
    let inputs = [input(&[3, 5], -1.0, 1.0), input(&[5], -1.0, 1.0)];
    l.op("bias_gelu graph", 320, &inputs, |v| {
        Var::fused(&fused::bias_gelu_graph(), &[&v[0], &v[1]])
    });
    let inputs = [input(&[2, 3], -1.0, 1.0), input(&[2, 5], -1.0, 1.0)];
    l.op("cat axis 1", 500, &inputs, |v| Var::cat(&[&v[0], &v[1]], 1));
    let inputs = [
        input(&[2, 3], -1.0, 1.0),
        input(&[4, 3], -1.0, 1.0),
        input(&[1, 3], -1.0, 1.0),
    ];
    l.op("cat axis 0, three", 501, &inputs, |v| {
        Var::cat(&[&v[0], &v[1], &v[2]], 0)
    });
    // A mask of the input's context, the second branch broadcast over the rows.
    let inputs = [input(&[3, 5], -1.0, 1.0), input(&[1, 5], -1.0, 1.0)];
    l.op("where_", 502, &inputs, |v| {
        let mask: Vec<f32> = (0..15).map(|i| (i % 3 == 0) as u8 as f32).collect();
        let cond = Tensor::from_slice(v[0].tensor().context(), &[3, 5], &mask)?;
        v[0].where_(&cond, &v[1])
    });
    l.op("mean_all", 503, &[input(&[3, 5], -1.0, 1.0)], |v| v[0].mean_all());
    l.op("mean_last", 504, &[input(&[2, 3, 7], -1.0, 1.0)], |v| v[0].mean_last());
    l.0
}

/// Matmul (and a broadcast batch) and linear with each fused epilogue.
pub fn product_cases() -> Vec<GradCase> {
    let mut l = List(Vec::new());
    let mm = [input(&[3, 5], -1.0, 1.0), input(&[5, 3], -1.0, 1.0)];
    l.op("matmul", 400, &mm, |v| v[0].matmul(&v[1]));
    let batched = [input(&[2, 3, 5], -1.0, 1.0), input(&[5, 3], -1.0, 1.0)];
    l.op("matmul, broadcast batch", 401, &batched, |v| v[0].matmul(&v[1]));
    let lin = [
        input(&[2, 3, 5], -1.0, 1.0),
        input(&[5, 3], -1.0, 1.0),
        input(&[3], -1.0, 1.0),
    ];
    l.op("linear", 402, &lin, |v| v[0].linear(&v[1], Some(&v[2])));
    l.op("linear, no bias", 403, &lin[..2], |v| v[0].linear(&v[1], None));
    l.op("linear_gelu", 404, &lin, |v| v[0].linear_gelu(&v[1], &v[2]));
    let res = [
        input(&[3, 5], -1.0, 1.0),
        input(&[5, 3], -1.0, 1.0),
        input(&[3], -1.0, 1.0),
        input(&[3, 3], -1.0, 1.0),
    ];
    l.op("linear_residual", 405, &res, |v| {
        v[0].linear_residual(&v[1], &v[2], &v[3])
    });
    l.0
}

/// Row reductions, softmax, layer norm, views, attention, embedding and cross-entropy.
pub fn row_cases() -> Vec<GradCase> {
    let mut l = List(Vec::new());
    l.op("sum_last", 500, &[input(&[3, 5], -1.0, 1.0)], |v| v[0].sum_last());
    l.op("sum_all", 501, &[input(&[2, 3, 7], -1.0, 1.0)], |v| v[0].sum_all());
    l.op("softmax_last", 502, &[input(&[3, 5], -2.0, 2.0)], |v| {
        v[0].softmax_last(None)
    });
    l.op("softmax_last, causal", 503, &[input(&[2, 3, 5], -2.0, 2.0)], |v| {
        v[0].softmax_last(Some(1))
    });
    let ln = [input(&[3, 5], -1.0, 1.0), input(&[5], 0.5, 1.5), input(&[5], -1.0, 1.0)];
    l.op("layer_norm", 504, &ln, |v| v[0].layer_norm(&v[1], &v[2], 1e-5));
    l.op("rms_norm", 505, &ln[..2], |v| v[0].rms_norm(&v[1], 1e-5));
    // Rotary embedding with constant angle tables (T, D) whose halves differ (the adjoint is
    // exact for any table), and SwiGLU's gate.
    l.op("rope", 506, &[input(&[3, 2, 6], -1.0, 1.0)], |v| {
        let ctx = v[0].tensor().context();
        let table = |f: fn(f32) -> f32| {
            let angles: Vec<f32> = (0..18).map(|i| f(0.37 * i as f32 + 0.1)).collect();
            Tensor::from_slice(ctx, &[3, 6], &angles)
        };
        v[0].rope(&table(f32::cos)?, &table(f32::sin)?)
    });
    let gate_up = [input(&[3, 5], -2.0, 2.0), input(&[3, 5], -1.0, 1.0)];
    l.op("swiglu", 507, &gate_up, |v| Var::swiglu(&v[0], &v[1]));
    // A transposed view into an elementwise op (read in place) and into a product.
    let x = [input(&[3, 5], -1.0, 1.0), input(&[5, 3], -1.0, 1.0)];
    l.op("transpose", 600, &x, |v| v[0].transpose(0, 1)?.mul(&v[1]));
    l.op("narrow", 601, &x[..1], |v| v[0].narrow(1, 1, 4)?.exp());
    l.op("reshape", 602, &x, |v| v[0].reshape(&[5, 3])?.mul(&v[1]));
    let qkv = [
        input(&[2, 3, 5], -1.0, 1.0),
        input(&[2, 4, 5], -1.0, 1.0),
        input(&[2, 4, 5], -1.0, 1.0),
    ];
    l.op("attention", 700, &qkv, |v| Var::attention(&v[0], &v[1], &v[2], 1));
    // q | k | v packed as GPT-2's c_attn writes them: 2 rows of 3 positions, 2 heads of 2.
    l.op("packed_attention", 701, &[input(&[6, 12], -1.0, 1.0)], |v| {
        Var::packed_attention(&v[0], 2, 2)
    });
    // Token 3 twice: its row sums two gradients; rows 2, 4, 5, 6 get none.
    let tables = [input(&[7, 5], -1.0, 1.0), input(&[6, 5], -1.0, 1.0)];
    l.op("embedding", 800, &tables, |v| {
        Var::embedding(&v[0], &v[1], &[3, 1, 3, 0], 1)
    });
    // Ids on the device (ops::Ids::Device): 2 rows of 3, token 3 three times across the rows.
    l.op("embedding_rows, ids on the device", 801, &tables, |v| {
        let ids = Tensor::zeros(v[0].tensor().context(), &[6])?; // (B T,)
        ids.write_ids(&[3, 1, 3, 0, 3, 5], 7)?;
        Var::embedding_rows(&v[0], &v[1], &ids, 2)
    });
    l.op("cross_entropy", 900, &[input(&[3, 5], -2.0, 2.0)], |v| {
        v[0].cross_entropy(&[1, 4, 0])
    });
    // The tied head fused with the loss in blocks of 2 rows, its targets on the device.
    let head = [input(&[4, 5], -1.0, 1.0), input(&[7, 5], -1.0, 1.0)];
    l.op("head_cross_entropy, targets on the device", 901, &head, |v| {
        let targets = Tensor::zeros(v[0].tensor().context(), &[4])?; // (R,)
        targets.write_ids(&[1, 6, 0, 1], 7)?;
        Var::head_cross_entropy(&v[0], &v[1], &targets, Some(2))
    });
    l.0
}

/// The recurrences, whose rules are their hand-written backward passes: the four scans, the
/// mixers on both paths and an element scan, the device tape held to each family's gate.
pub fn recurrence_cases() -> Vec<GradCase> {
    let mut l = List(Vec::new());
    let g = gates::SCAN_AFFINE_BACKWARD;
    let lin = [
        input(&[2, 5, 3], 0.2, 0.9),
        input(&[2, 5, 3], -1.0, 1.0),
        input(&[2, 3], -1.0, 1.0),
    ];
    let f: fn(&[Var]) -> Result<Var> = |v| Var::linear_scan(&v[0], &v[1], Some(&v[2]));
    l.push("linear_scan", 1000, &lin, g, Body::Formula(f));
    let f: fn(&[Var]) -> Result<Var> = |v| Var::linear_scan(&v[0], &v[1], None);
    l.push("linear_scan, no h0", 1001, &lin[..2], g, Body::Formula(f));
    let mat = [
        input(&[1, 5, 3, 2, 2], -0.6, 0.6),
        input(&[1, 5, 3, 2], -1.0, 1.0),
        input(&[1, 3, 2], -1.0, 1.0),
    ];
    let f: fn(&[Var]) -> Result<Var> = |v| Var::matrix_scan(&v[0], &v[1], Some(&v[2]));
    l.push("matrix_scan", 1002, &mat, g, Body::Formula(f));
    // v = 3 runs the kernel of v = 4 on zero-padded operands.
    for w in [3, 4] {
        let aff = [
            input(&[1, 5, 3, 2, 2], -0.6, 0.6),
            input(&[1, 5, 3, 2, w], -1.0, 1.0),
            input(&[1, 3, 2, w], -1.0, 1.0),
        ];
        let f: fn(&[Var]) -> Result<Var> = |v| Var::matrix_affine_scan(&v[0], &v[1], Some(&v[2]));
        l.push(format!("matrix_affine_scan v={w}"), 1003, &aff, g, Body::Formula(f));
    }
    let log = [input(&[2, 5, 3], -1.0, -0.1), input(&[2, 6, 3], -1.0, 1.0)];
    let f: fn(&[Var]) -> Result<Var> = |v| Var::parallel_scan_log(&v[0], &v[1]);
    l.push(
        "parallel_scan_log",
        1004,
        &log,
        gates::SCAN_LOG_BACKWARD,
        Body::Formula(f),
    );
    let kinds = [
        (MixerKind::MinGru, 6),
        (MixerKind::SignedMinGru, 6),
        (MixerKind::RotationMinGru, 8),
        (MixerKind::GivensMinGru { k: 4 }, 8),
    ];
    for (i, (kind, width)) in kinds.into_iter().enumerate() {
        for path in [MixerPath::Auto, MixerPath::Materialized] {
            // MinGRU's value map has a kink at 0.
            let pre = [input_away(&[2, 5, width], -1.0, 1.0, 0.05)];
            let name = format!("{} {path:?}", kind.name());
            l.push(
                name,
                1100 + i as u64,
                &pre,
                gates::MIXER_BACKWARD,
                Body::Mixer(kind, path),
            );
        }
    }
    let inputs = [
        input(&[2, 5, 3], -1.0, 1.0),
        input(&[5, 3], 0.2, 1.0),
        input(&[2, 3], -1.0, 1.0),
    ];
    let f: fn(&[Var]) -> Result<Var> = |v| {
        let zeros = |s: &[usize]| ndarray::ArrayD::zeros(ndarray::IxDyn(s));
        let bindings = Bindings::new()
            .tensor("x", zeros(&[2, 5, 3]))
            .tensor("decay", zeros(&[5, 3]))
            .tensor("initial", zeros(&[2, 3]))
            .number("time", 5.0);
        let program = ElementScan::from_sexpr(TANH_SCAN, &bindings)?;
        Var::element_scan(&program, &[("x", &v[0]), ("decay", &v[1]), ("initial", &v[2])])
    };
    l.push(
        "element_scan TANH_SCAN",
        1201,
        &inputs,
        gates::ELEMENT_SCAN_BACKWARD,
        Body::Formula(f),
    );
    l.0
}
