//! Charts for the examples, drawn with plotters' SVG backend (no system libraries, no fonts
//! needed: text stays `<text>` elements): training loss curves (`train_mingru --plot`) and the
//! benchmark results as engine vs peer per case (`bench_chart`).
//!
//! Shared by the examples and the tests with `#[path = "..."] mod charts;`.

#![allow(dead_code)]

use std::path::Path;

use plotters::prelude::*;

/// Chart errors carry a message (plotters' backend errors are not `Send`).
pub type Result<T> = std::result::Result<T, String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Series colours: the engine first, then its peer.
const ENGINE: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
const PEER: RGBColor = RGBColor(0xff, 0x7f, 0x0e);

/// Writes train and validation loss curves to the SVG file `path`.
///
/// `train` and `validation` are (step, loss) points; the train curve is usually every step,
/// the validation one every few. Series are labelled `train` and `validation` in the legend.
pub fn loss_curves(path: &Path, title: &str, train: &[(f64, f64)], validation: &[(f64, f64)]) -> Result<()> {
    let all = || train.iter().chain(validation);
    if all().next().is_none() {
        return Err("loss_curves: no points".into());
    }
    let x_max = all().map(|p| p.0).fold(1.0, f64::max);
    let (lo, hi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
        (lo.min(p.1), hi.max(p.1))
    });
    let pad = ((hi - lo) * 0.05).max(1e-3);
    let root = SVGBackend::new(path, (800, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..x_max, (lo - pad)..(hi + pad))
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("step")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_desc("loss (nats / character)")
        .draw()
        .map_err(err)?;
    chart
        .draw_series(LineSeries::new(train.iter().copied(), ENGINE.stroke_width(1)))
        .map_err(err)?
        .label("train")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], ENGINE.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(validation.iter().copied(), PEER.stroke_width(2)))
        .map_err(err)?
        .label("validation")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], PEER.stroke_width(2)));
    chart
        .draw_series(validation.iter().map(|&p| Circle::new(p, 3, PEER.filled())))
        .map_err(err)?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// What a benchmark figure measures, from its key's suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    /// `_ms`: a median time, lower is better.
    Ms,
    /// `_gbps`: bytes moved per second, higher is better.
    Gbps,
    /// `_tflops`: floating-point operations per second, higher is better.
    Tflops,
}

impl Unit {
    fn of(key: &str) -> Option<Unit> {
        if key.ends_with("_ms") {
            Some(Unit::Ms)
        } else if key.ends_with("_gbps") {
            Some(Unit::Gbps)
        } else if key.ends_with("_tflops") {
            Some(Unit::Tflops)
        } else {
            None
        }
    }

    fn axis(self) -> &'static str {
        match self {
            Unit::Ms => "median time, ms (log scale; shorter is better)",
            Unit::Gbps => "GB/s (log scale; longer is better)",
            Unit::Tflops => "TFLOP/s (log scale; longer is better)",
        }
    }
}

/// One case measured by the engine and by its peer in the same run.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    /// The engine's key without its unit, e.g. `scan_linear_scan_lab_fwd`.
    pub case: String,
    pub unit: Unit,
    pub engine: f64,
    pub peer: f64,
    /// Who the peer is, e.g. `PyTorch eager`.
    pub peer_name: &'static str,
    /// The two keys, e.g. `scan_linear_scan_lab_fwd_ms` and `eager_linear_scan_lab_fwd_ms`.
    pub keys: (String, String),
}

impl Pair {
    /// How many times faster the engine is (below 1: slower).
    pub fn speedup(&self) -> f64 {
        match self.unit {
            Unit::Ms => self.peer / self.engine,
            Unit::Gbps | Unit::Tflops => self.engine / self.peer,
        }
    }
}

/// Engine key prefix -> peer key prefix, as in `docs/src/benchmarks.md`; the first rule whose peer
/// key is present wins (so `matmul_f16_*` pairs with `torch_f16_*`, not `cublas_f16_*`).
const PEERS: &[(&str, &str, &str)] = &[
    ("scan_", "eager_", "PyTorch eager"),
    ("mixer_", "eager_mixer_", "PyTorch eager"),
    ("copy_", "torch_copy_", "torch clone"),
    ("matmul_f16_", "torch_f16_", "torch fp16"),
    ("matmul_", "cublas_", "cuBLAS"),
    ("gpt2_", "transformers_", "transformers"),
];

