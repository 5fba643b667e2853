//! Test harness: one context per adapter (built once per binary), seeded inputs, and
//! comparison against the CPU reference with the worst element reported.

#![allow(dead_code)]

use std::sync::{Mutex, OnceLock, RwLock};

use wgsl_compute::check::{compare, Gate};
use wgsl_compute::context::Backend;
use wgsl_compute::Context;

/// One context per adapter present, with outputs poisoned (NaN) before every op and the tuner
/// off: the tests of the hand rules (and those counting dispatches or pipelines) see exactly
/// the hand rules' work; `tests/tune.rs` makes contexts of its own to test the tuner.
pub fn contexts() -> &'static [Context] {
    static CONTEXTS: OnceLock<Vec<Context>> = OnceLock::new();
    CONTEXTS.get_or_init(|| {
        let list = pollster::block_on(Context::each_adapter()).expect("enumerating adapters");
        if list.is_empty() && wgsl_compute::context::require_gpu() {
            panic!("ENGINE_REQUIRE_GPU=1 but no GPU adapter was found (install mesa-vulkan-drivers for lavapipe)");
        }
        for c in &list {
            c.set_poison(Some(f32::NAN));
            c.set_tune_mode(wgsl_compute::tune::TuneMode::Off);
            eprintln!("test adapter: {} ({:?})", c.info().name, c.info().backend);
        }
        // `ENGINE_REQUIRE_BACKENDS=vulkan,gl` (CI): each listed backend must have an adapter,
        // so a suite that promises lavapipe and llvmpipe GL cannot pass on one of them.
        if let Ok(want) = std::env::var("ENGINE_REQUIRE_BACKENDS") {
            for b in want.split(',').map(str::trim).filter(|b| !b.is_empty()) {
                let found = list
                    .iter()
                    .any(|c| format!("{:?}", c.info().backend).eq_ignore_ascii_case(b));
                assert!(
                    found,
                    "ENGINE_REQUIRE_BACKENDS lists `{b}` but no adapter of that backend was found"
                );
            }
        }
        list
    })
}

/// Taken shared by [`each_adapter`] and exclusively by [`each_adapter_alone`].
static ALONE: RwLock<()> = RwLock::new(());

/// Runs `f` on every adapter; skips (with a note) when there is none and none is required.
///
/// Tests on one GL context take turns: wgpu's GL backend serialises every call on the EGL
/// context lock and panics when it waits more than a few seconds for it, which long software
/// kernels from parallel tests would otherwise cause. Vulkan contexts run tests in parallel.
pub fn each_adapter(f: impl FnMut(&Context)) {
    let _shared = ALONE.read().unwrap_or_else(|p| p.into_inner());
    run_each(f);
}

/// [`each_adapter`] with no other adapter test running: for tests that count the pipelines a
/// shared context built, which parallel tests would otherwise add to.
pub fn each_adapter_alone(f: impl FnMut(&Context)) {
    let _alone = ALONE.write().unwrap_or_else(|p| p.into_inner());
    run_each(f);
}

/// A new context on `shared`'s adapter, set up as the shared ones are (poisoned outputs, tuner
/// off): for a test that counts what a context creates, which no other test may add to.
pub fn fresh(shared: &Context) -> Context {
    let ctx = pollster::block_on(Context::each_adapter())
        .expect("enumerating adapters")
        .into_iter()
        .find(|c| c.info().name == shared.info().name && c.info().backend == shared.info().backend)
        .expect("the shared context's adapter again");
    ctx.set_poison(Some(f32::NAN));
    ctx.set_tune_mode(wgsl_compute::tune::TuneMode::Off);
    ctx
}

/// GPU parts of tests skipped so far for want of an adapter.
pub static SKIPPED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn run_each(mut f: impl FnMut(&Context)) {
    static GL_TURN: Mutex<()> = Mutex::new(());
    let list = contexts();
    if list.is_empty() {
        let n = SKIPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let test = std::thread::current().name().unwrap_or("?").to_string();
        // Written to stderr directly: libtest captures `eprintln!` of passing tests, and a
        // skip must be seen.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED GPU part of {test}: no GPU adapter ({n} GPU test parts skipped so far; set ENGINE_REQUIRE_GPU=1 to fail instead)"
        );
    }
    for ctx in list {
        let _turn = (ctx.info().backend == Backend::Gl).then(|| GL_TURN.lock().unwrap_or_else(|p| p.into_inner()));
        f(ctx);
    }
}

/// Asserts `got` is within `gate` of `want`, naming the case, the adapter and the worst element.
#[track_caller]
pub fn assert_close(ctx: &Context, case: &str, got: &[f32], want: &[f32], gate: Gate) {
    let c = compare(got, want, gate);
    assert!(c.ok, "{case} on {} ({:?}): {c}", ctx.info().name, ctx.info().backend);
}
