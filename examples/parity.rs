//! The parity table: every scan case on the chosen adapter against the f64 CPU reference.
//!
//! ```text
//! cargo run --release --example parity [-- --quick] [--out parity.md]
//! ```
//! Prints one row per case and ends with `N passed, M failed`; exits non-zero on a failure.
//! The adapter comes from the environment (`ENGINE_BACKEND=vulkan`, `WGPU_ADAPTER_NAME`).

use std::time::Instant;

use engine::{parity, Context};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let out = args
        .iter()
        .position(|a| a == "--out")
        .and_then(|i| args.get(i + 1))
        .cloned();

    let ctx = Context::new()?;
    let info = ctx.info();
    println!("adapter: {} ({}, {})", info.name, info.backend, info.device_type);
    let cases = parity::cases(!quick);
    println!("{} cases ({})", cases.len(), if quick { "quick" } else { "full" });

    let start = Instant::now();
    let mut rows = Vec::with_capacity(cases.len());
    for case in &cases {
        let row = pollster::block_on(parity::run_case(&ctx, case));
        println!("{}", parity::markdown_row(&row));
        rows.push(row);
    }
    if let Some(path) = out {
        std::fs::write(&path, parity::markdown(&ctx, &rows))?;
        println!("wrote {path}");
    }
    println!("elapsed {:.1} s", start.elapsed().as_secs_f64());
    let (passed, failed) = parity::tally(&rows);
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
    Ok(())
}
