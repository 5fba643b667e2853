//! The browser's parity suite, run natively on every adapter present (lavapipe, llvmpipe):
//! the same async code the page awaits, under pollster. Every row must pass, and a case that
//! fails must say so (a row is not a rubber stamp).

use std::sync::{Mutex, MutexGuard, OnceLock};

use engine_web::suite::{cases, run_case, Case};
use wgsl_compute::Context;

/// One context per adapter for the whole binary.
fn contexts() -> &'static [Context] {
    static CONTEXTS: OnceLock<Vec<Context>> = OnceLock::new();
    CONTEXTS.get_or_init(open_contexts)
}

/// The tests take turns: wgpu's GL backend serialises every call on the EGL context lock and
/// panics when it waits too long for it (as in tests/common/mod.rs).
fn turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

fn open_contexts() -> Vec<Context> {
    let list = pollster::block_on(Context::each_adapter()).expect("enumerating adapters");
    if list.is_empty() && wgsl_compute::context::require_gpu() {
        panic!("ENGINE_REQUIRE_GPU=1 but no GPU adapter was found");
    }
    for c in &list {
        eprintln!("suite adapter: {} ({:?})", c.info().name, c.info().backend);
    }
    list
}

#[test]
fn every_parity_row_passes_on_every_adapter() {
    let _turn = turn();
    let all = cases();
    assert!(all.len() > 50, "the suite has {} cases", all.len());
    for ctx in contexts() {
        for (i, case) in all.iter().enumerate() {
            let row = pollster::block_on(run_case(ctx, case, i as u64));
            assert!(
                row.passed && row.max_abs_err.is_finite(),
                "{} {} {} on {}: {}",
                row.suite,
                row.op,
                row.shape,
                ctx.info().name,
                row.detail
            );
        }
    }
}

#[test]
fn an_op_error_is_a_failed_row_with_the_message() {
    // Shapes that do not broadcast: the op's error must become a failed row, not a panic.
    let case = Case::Binary {
        op: wgsl_compute::Binary::Add,
        a: vec![3],
        b: vec![4],
    };
    let _turn = turn();
    for ctx in contexts().iter().cloned().chain([Context::cpu()]) {
        let row = pollster::block_on(run_case(&ctx, &case, 1));
        assert!(!row.passed && row.max_abs_err.is_infinite(), "{row:?}");
        assert!(
            row.detail.contains("add") && row.detail.contains("[3]") && row.detail.contains("[4]"),
            "{}",
            row.detail
        );
    }
}