/// Every engine figure of a flat results object (`benches/results/h200.json`) that has a peer
/// figure: positive numbers on both sides, in key order grouped by unit. Keys without a peer,
/// nulls and non-numbers are left out.
pub fn pairs(results: &serde_json::Map<String, serde_json::Value>) -> Vec<Pair> {
    let number = |k: &str| results.get(k).and_then(|v| v.as_f64()).filter(|v| *v > 0.0);
    let mut out = vec![];
    for key in results.keys() {
        let (Some(unit), Some(engine)) = (Unit::of(key), number(key)) else {
            continue;
        };
        let found = PEERS.iter().find_map(|(mine, theirs, name)| {
            let rest = key.strip_prefix(mine)?;
            let peer_key = format!("{theirs}{rest}");
            number(&peer_key).map(|peer| (peer, *name, peer_key))
        });
        if let Some((peer, peer_name, peer_key)) = found {
            let case = key.rsplit_once('_').map(|(c, _)| c).unwrap_or(key).to_string();
            out.push(Pair {
                case,
                unit,
                engine,
                peer,
                peer_name,
                keys: (key.clone(), peer_key),
            });
        }
    }
    out.sort_by(|a, b| a.unit.cmp(&b.unit).then(a.case.cmp(&b.case)));
    out
}

/// Writes the engine-vs-peer chart of `pairs` to the SVG file `path`: one panel per unit,
/// one row per case with an `engine` bar and a peer bar, labelled with the speed-up.
pub fn bench_chart(path: &Path, title: &str, pairs: &[Pair]) -> Result<()> {
    if pairs.is_empty() {
        return Err("bench_chart: no case has both an engine and a peer figure".into());
    }
    let mut units: Vec<Unit> = pairs.iter().map(|p| p.unit).collect();
    units.dedup();
    const ROW: u32 = 34;
    const PANEL_EXTRA: u32 = 90;
    let height = 50 + pairs.len() as u32 * ROW + units.len() as u32 * PANEL_EXTRA;
    let root = SVGBackend::new(path, (1100, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(err)?;
    let sizes: Vec<u32> = units
        .iter()
        .map(|u| pairs.iter().filter(|p| p.unit == *u).count() as u32 * ROW + PANEL_EXTRA)
        .collect();
    let mut rest = root;
    for (i, unit) in units.iter().enumerate() {
        let rows: Vec<&Pair> = pairs.iter().filter(|p| p.unit == *unit).collect();
        let panel = if i + 1 < units.len() {
            let (top, bottom) = rest.split_vertically(sizes[i]);
            rest = bottom;
            top
        } else {
            rest.clone()
        };
        draw_panel(&panel, *unit, &rows, i == 0)?;
    }
    rest.present().map_err(err)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    unit: Unit,
    rows: &[&Pair],
    legend: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let values = || rows.iter().flat_map(|p| [p.engine, p.peer]);
    let lo = values().fold(f64::INFINITY, f64::min) / 2.0;
    // Room on the right for the legend.
    let hi = values().fold(0.0, f64::max) * 8.0;
    let n = rows.len();
    let labels: Vec<String> = rows
        .iter()
        .map(|p| {
            let s = p.speedup();
            let verdict = if s >= 1.0 {
                format!("{s:.2}x faster")
            } else {
                format!("{:.2}x slower", 1.0 / s)
            };
            format!("{} vs {} ({verdict})", p.case, p.peer_name)
        })
        .collect();
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(400)
        .build_cartesian_2d((lo..hi).log_scale(), -0.5..n as f64 - 0.5)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        // n labels over a range n long: the tick step is 1, at the rows' centres.
        .y_labels(n)
        .x_desc(unit.axis())
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 13))
        .x_labels(6)
        .x_label_formatter(&|v| {
            let s = format!("{v:.3}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        })
        .y_label_formatter(&|y| {
            let i = y.round();
            if (y - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                labels[n - 1 - i as usize].clone()
            } else {
                String::new()
            }
        })
        .draw()
        .map_err(err)?;
    // Row i from the top is drawn at y = n - 1 - i; the engine's bar above the peer's.
    let bar = |row: usize, value: f64, upper: bool, color: RGBColor| {
        let y = (n - 1 - row) as f64;
        let (y0, y1) = if upper { (y, y + 0.38) } else { (y - 0.38, y) };
        Rectangle::new([(lo, y0), (value, y1)], color.filled())
    };
    let engine = chart
        .draw_series(rows.iter().enumerate().map(|(i, p)| bar(i, p.engine, true, ENGINE)))
        .map_err(err)?;
    if legend {
        engine
            .label("engine")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], ENGINE.filled()));
    }
    let peer = chart
        .draw_series(rows.iter().enumerate().map(|(i, p)| bar(i, p.peer, false, PEER)))
        .map_err(err)?;
    if legend {
        peer.label("peer (same run)")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], PEER.filled()));
        chart
            .configure_series_labels()
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(err)?;
    }
    Ok(())
}
