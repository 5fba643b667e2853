//! Draws the benchmark results as a chart of the engine vs its peer per case.
//!
//! ```text
//! cargo run --release -p wgsl-compute-dev --bin bench_chart -- [RESULTS.json] [--out CHART.svg]
//! ```
//! Reads a flat JSON object of figures (default `benches/results/h200.json`, the keys of
//! `docs/src/benchmarks.md`), pairs every engine figure with its peer measured in the same run
//! (`scan_*` with `eager_*`, `matmul_*` with `cublas_*`, `gpt2_*` with `transformers_*`, ...)
//! and writes an SVG beside it (`h200.svg`): one panel per unit, one row per case, labelled
//! with the speed-up. Keys without a peer and nulls are left out and listed.

#[path = "../../../examples/common/charts.rs"]
mod charts;

use std::path::PathBuf;

const USAGE: &str = "usage: bench_chart [RESULTS.json] [--out CHART.svg]
Charts engine vs peer per case from a flat JSON results object
(default benches/results/h200.json; the chart goes beside it as .svg).";

fn main() {
    let mut input = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("dev/ is in the repository")
        .join("benches/results/h200.json");
    let mut out = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return;
            }
            "--out" => out = it.next().map(PathBuf::from),
            s if s.starts_with("--") => {
                eprintln!("error: unknown option {s}\n{USAGE}");
                std::process::exit(2);
            }
            s => input = PathBuf::from(s),
        }
    }
    let out = out.unwrap_or_else(|| input.with_extension("svg"));
    if let Err(e) = run(&input, &out) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(input: &std::path::Path, out: &std::path::Path) -> Result<(), String> {
    let text = std::fs::read_to_string(input).map_err(|e| format!("{}: {e}", input.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", input.display()))?;
    let results = json
        .as_object()
        .ok_or_else(|| format!("{}: expected a flat JSON object", input.display()))?;
    let pairs = charts::pairs(results);
    let paired: std::collections::HashSet<&str> = pairs
        .iter()
        .flat_map(|p| [p.keys.0.as_str(), p.keys.1.as_str()])
        .collect();
    let unpaired: Vec<&String> = results.keys().filter(|k| !paired.contains(k.as_str())).collect();
    let name = input.file_stem().and_then(|s| s.to_str()).unwrap_or("results");
    charts::bench_chart(out, &format!("engine vs peers, same run ({name}.json)"), &pairs)?;
    for p in &pairs {
        println!(
            "{:<44} engine {:>10.4} {:<7} {:<14} {:>10.4}  {:.2}x",
            p.case,
            p.engine,
            format!("{:?}", p.unit).to_lowercase(),
            p.peer_name,
            p.peer,
            p.speedup()
        );
    }
    if !unpaired.is_empty() {
        println!(
            "without a peer figure (not charted): {}",
            unpaired.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    println!("wrote {} ({} cases)", out.display(), pairs.len());
    Ok(())
}
