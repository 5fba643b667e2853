//! CUDA parity: every row of the golden fixtures (PyTorch on an NVIDIA H200, made by
//! `tests/fixtures/cuda/make_fixtures.py`) on every adapter and on the CPU context, under the
//! tolerance gates of `check::gates`; GPT-2's greedy tokens identical.

use std::sync::Arc;

use wgsl_compute::parity::cuda::{cuda_cases, CudaCase, ModelFiles};
use wgsl_compute::parity::{run_case, Case};
use wgsl_compute::Context;

use crate::common::each_adapter;

fn read(path: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

fn cases() -> Vec<CudaCase> {
    let manifest = String::from_utf8(read("tests/fixtures/cuda/manifest.json")).unwrap();
    let model = ModelFiles {
        config: String::from_utf8(read("assets/models/tiny-random/config.json")).unwrap(),
        safetensors: Arc::new(read("assets/models/tiny-random/model.safetensors")),
    };
    cuda_cases(
        &manifest,
        &read("tests/fixtures/cuda/fixtures.safetensors"),
        Some(&model),
    )
    .unwrap()
}

/// Runs every row on `ctx` and asserts all pass, listing each failure with its case and worst element.
fn check(ctx: &Context, cases: &[CudaCase]) {
    let info = ctx.info();
    let mut failures = vec![];
    for c in cases {
        let row = pollster::block_on(run_case(ctx, &Case::Cuda(c.clone())));
        assert!(row.max_abs_err.is_finite() || !row.passed);
        if !row.passed {
            failures.push(format!(
                "{} {} ({}): max |err| {:.3e} gate {}: {}",
                c.name,
                row.direction,
                row.shape,
                row.max_abs_err,
                row.gate,
                row.error.unwrap_or_default()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} CUDA rows failed on {} ({:?}):\n{}",
        failures.len(),
        cases.len(),
        info.name,
        info.backend,
        failures.join("\n")
    );
}

#[test]
fn cuda_fixtures_cover_every_op() {
    let cases = cases();
    for op in [
        "linear_scan",
        "parallel_scan_log",
        "matrix_scan",
        "matrix_affine_scan",
        "element_scan_tanh",
        "element_scan_norm_capped",
        "element_scan_max_plus_reverse",
        "matmul",
        "softmax",
        "layer_norm",
        "gelu",
        "gpt2",
    ] {
        assert!(cases.iter().any(|c| c.op == op), "no CUDA case for {op}");
    }
    // Every (k, v) of the matrix affine scan, forward and backward.
    let affine = cases.iter().filter(|c| c.op == "matrix_affine_scan").count();
    assert_eq!(affine, 2 * 25);
    assert_eq!(cases.len(), 83);
}

#[test]
fn cuda_fixtures_match_on_every_adapter() {
    let cases = cases();
    each_adapter(|ctx| check(ctx, &cases));
}

#[test]
fn cuda_fixtures_match_on_the_cpu_context() {
    check(&Context::cpu(), &cases());
}

#[test]
fn cuda_rows_fail_on_a_perturbed_output() {
    // The comparison can fail: nudge one recorded element past the gate.
    let mut c = cases().into_iter().find(|c| c.op == "matmul").unwrap();
    let out = c.outputs.get_mut("out").unwrap();
    out.data[3] += 1e-3;
    let row = pollster::block_on(run_case(&Context::cpu(), &Case::Cuda(c)));
    assert!(!row.passed);
    assert!(row.error.unwrap().contains("worst at [3]"));
}
