//! One replay of a plan under the engine's profiler, as a table of its kernels, shared by
//! `decode_probe` and `llama_decode` (each also includes `common/clocks.rs`).

use wgsl_compute::plan::Plan;
use wgsl_compute::{Context, Result};

/// Device time of each kernel of `plan` within one replay, from the engine's profiler
/// (timestamps between the dispatches of the replay where the adapter has them).
pub fn per_kernel(ctx: &Context, plan: &Plan) -> Result<String> {
    super::clocks::sustain(ctx, 0.5)?;
    let was = ctx.profiling();
    ctx.set_profiling(true);
    ctx.reset_profile()?;
    plan.replay(ctx)?;
    let profile = ctx.profile()?;
    ctx.set_profiling(was);
    let total = profile.total_seconds();
    let mut out = format!(
        "kernel | dispatches per step | device ms per step | share ({:?})\n",
        profile.clock
    );
    for k in &profile.kernels {
        out += &format!(
            "{} | {} | {:.4} | {:.0}%\n",
            k.name,
            k.calls,
            k.seconds * 1e3,
            100.0 * k.seconds / total
        );
    }
    Ok(out)
}
