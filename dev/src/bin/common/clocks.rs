//! Keeping a GPU's clocks up before timed work, shared by `bench` and `order_probe`.
//!
//! NVIDIA's H200 lowers its SM clock from 1980 to 345 MHz after about two seconds without
//! sustained work (a multi-GB upload from the host is enough), and light, intermittent work
//! does not raise it again: small kernels then time 2-4x slow (`order_probe`, issue #28's
//! order effect). Sustained matmuls bring the clock back.

use std::sync::Mutex;
use std::time::Instant;

use wgsl_compute::{ops, Context, Result, Tensor};

/// When [`warm`] last left the device busy.
static LAST: Mutex<Option<Instant>> = Mutex::new(None);

/// Keeps the device busy with 2048^3 matmuls, in batches of 10, for `seconds` (not on the
/// CPU context or a software adapter: no clocks to raise, and a matmul there takes seconds).
pub fn sustain(ctx: &Context, seconds: f64) -> Result<()> {
    if !ctx.is_gpu() || ctx.info().is_software() {
        return Ok(());
    }
    let m = Tensor::full(ctx, &[2048, 2048], 0.001)?;
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < seconds {
        for _ in 0..10 {
            drop(ops::matmul(&m, &m)?);
        }
        ctx.synchronize()?;
    }
    Ok(())
}

/// [`sustain`] for `seconds` unless the device was last marked busy ([`busy`]) less than
/// 0.2 s ago; then marks now. Called before each timed case, it costs nothing when cases
/// follow each other. Why 0.2 s: an H100 logged (nvidia-smi, 100 ms samples) fell from 1980
/// to 405 MHz within half a second of the end of an upload.
#[allow(dead_code)]
pub fn warm(ctx: &Context, seconds: f64) -> Result<()> {
    let recent = LAST
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .is_some_and(|t| t.elapsed().as_secs_f64() < 0.2);
    if !recent {
        sustain(ctx, seconds)?;
    }
    busy();
    Ok(())
}

/// Marks the device busy until now (the end of a timed case).
#[allow(dead_code)]
pub fn busy() {
    *LAST.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
}
