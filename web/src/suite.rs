//! The parity suite the page runs: each case computes an op on the context's device and
//! compares it with the f64 CPU reference under the op's tolerance gate.
//!
//! Two kinds of case: the ops on main that the library suite does not cover (broadcasting
//! elementwise ops, `sum_last`, an op over strided views), defined here, and every case of the
//! library parity suite `wgsl_compute::parity` (scans, and the families that add themselves there),
//! run through its async `run_case` and mapped onto [`Row`].
//!
//! Nothing here blocks: results come back through `to_vec_async`, so the same code runs in
//! a browser (awaited from a JS promise) and natively (under `pollster` in the tests).

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{compare, Gate, Rng};
use wgsl_compute::ops;
use wgsl_compute::{reference, Context, Result, Tensor};
use wgsl_compute::{Binary, Unary};

/// The elementwise ops' gate, as in `tests/elementwise.rs`.
const ELEMENTWISE_GATE: Gate = Gate::new(1e-6, 1e-5);
/// `sum_last` accumulates up to ~4k O(1) terms in f32, as in `tests/reduce.rs`.
const REDUCE_GATE: Gate = Gate::new(1e-4, 1e-5);

/// One parity case: an op, its input shapes, and how its inputs are drawn.
#[derive(Clone, Debug)]
pub enum Case {
    /// `op(a, b)` with broadcasting; inputs in [0.5, 2] so `pow` stays real.
    Binary { op: Binary, a: Vec<usize>, b: Vec<usize> },
    /// `op(x)`, x (n,); inputs in [0.1, 4] for `log`/`sqrt`, else [-4, 4].
    Unary { op: Unary, n: usize },
    /// `sum_last(x)`, x (..., n) -> (...); inputs in [-1, 1].
    SumLast { shape: Vec<usize> },
    /// `mul(a[1..4], b^T)`: a (5, 6, 7) narrowed to (3, 6, 7), b (7, 6) transposed to (6, 7).
    StridedMul,
    /// A case of the library parity suite (its quick subset), with its own inputs and gate.
    Library(wgsl_compute::parity::Case),
}

/// One row of the parity table.
#[derive(Clone, Debug)]
pub struct Row {
    /// The family the case belongs to (`elementwise`, `reduce`, later `scan`, ...).
    pub suite: &'static str,
    pub op: String,
    /// `forward` (the library suite also has `backward`).
    pub direction: &'static str,
    /// The input shapes, e.g. `[3, 1000], [1000]`.
    pub shape: String,
    /// The kernel strategy (`-` where an op has one).
    pub strategy: String,
    /// Largest |gpu - reference| (infinite on an error or a NaN).
    pub max_abs_err: f64,
    pub gate: Gate,
    pub passed: bool,
    /// The worst element, or the error the case raised.
    pub detail: String,
}

/// Every case of the in-browser suite, in table order.
pub fn cases() -> Vec<Case> {
    let mut out = vec![];
    let pairs: [(&[usize], &[usize]); 6] = [
        (&[1], &[1]),
        (&[255], &[255]),
        (&[256], &[1]),
        (&[257], &[257]),
        (&[3, 1000], &[1000]),
        (&[4, 1, 5], &[3, 1]),
    ];
    for op in Binary::ALL {
        for (a, b) in pairs {
            out.push(Case::Binary {
                op,
                a: a.to_vec(),
                b: b.to_vec(),
            });
        }
    }
    for op in Unary::ALL {
        for n in [1, 257, 1001] {
            out.push(Case::Unary { op, n });
        }
    }
    for shape in [
        &[1usize][..],
        &[255],
        &[256],
        &[257],
        &[3, 1000],
        &[17, 1],
        &[2, 3, 4097],
    ] {
        out.push(Case::SumLast { shape: shape.to_vec() });
    }
    out.push(Case::StridedMul);
    out.extend(wgsl_compute::parity::cases(false).into_iter().map(Case::Library));
    out
}

