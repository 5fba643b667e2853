//! The parity suite: cases run on a context and compared with the f64 CPU reference, one
//! [`Row`] each, rendered as a markdown table.
//!
//! A library module (not only an example) so the browser build can run it: [`run_case`] is
//! async and reads results back with `to_vec_async`, never blocking. Each family of ops adds a
//! [`Case`] variant, a case list and a run function; today: [`scan`], [`mixer`] and
//! [`matmul`] (half-precision operands; all against the f64 reference), [`autograd`] (the
//! tape's gradients against finite differences and the CPU tape) and [`cuda`] (against golden
//! outputs of PyTorch on CUDA, from fixture bytes).

pub mod autograd;
pub mod cuda;
pub mod matmul;
pub mod mixer;
pub mod scan;

use crate::check::Gate;
use crate::context::Context;

/// One parity case of any family.
#[derive(Clone, Debug, PartialEq)]
pub enum Case {
    /// A scan case against the f64 reference.
    Scan(scan::ScanCase),
    /// A mixer case against the f64 reference.
    Mixer(mixer::MixerCase),
    /// A product with half-precision operands against the f64 reference.
    Matmul(matmul::MatmulCase),
    /// A gradient check of the autograd tape.
    Autograd(autograd::GradCase),
    /// A row of the golden CUDA fixtures.
    Cuda(cuda::CudaCase),
}

/// The outcome of one case.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The op's name, e.g. `matrix_affine_scan`.
    pub op: String,
    /// `forward` or `backward`.
    pub direction: &'static str,
    /// The case's dimensions, e.g. `B=2 T=65 N=3 k=8 v=4`.
    pub shape: String,
    /// How the kernel ran, e.g. `lanes` or `chunked/16`.
    pub strategy: String,
    /// Largest |gpu - reference| over every output of the case (infinite on an error).
    pub max_abs_err: f64,
    /// The gate every element was held to.
    pub gate: Gate,
    /// Every element within the gate and no error.
    pub passed: bool,
    /// Why the case failed: the error that stopped it, or (CUDA rows) the output and worst
    /// element outside the gate.
    pub error: Option<String>,
}

/// `backward` or `forward`, as the table prints a case's direction.
pub(crate) fn direction(backward: bool) -> &'static str {
    if backward {
        "backward"
    } else {
        "forward"
    }
}

impl Row {
    /// A row not yet run: failed, infinite error, until the case's comparison fills it in.
    pub(crate) fn pending(op: String, direction: &'static str, shape: String, strategy: String, gate: Gate) -> Row {
        Row {
            op,
            direction,
            shape,
            strategy,
            max_abs_err: f64::INFINITY,
            gate,
            passed: false,
            error: None,
        }
    }

    /// The row filled in from a case's outcome: its outputs and the reference's, compared under
    /// the row's gate (the worst element is the error of a failed row), or the error that
    /// stopped it.
    pub(crate) fn judged(mut self, outcome: crate::error::Result<(Vec<f32>, Vec<f32>)>) -> Row {
        match outcome {
            Ok((got, want)) => {
                let cmp = crate::check::compare(&got, &want, self.gate);
                self.max_abs_err = cmp.max_abs;
                self.passed = cmp.ok;
                if !cmp.ok {
                    self.error = Some(cmp.to_string());
                }
            }
            Err(e) => self.error = Some(e.to_string()),
        }
        self
    }
}

/// Every case of every family (`full`: the whole envelope; otherwise a quick subset).
pub fn cases(full: bool) -> Vec<Case> {
    let scans = scan::scan_cases(full).into_iter().map(Case::Scan);
    scans
        .chain(mixer::mixer_cases(full).into_iter().map(Case::Mixer))
        .chain(matmul::matmul_cases(full).into_iter().map(Case::Matmul))
        .chain(autograd::autograd_cases().into_iter().map(Case::Autograd))
        .collect()
}

/// Runs one case on `ctx` and compares it with the reference.
pub async fn run_case(ctx: &Context, case: &Case) -> Row {
    match case {
        Case::Scan(c) => scan::run_case(ctx, c).await,
        Case::Mixer(c) => mixer::run_case(ctx, c).await,
        Case::Matmul(c) => matmul::run_case(ctx, c).await,
        Case::Autograd(c) => autograd::run_case(ctx, c).await,
        Case::Cuda(c) => cuda::run_case(ctx, c).await,
    }
}

/// `(passed, failed)` counts.
pub fn tally(rows: &[Row]) -> (usize, usize) {
    let passed = rows.iter().filter(|r| r.passed).count();
    (passed, rows.len() - passed)
}

/// One markdown table line for `row`.
pub fn markdown_row(row: &Row) -> String {
    let result = match (&row.error, row.passed) {
        (Some(e), _) => format!("FAIL: {}", e.replace('|', "/").replace('\n', " ")),
        (None, true) => "pass".to_string(),
        (None, false) => "FAIL".to_string(),
    };
    format!(
        "| {} | {} | {} | {} | {:.3e} | {} | {} |",
        row.op, row.direction, row.shape, row.strategy, row.max_abs_err, row.gate, result
    )
}

/// The table (with a header naming the adapter) and the `N passed, M failed` line.
pub fn markdown(ctx: &Context, rows: &[Row]) -> String {
    let info = ctx.info();
    let mut s = format!("# Parity on {} ({:?})\n\n", info.name, info.backend);
    s.push_str("| op | direction | shape | strategy | max abs err | gate (atol, rtol) | result |\n");
    s.push_str("| --- | --- | --- | --- | --- | --- | --- |\n");
    for r in rows {
        s.push_str(&markdown_row(r));
        s.push('\n');
    }
    let (p, f) = tally(rows);
    s.push_str(&format!("\n{p} passed, {f} failed\n"));
    s
}
