//! Lists every adapter wgpu can see, then the one the engine picks and what it can do.
//!
//!     cargo run --release --example info
//!     ENGINE_BACKEND=gl cargo run --release --example info
//!     WGPU_ADAPTER_NAME=nvidia cargo run --release --example info

use wgsl_compute::Context;

const USAGE: &str = "usage: info
Lists every adapter wgpu can see, the one the engine picks (ENGINE_BACKEND, WGPU_ADAPTER_NAME),
its optional features and limits, and runs one small op on it.";

fn main() -> wgsl_compute::Result<()> {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let all = pollster::block_on(Context::each_adapter())?;
    println!("adapters ({}):", all.len());
    for (i, ctx) in all.iter().enumerate() {
        let info = ctx.info();
        println!("  [{i}] {} ({}, {})", info.name, info.backend, info.device_type);
    }
    drop(all);

    let ctx = Context::new()?;
    println!("\nchosen:\n{}", ctx.info());

    // A tiny op proves the device runs kernels end to end.
    let x = wgsl_compute::Tensor::from_slice(&ctx, &[4], &[1.0, 2.0, 3.0, 4.0])?;
    let s = wgsl_compute::ops::sum_last(&wgsl_compute::ops::mul(&x, &x)?)?.to_vec()?;
    println!("\nsmoke test: sum(x*x) for x = [1, 2, 3, 4] is {} (expected 30)", s[0]);
    // Half precision: converted on the device and widened back (exact for these values).
    for dtype in [wgsl_compute::DType::F16, wgsl_compute::DType::BF16] {
        let h = x.to_dtype(dtype)?;
        println!("{dtype}: [1, 2, 3, 4] -> {:04x?} -> {:?}", h.to_halves()?, h.to_vec()?);
    }
    Ok(())
}