/// Runs `case` on `ctx` with inputs drawn from `seed` and compares it with the reference.
/// An error raised by the op becomes a failed row that carries the message. Outputs are
/// poisoned with NaN during the case (poisoning is off again afterwards).
pub async fn run_case(ctx: &Context, case: &Case, seed: u64) -> Row {
    if let Case::Library(c) = case {
        // The library case carries its own seed and poisons nothing: its rows are its own.
        let r = wgsl_compute::parity::run_case(ctx, c).await;
        return Row {
            suite: case.suite(),
            op: r.op,
            direction: r.direction,
            shape: r.shape,
            strategy: r.strategy,
            max_abs_err: r.max_abs_err,
            gate: r.gate,
            passed: r.passed,
            detail: r
                .error
                .unwrap_or_else(|| format!("max |err| {:.3e} (gate {})", r.max_abs_err, r.gate)),
        };
    }
    let mut row = Row {
        suite: case.suite(),
        op: case.op(),
        direction: case.direction(),
        shape: case.shape(),
        strategy: "-".into(),
        max_abs_err: f64::INFINITY,
        gate: case.gate(),
        passed: false,
        detail: String::new(),
    };
    // Fresh outputs are NaN while the case runs, so an element a kernel leaves unwritten fails.
    ctx.set_poison(Some(f32::NAN));
    let outcome = compute(ctx, case, &mut Rng::new(seed)).await;
    ctx.set_poison(None);
    match outcome {
        Ok((got, want)) => {
            let c = compare(&got, &want, row.gate);
            row.max_abs_err = c.max_abs;
            row.passed = c.ok;
            row.detail = c.to_string();
        }
        Err(e) => row.detail = e.to_string(),
    }
    row
}

impl Case {
    /// The family of the case: `elementwise`, `reduce`, `scan`.
    pub fn suite(&self) -> &'static str {
        match self {
            Case::Binary { .. } | Case::Unary { .. } | Case::StridedMul => "elementwise",
            Case::SumLast { .. } => "reduce",
            Case::Library(wgsl_compute::parity::Case::Scan(_)) => "scan",
            Case::Library(wgsl_compute::parity::Case::Mixer(_)) => "mixer",
            Case::Library(wgsl_compute::parity::Case::Matmul(_)) => "matmul (half)",
            Case::Library(wgsl_compute::parity::Case::Autograd(_)) => "gradient",
            // A family added to wgsl_compute::parity later shows up before this list learns its name.
            #[allow(unreachable_patterns)]
            Case::Library(_) => "parity",
        }
    }

    /// The op's name, e.g. `add`, `sum_last`.
    pub fn op(&self) -> String {
        match self {
            Case::Binary { op, .. } => format!("{op:?}").to_lowercase(),
            Case::Unary { op, .. } => format!("{op:?}").to_lowercase(),
            Case::SumLast { .. } => "sum_last".into(),
            Case::StridedMul => "mul (views)".into(),
            Case::Library(wgsl_compute::parity::Case::Scan(c)) => c.op.name().into(),
            Case::Library(wgsl_compute::parity::Case::Mixer(c)) => c.name(),
            Case::Library(wgsl_compute::parity::Case::Matmul(c)) => c.name(),
            Case::Library(wgsl_compute::parity::Case::Autograd(c)) => c.name.clone(),
            #[allow(unreachable_patterns)]
            Case::Library(_) => "-".into(),
        }
    }

    /// `forward` or `backward`.
    pub fn direction(&self) -> &'static str {
        match self {
            Case::Library(wgsl_compute::parity::Case::Scan(c)) if c.backward => "backward",
            Case::Library(wgsl_compute::parity::Case::Mixer(c)) if c.backward => "backward",
            Case::Library(wgsl_compute::parity::Case::Autograd(_)) => "backward",
            _ => "forward",
        }
    }

    /// The input shapes, e.g. `[3, 1000], [1000]`.
    pub fn shape(&self) -> String {
        match self {
            Case::Binary { a, b, .. } => format!("{a:?}, {b:?}"),
            Case::Unary { n, .. } => format!("[{n}]"),
            Case::SumLast { shape } => format!("{shape:?}"),
            Case::StridedMul => "[5, 6, 7][1..4], [7, 6]^T".into(),
            Case::Library(wgsl_compute::parity::Case::Scan(c)) => c.shape(),
            Case::Library(wgsl_compute::parity::Case::Mixer(c)) => c.shape(),
            Case::Library(wgsl_compute::parity::Case::Matmul(c)) => c.shape(),
            Case::Library(wgsl_compute::parity::Case::Autograd(c)) => c.shape(),
            #[allow(unreachable_patterns)]
            Case::Library(_) => "-".into(),
        }
    }

    /// The tolerance gate of the case's op (a library case reports its own in its row).
    fn gate(&self) -> Gate {
        match self {
            Case::SumLast { .. } => REDUCE_GATE,
            _ => ELEMENTWISE_GATE,
        }
    }
}

