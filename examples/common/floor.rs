//! The floor under a plan's dispatches, shared by `bench` and `decode_probe`: a plan of
//! `dispatches` one-element row sums (one workgroup each, no memory traffic to speak of),
//! whose replay time is what that many dependent dispatches cost on the adapter.

use wgsl_compute::plan::Plan;
use wgsl_compute::{ops, Context, Result, Tensor};

pub fn floor_plan(ctx: &Context, dispatches: usize) -> Result<Plan> {
    let x = Tensor::from_slice(ctx, &[1, 1], &[1.0])?;
    let (plan, _) = Plan::capture(ctx, &[&x], || {
        let mut y = x.clone();
        for _ in 0..dispatches {
            y = ops::sum_last(&y)?.reshape(&[1, 1])?;
        }
        Ok(y)
    })?;
    Ok(plan)
}
