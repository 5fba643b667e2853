//! The parity table: every case of `wgsl_compute::parity` on the chosen adapter (scans, mixers and
//! half products against the f64 CPU reference, the tape's gradient checks), or
//! (`--against cuda`) every row of the golden CUDA fixtures in `tests/fixtures/cuda`.
//!
//! ```text
//! cargo run --release -p wgsl-compute-dev --bin parity [-- --quick] [--against cuda] [--out parity.md]
//! ```
//! Prints one row per case and ends with `N passed, M failed`; exits non-zero on a failure.
//! The adapter comes from the environment (`ENGINE_BACKEND=vulkan`, `WGPU_ADAPTER_NAME`).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use wgsl_compute::parity::cuda::{cuda_cases, cuda_source, ModelFiles};
use wgsl_compute::parity::Case;
use wgsl_compute::{parity, Context};

/// The CUDA fixture rows, read from the repository (the GPT-2 case needs the tiny checkpoint).
fn cuda_rows() -> Result<Vec<Case>, Box<dyn std::error::Error>> {
    // The repository root: dev/ is one of its packages.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("dev/ is in the repository");
    let read = |p: &str| std::fs::read(root.join(p)).map_err(|e| format!("{p}: {e}"));
    let manifest = String::from_utf8(read("tests/fixtures/cuda/manifest.json")?)?;
    let model = ModelFiles {
        config: String::from_utf8(read("assets/models/tiny-random/config.json")?)?,
        safetensors: Arc::new(read("assets/models/tiny-random/model.safetensors")?),
    };
    println!("golden outputs: {}", cuda_source(&manifest)?);
    let fixtures = read("tests/fixtures/cuda/fixtures.safetensors")?;
    Ok(cuda_cases(&manifest, &fixtures, Some(&model))?
        .into_iter()
        .map(Case::Cuda)
        .collect())
}

const USAGE: &str = "usage: parity [--quick] [--against cuda] [--out FILE.md]
Runs every parity case on the adapter the environment picks: the scans, mixers and half products
against the f64 CPU reference, and the autograd tape's gradient checks (against finite
differences and the CPU tape); --against cuda: against the golden CUDA outputs in
tests/fixtures/cuda. Prints one row per case and exits non-zero on a failure. --quick runs the smaller set; --out writes the table.";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let out = args
        .iter()
        .position(|a| a == "--out")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let against = args
        .iter()
        .position(|a| a == "--against")
        .map(|i| args.get(i + 1).cloned().unwrap_or_default());

    let ctx = Context::new()?;
    let info = ctx.info();
    println!("adapter: {} ({:?}, {})", info.name, info.backend, info.device_type);
    let (cases, kind) = match against.as_deref() {
        None => (parity::cases(!quick), if quick { "quick" } else { "full" }),
        Some("cuda") => (cuda_rows()?, "against CUDA"),
        Some(other) => return Err(format!("--against {other:?}: only `cuda` is known").into()),
    };
    println!("{} cases ({kind})", cases.len());

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
