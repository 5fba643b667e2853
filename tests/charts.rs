//! The examples' charts (`train_mingru --plot`, `bench_chart`): the files are written, parse as
//! SVG, and hold the expected series.

#[path = "../examples/common/charts.rs"]
mod plot;

use std::path::{Path, PathBuf};

use plot::{Pair, Unit};

fn out_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("engine-charts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The file parsed as XML: its root must be `<svg>`. Returns the text of every `<text>`.
fn svg_texts(path: &Path) -> (String, Vec<String>) {
    let svg = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{}: not XML: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect();
    (svg, texts)
}

#[test]
fn charts_loss_curves_have_train_and_validation_series() {
    let train: Vec<(f64, f64)> = (1..=200)
        .map(|s| (s as f64, 4.0 / (1.0 + s as f64 * 0.02) + 0.05 * (s as f64).sin()))
        .collect();
    let validation: Vec<(f64, f64)> = (1..=5)
        .map(|i| (i as f64 * 40.0, 4.0 / (1.0 + i as f64 * 0.8)))
        .collect();
    let path = out_path("loss.svg");
    plot::loss_curves(&path, "minGRU on Shakespeare", &train, &validation).unwrap();
    let (svg, texts) = svg_texts(&path);
    for want in ["train", "validation", "step", "minGRU on Shakespeare"] {
        assert!(texts.iter().any(|t| t == want), "no text {want:?} in {texts:?}");
    }
    // One polyline per curve, with a vertex per point; a circle per validation point.
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let mut counts: Vec<usize> = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .map(|n| n.attribute("points").unwrap_or("").split_whitespace().count())
        .collect();
    counts.sort();
    assert!(counts.contains(&train.len()), "polyline vertex counts {counts:?}");
    assert!(counts.contains(&validation.len()), "polyline vertex counts {counts:?}");
    assert!(doc.descendants().filter(|n| n.has_tag_name("circle")).count() >= validation.len());
    assert!(plot::loss_curves(&out_path("empty.svg"), "x", &[], &[]).is_err());
}

fn sample_results() -> serde_json::Map<String, serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench/results_sample.json");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    json.as_object().unwrap().clone()
}

#[test]
fn charts_bench_pairs_follow_the_results_keys() {
    let pairs = plot::pairs(&sample_results());
    let cases: Vec<(&str, Unit, &str)> = pairs.iter().map(|p| (p.case.as_str(), p.unit, p.peer_name)).collect();
    assert_eq!(
        cases,
        vec![
            ("gpt2_decode", Unit::Ms, "transformers"),
            ("mixer_mingru_layer_fwdbwd", Unit::Ms, "PyTorch eager"),
            ("scan_linear_scan_lab_fwd", Unit::Ms, "PyTorch eager"),
            ("scan_linear_scan_lab_fwdbwd", Unit::Ms, "PyTorch eager"),
            ("scan_parallel_scan_log_large_fwd", Unit::Ms, "PyTorch eager"),
            ("copy", Unit::Gbps, "torch clone"),
            ("matmul_4096", Unit::Tflops, "cuBLAS"),
        ]
    );
    // Times: peer / engine; rates: engine / peer.
    let find = |c: &str| pairs.iter().find(|p| p.case == c).unwrap();
    assert!((find("scan_linear_scan_lab_fwd").speedup() - 0.373 / 0.074).abs() < 1e-12);
    assert!((find("matmul_4096").speedup() - 5.1 / 51.4).abs() < 1e-12);
    assert_eq!(
        find("copy").keys,
        ("copy_gbps".to_string(), "torch_copy_gbps".to_string())
    );
}

#[test]
fn charts_bench_chart_draws_engine_and_peer_bars() {
    let pairs: Vec<Pair> = plot::pairs(&sample_results());
    let path = out_path("bench.svg");
    plot::bench_chart(&path, "engine vs peers", &pairs).unwrap();
    let (svg, texts) = svg_texts(&path);
    for want in ["engine", "peer (same run)", "engine vs peers"] {
        assert!(texts.iter().any(|t| t == want), "no text {want:?} in {texts:?}");
    }
    for p in &pairs {
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with(&format!("{} vs {}", p.case, p.peer_name))),
            "no row label for {} in {texts:?}",
            p.case
        );
    }
    assert!(texts.iter().any(|t| t.contains("5.04x faster")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("10.08x slower")), "{texts:?}");
    // Two bars per case (plus the background and the legend swatches).
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let rects = doc.descendants().filter(|n| n.has_tag_name("rect")).count();
    assert!(rects >= 2 * pairs.len(), "{rects} rects for {} cases", pairs.len());
    assert!(plot::bench_chart(&out_path("none.svg"), "x", &[]).is_err());
}
