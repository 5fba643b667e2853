//! The autograd tape: every backward rule, as the library's gradient-check rows
//! (`wgsl_compute::parity::autograd`), and the errors of bad input. The rows against finite
//! differences run once, on the CPU context (they compute there whatever context they get);
//! the rows against the CPU tape run on every adapter present.

mod errors;

use wgsl_compute::parity::autograd::{self, Against, GradCase};
use wgsl_compute::Context;

use crate::common::each_adapter;

/// Runs `cases`: each finite-difference row on the CPU context, each CPU-tape row on every
/// adapter, and asserts that every row passed.
fn check_all(cases: Vec<GradCase>) {
    let cpu = Context::cpu();
    for c in cases.iter().filter(|c| c.against == Against::FiniteDifferences) {
        let row = pollster::block_on(autograd::run_case(&cpu, c));
        assert!(
            row.passed,
            "{} {}: {}: {:?}",
            c.name,
            c.shape(),
            c.strategy(),
            row.error
        );
    }
    each_adapter(|ctx| {
        for c in cases.iter().filter(|c| c.against == Against::CpuTape) {
            let row = pollster::block_on(autograd::run_case(ctx, c));
            assert!(
                row.passed,
                "{} {} on {} ({:?}): {}: {:?}",
                c.name,
                c.shape(),
                ctx.info().name,
                ctx.info().backend,
                c.strategy(),
                row.error
            );
        }
    });
}

#[test]
fn autograd_elementwise_rules_match_finite_differences() {
    check_all(autograd::elementwise_cases());
}

#[test]
fn autograd_products_match_finite_differences() {
    check_all(autograd::product_cases());
}

#[test]
fn autograd_rows_views_attention_embedding_match_finite_differences() {
    check_all(autograd::row_cases());
}

#[test]
fn autograd_recurrences_agree_with_their_backward() {
    check_all(autograd::recurrence_cases());
}
