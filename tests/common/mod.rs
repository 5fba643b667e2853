//! Test harness: one context per adapter (built once per binary), seeded inputs, and
//! comparison against the CPU reference with the worst element reported.

#![allow(dead_code)]

use std::sync::{Mutex, OnceLock, RwLock};

use engine::check::{compare, Gate};
use engine::Context;

/// One context per adapter present, with outputs poisoned (NaN) before every op.
pub fn contexts() -> &'static [Context] {
    static CONTEXTS: OnceLock<Vec<Context>> = OnceLock::new();
    CONTEXTS.get_or_init(|| {
        let list = pollster::block_on(Context::each_adapter()).expect("enumerating adapters");
        if list.is_empty() && engine::context::require_gpu() {
            panic!("ENGINE_REQUIRE_GPU=1 but no GPU adapter was found (install mesa-vulkan-drivers for lavapipe)");
        }
        for c in &list {
            c.set_poison(Some(f32::NAN));
            eprintln!("test adapter: {} ({})", c.info().name, c.info().backend);
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

fn run_each(mut f: impl FnMut(&Context)) {
    static GL_TURN: Mutex<()> = Mutex::new(());
    let list = contexts();
    if list.is_empty() {
        eprintln!("no GPU adapter: skipped (set ENGINE_REQUIRE_GPU=1 to fail instead)");
    }
    for ctx in list {
        let _turn = (ctx.info().backend == "Gl").then(|| GL_TURN.lock().unwrap_or_else(|p| p.into_inner()));
        f(ctx);
    }
}

/// Asserts `got` is within `gate` of `want`, naming the case, the adapter and the worst element.
#[track_caller]
pub fn assert_close(ctx: &Context, case: &str, got: &[f32], want: &[f32], gate: Gate) {
    let c = compare(got, want, gate);
    assert!(c.ok, "{case} on {} ({}): {c}", ctx.info().name, ctx.info().backend);
}