/// The op's result on `ctx` and the reference's, both flattened in row-major order.
async fn compute(ctx: &Context, case: &Case, rng: &mut Rng) -> Result<(Vec<f32>, Vec<f32>)> {
    let (got, want) = match case {
        Case::Library(_) => {
            return Err(wgsl_compute::Error::Unsupported {
                op: "parity",
                message: "library cases run through wgsl_compute::parity::run_case".into(),
            })
        }
        Case::Binary { op, a, b } => {
            let a = random(rng, a, 0.5, 2.0);
            let b = random(rng, b, 0.5, 2.0);
            // The op first, so a shape error names the op rather than the reference.
            let got = ops::binary(*op, &Tensor::from_array(ctx, &a)?, &Tensor::from_array(ctx, &b)?)?;
            (got, reference::elementwise::binary(*op, &a.view(), &b.view())?)
        }
        Case::Unary { op, n } => {
            let (lo, hi) = match op {
                Unary::Log | Unary::Sqrt => (0.1, 4.0),
                _ => (-4.0, 4.0),
            };
            let x = random(rng, &[*n], lo, hi);
            let want = reference::elementwise::unary(*op, &x.view());
            (ops::unary(*op, &Tensor::from_array(ctx, &x)?)?, want)
        }
        Case::SumLast { shape } => {
            let x = random(rng, shape, -1.0, 1.0);
            let want = reference::reduce::sum_last(&x.view());
            (ops::sum_last(&Tensor::from_array(ctx, &x)?)?, want)
        }
        Case::StridedMul => {
            let a = random(rng, &[5, 6, 7], -1.0, 1.0);
            let b = random(rng, &[7, 6], -1.0, 1.0);
            let ta = Tensor::from_array(ctx, &a)?.narrow(0, 1, 4)?; // (3, 6, 7)
            let tb = Tensor::from_array(ctx, &b)?.transpose(0, 1)?; // (6, 7)
            let av = a.slice(ndarray::s![1..4, .., ..]).into_dyn();
            let bv = b.t().into_dyn();
            let want = reference::elementwise::binary(Binary::Mul, &av, &bv)?;
            (ops::mul(&ta, &tb)?, want)
        }
    };
    if got.shape() != want.shape() {
        return Err(wgsl_compute::Error::shape(
            "parity",
            "result",
            format!("{:?}", want.shape()),
            got.shape(),
        ));
    }
    Ok((got.to_vec_async().await?, want.iter().copied().collect()))
}

/// A seeded uniform array of `shape` in [lo, hi).
fn random(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> ArrayD<f32> {
    let n = shape.iter().product();
    // The length is the shape's product by construction, so this cannot fail.
    ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, lo, hi)).expect("shape and length agree")
}
