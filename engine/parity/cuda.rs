//! Parity against golden CUDA outputs: every case of `tests/fixtures/cuda` (made by
//! `make_fixtures.py` with PyTorch on an NVIDIA GPU, TF32 off) run through the engine's public
//! API on a context and compared under the tolerance gates of `crate::check::gates`.
//!
//! Wasm-safe: no file I/O and no blocking. The caller hands over the manifest text, the
//! fixture safetensors bytes and, for the GPT-2 case, the model files; [`cuda_cases`] turns
//! them into [`CudaCase`]s (one per row: forward, backward or generate) and [`run_case`]
//! reads results back with `to_vec_async`.
//!
//! Manifest case: `op`, `params`, `inputs` {arg: tensor}, `outputs` {name: tensor}. Scans and
//! element scans record `out`, `grad_out` (a random upstream gradient g) and `grad_<input>` =
//! d sum(out * g) / d input; the GPT-2 case records `logits` (T, V) and, in `params`, the
//! `prompt` and the 10 greedy ids transformers `generated`.

use std::collections::BTreeMap;
use std::sync::Arc;

use ndarray::{ArrayD, IxDyn};
use serde_json::Value;

use super::Row;
use crate::check::{compare, gates, Gate};
use crate::context::Context;
use crate::element_scan::spec_programs::{MAX_PLUS_REVERSE_SCAN, NORM_CAPPED_SCAN, TANH_SCAN};
use crate::element_scan::{Bindings, ElementScan};
use crate::error::{Error, Result};
use crate::generate::Generate;
use crate::generate::Sampling;
use crate::io::safetensors;
use crate::models::gpt2::{Config, Gpt2, Weights};
use crate::tensor::Tensor;
use crate::{ops, scan};

/// A GPT-2 checkpoint held in memory: `config.json` text and `model.safetensors` bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFiles {
    /// The `config.json` text.
    pub config: String,
    /// The `model.safetensors` bytes.
    pub safetensors: Arc<Vec<u8>>,
}

/// One recorded tensor: shape and row-major f32 data.
#[derive(Clone, Debug, PartialEq)]
pub struct Fixture {
    /// Dimensions.
    pub shape: Vec<usize>,
    /// Elements in row-major order.
    pub data: Vec<f32>,
}

/// What a row checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The output `out` (or `logits`).
    Forward,
    /// Every `grad_<input>` given `grad_out`.
    Backward,
    /// The greedy tokens of the GPT-2 case, which must be identical.
    Generate,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Forward => "forward",
            Part::Backward => "backward",
            Part::Generate => "generate",
        }
    }
}

/// One CUDA parity row: a manifest case and the part of it checked.
#[derive(Clone, Debug, PartialEq)]
pub struct CudaCase {
    /// The manifest's case name, e.g. `linear_scan_B2_T7_D33`.
    pub name: String,
    /// The manifest's op, e.g. `matrix_affine_scan`, `element_scan_tanh`, `gpt2`.
    pub op: String,
    /// The manifest's parameters of the case (shapes, flags), as JSON.
    pub params: Value,
    /// Which part of the case this row checks.
    pub part: Part,
    /// Recorded inputs by name.
    pub inputs: BTreeMap<String, Fixture>,
    /// Recorded CUDA outputs by name.
    pub outputs: BTreeMap<String, Fixture>,
    /// The checkpoint, for the `gpt2` op only.
    pub model: Option<ModelFiles>,
}

const OP: &str = "parity::cuda";

fn io(message: impl Into<String>) -> Error {
    Error::Io {
        what: "CUDA fixtures".into(),
        message: message.into(),
    }
}

/// The manifest's `meta` as one line: torch version, GPU, seed and script.
pub fn cuda_source(manifest: &str) -> Result<String> {
    let m: Value = serde_json::from_str(manifest).map_err(|e| io(e.to_string()))?;
    let meta = &m["meta"];
    let text = |k: &str| meta[k].as_str().unwrap_or("?").to_string();
    Ok(format!(
        "torch {} on {} (seed {}, {})",
        text("torch"),
        text("gpu"),
        meta["seed"],
        text("script")
    ))
}

/// The rows of the fixtures: scans and element scans give a forward and a backward row,
/// tensor ops a forward row, GPT-2 a forward (logits) and a generate row (which need `model`).
pub fn cuda_cases(manifest: &str, fixtures: &[u8], model: Option<&ModelFiles>) -> Result<Vec<CudaCase>> {
    let m: Value = serde_json::from_str(manifest).map_err(|e| io(e.to_string()))?;
    let file = safetensors::parse(fixtures, "fixtures.safetensors")?;
    let tensors = |map: &Value| -> Result<BTreeMap<String, Fixture>> {
        let Some(map) = map.as_object() else {
            return Err(io("inputs/outputs must be objects"));
        };
        map.iter()
            .map(|(arg, name)| {
                let name = name
                    .as_str()
                    .ok_or_else(|| io(format!("{arg}: tensor name is not a string")))?;
                let t = file
                    .get(name)
                    .ok_or_else(|| io(format!("tensor {name} is not in the fixtures")))?;
                let fixture = Fixture {
                    shape: t.shape.clone(),
                    data: t.to_f32(name)?,
                };
                Ok((arg.clone(), fixture))
            })
            .collect()
    };
    let cases = m["cases"].as_array().ok_or_else(|| io("no `cases` array"))?;
    let mut out = vec![];
    for c in cases {
        let name = c["name"].as_str().ok_or_else(|| io("a case without a name"))?;
        let op = c["op"].as_str().ok_or_else(|| io(format!("{name}: no op")))?;
        let parts: &[Part] = match op {
            "matmul" | "softmax" | "layer_norm" | "gelu" => &[Part::Forward],
            "gpt2" => &[Part::Forward, Part::Generate],
            _ => &[Part::Forward, Part::Backward],
        };
        let model = match op {
            "gpt2" => Some(
                model
                    .cloned()
                    .ok_or_else(|| io(format!("{name}: the gpt2 case needs the model files")))?,
            ),
            _ => None,
        };
        let (inputs, outputs) = (tensors(&c["inputs"])?, tensors(&c["outputs"])?);
        for &part in parts {
            out.push(CudaCase {
                name: name.to_string(),
                op: op.to_string(),
                params: c["params"].clone(),
                part,
                inputs: inputs.clone(),
                outputs: outputs.clone(),
                model: model.clone(),
            });
        }
    }
    Ok(out)
}

impl CudaCase {
    /// The case as the table prints it: the parameters (numbers and flags as `k=v`, lists by
    /// length), and the input shapes where the parameters do not give them.
    pub fn shape(&self) -> String {
        let mut parts: Vec<String> = match self.params.as_object() {
            Some(map) => map
                .iter()
                .filter_map(|(k, v)| match v {
                    Value::Number(n) => Some(format!("{k}={n}")),
                    Value::Bool(b) => Some(format!("{k}={b}")),
                    Value::Array(a) => Some(format!("{k}={} ids", a.len())),
                    _ => None,
                })
                .collect(),
            None => vec![],
        };
        if matches!(self.op.as_str(), "softmax" | "layer_norm" | "gelu") {
            parts.extend(self.inputs.iter().map(|(arg, f)| format!("{arg}{:?}", f.shape)));
        }
        parts.join(" ")
    }

    /// The gate of this row (`crate::check::gates`); the generate row allows no differing token.
    pub fn gate(&self) -> Gate {
        let backward = self.part == Part::Backward;
        match self.op.as_str() {
            "parallel_scan_log" if backward => gates::SCAN_LOG_BACKWARD,
            "parallel_scan_log" => gates::SCAN_LOG,
            "linear_scan" | "matrix_scan" | "matrix_affine_scan" if backward => gates::SCAN_AFFINE_BACKWARD,
            "linear_scan" | "matrix_scan" | "matrix_affine_scan" => gates::SCAN_AFFINE,
            "gpt2" if self.part == Part::Generate => Gate::new(0.0, 0.0),
            "gpt2" => gates::LOGITS,
            op if op.starts_with("element_scan") && backward => gates::ELEMENT_SCAN_BACKWARD,
            op if op.starts_with("element_scan") => gates::ELEMENT_SCAN,
            _ => gates::TENSOR,
        }
    }

    fn output(&self, name: &str) -> Result<&Fixture> {
        self.outputs
            .get(name)
            .ok_or_else(|| io(format!("{}: no output `{name}`", self.name)))
    }

    fn upload(&self, ctx: &Context, arg: &str) -> Result<Tensor> {
        let f = self
            .inputs
            .get(arg)
            .ok_or_else(|| io(format!("{}: no input `{arg}`", self.name)))?;
        Tensor::from_slice(ctx, &f.shape, &f.data)
    }

    fn ids(&self, key: &str) -> Result<Vec<u32>> {
        let list = self.params[key].as_array().and_then(|a| {
            a.iter()
                .map(|v| v.as_u64().and_then(|i| u32::try_from(i).ok()))
                .collect::<Option<Vec<u32>>>()
        });
        list.ok_or_else(|| io(format!("{}: params.{key} is not a list of token ids", self.name)))
    }
}

/// Runs one row on `ctx` and compares it with the CUDA outputs. A failing row carries, in
/// `error`, the output and its worst element (or the error that stopped it).
pub async fn run_case(ctx: &Context, c: &CudaCase) -> Row {
    let gate = c.gate();
    let mut row = Row::pending(c.op.clone(), c.part.name(), c.shape(), "default".to_string(), gate);
    if c.part == Part::Generate {
        match generate(ctx, c).await {
            Ok((got, want)) => {
                let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count() + got.len().abs_diff(want.len());
                row.max_abs_err = wrong as f64;
                row.passed = wrong == 0;
                if !row.passed {
                    row.error = Some(format!("tokens {got:?}, CUDA {want:?}"));
                }
            }
            Err(e) => row.error = Some(e.to_string()),
        }
        return row;
    }
    match outputs(ctx, c).await {
        Ok(pairs) => {
            row.passed = true;
            row.max_abs_err = 0.0;
            // Every recorded output of this part must have been produced.
            let wanted = c.outputs.keys().filter(|k| match c.part {
                Part::Backward => k.starts_with("grad_") && *k != "grad_out",
                _ => !k.starts_with("grad_"),
            });
            for name in wanted {
                if !pairs.iter().any(|p| &p.0 == name) {
                    row.passed = false;
                    row.error = Some(format!("the engine gave no `{name}`"));
                }
            }
            for (name, got) in pairs {
                let want = match c.output(&name) {
                    Ok(w) => w,
                    Err(e) => {
                        row.passed = false;
                        row.error = Some(e.to_string());
                        break;
                    }
                };
                let cmp = compare(&got, &want.data, gate);
                row.max_abs_err = row.max_abs_err.max(cmp.max_abs);
                if !cmp.ok && row.passed {
                    row.error = Some(format!("{name}: {cmp}"));
                }
                row.passed &= cmp.ok;
            }
        }
        Err(e) => row.error = Some(e.to_string()),
    }
    row
}

/// Reads every tensor back: (fixture output name, values).
async fn read(list: Vec<(&str, Tensor)>) -> Result<Vec<(String, Vec<f32>)>> {
    let mut out = Vec::with_capacity(list.len());
    for (name, t) in list {
        out.push((name.to_string(), t.to_vec_async().await?));
    }
    Ok(out)
}

/// The engine's outputs of the row, named as the fixtures name them.
async fn outputs(ctx: &Context, c: &CudaCase) -> Result<Vec<(String, Vec<f32>)>> {
    let backward = c.part == Part::Backward;
    let grad_out = || -> Result<Tensor> {
        let g = c.output("grad_out")?;
        Tensor::from_slice(ctx, &g.shape, &g.data)
    };
    let up = |arg: &str| c.upload(ctx, arg);
    let list = match c.op.as_str() {
        "linear_scan" => {
            let (a, b, h0) = (up("a")?, up("b")?, up("h0")?);
            let h = scan::linear_scan(&a, &b, Some(&h0))?;
            if backward {
                let g = scan::linear_scan_backward(&a, Some(&h0), &h, &grad_out()?)?;
                vec![("grad_a", g.da), ("grad_b", g.db), ("grad_h0", g.dh0)]
            } else {
                vec![("out", h)]
            }
        }
        "parallel_scan_log" => {
            let (lc, lv) = (up("log_coeffs")?, up("log_values")?);
            let h = scan::parallel_scan_log(&lc, &lv)?;
            if backward {
                let g = scan::parallel_scan_log_backward(&lc, &lv, &h, &grad_out()?)?;
                vec![("grad_log_coeffs", g.d_log_coeffs), ("grad_log_values", g.d_log_values)]
            } else {
                vec![("out", h)]
            }
        }
        "matrix_scan" => {
            let (a, b) = (up("A")?, up("b")?);
            let h = scan::matrix_scan(&a, &b, None)?;
            if backward {
                let g = scan::matrix_scan_backward(&a, None, &h, &grad_out()?)?;
                vec![("grad_A", g.da), ("grad_b", g.db)]
            } else {
                vec![("out", h)]
            }
        }
        "matrix_affine_scan" => {
            let (a, b) = (up("A")?, up("B")?);
            let h = scan::matrix_affine_scan(&a, &b, None)?;
            if backward {
                let g = scan::matrix_affine_scan_backward(&a, None, &h, &grad_out()?)?;
                vec![("grad_A", g.da), ("grad_B", g.db)]
            } else {
                vec![("out", h)]
            }
        }
        "element_scan_tanh" | "element_scan_norm_capped" | "element_scan_max_plus_reverse" => {
            return element_scan(ctx, c).await;
        }
        "matmul" => vec![("out", ops::matmul(&up("a")?, &up("b")?)?)],
        "softmax" => {
            let causal = c.params["causal"].as_bool().unwrap_or(false).then_some(0);
            vec![("out", ops::softmax_last(&up("x")?, causal)?)]
        }
        "layer_norm" => {
            let eps = c.params["eps"]
                .as_f64()
                .ok_or_else(|| io(format!("{}: params.eps is not a number", c.name)))?;
            vec![(
                "out",
                ops::layer_norm(&up("x")?, &up("gamma")?, &up("beta")?, eps as f32)?,
            )]
        }
        "gelu" => vec![("out", ops::gelu(&up("x")?)?)],
        "gpt2" => vec![("logits", model(ctx, c)?.forward(&c.ids("prompt")?)?)],
        other => {
            return Err(Error::Unsupported {
                op: OP,
                message: format!("{}: unknown op {other}", c.name),
            })
        }
    };
    read(list).await
}

/// One of the spec's element-scan example programs from its text, bound to the fixture's inputs and
/// its numeric parameters (batch, time, heads, width).
async fn element_scan(ctx: &Context, c: &CudaCase) -> Result<Vec<(String, Vec<f32>)>> {
    let text = match c.op.as_str() {
        "element_scan_tanh" => TANH_SCAN,
        "element_scan_norm_capped" => NORM_CAPPED_SCAN,
        _ => MAX_PLUS_REVERSE_SCAN,
    };
    let array = |f: &Fixture| {
        ArrayD::from_shape_vec(IxDyn(&f.shape), f.data.clone()).map_err(|e| io(format!("{}: {e}", c.name)))
    };
    let mut bindings = Bindings::new();
    for (arg, f) in &c.inputs {
        bindings = bindings.tensor(arg, array(f)?);
    }
    if let Some(params) = c.params.as_object() {
        for (k, v) in params {
            if let Some(n) = v.as_f64() {
                bindings = bindings.number(k, n);
            }
        }
    }
    let program = ElementScan::from_sexpr(text, &bindings)?;
    if c.part == Part::Forward {
        return read(vec![("out", program.run(ctx)?)]).await;
    }
    let grads = program.grad(ctx, &array(c.output("grad_out")?)?)?;
    let mut out = vec![];
    for (name, t) in grads {
        out.push((format!("grad_{name}"), t.to_vec_async().await?));
    }
    Ok(out)
}

/// The case's checkpoint on `ctx`.
fn model(ctx: &Context, c: &CudaCase) -> Result<Gpt2> {
    let files = c
        .model
        .as_ref()
        .ok_or_else(|| io(format!("{}: no model files", c.name)))?;
    let config = Config::from_json(&files.config, "config.json")?;
    let weights = Weights::from_safetensors(config, &files.safetensors, "model.safetensors")?;
    Gpt2::new(ctx, &weights)
}

/// (the engine's greedy ids, transformers' ids) after the prompt.
async fn generate(ctx: &Context, c: &CudaCase) -> Result<(Vec<u32>, Vec<u32>)> {
    let want = c.ids("generated")?;
    let got = model(ctx, c)?
        .generate_async(&c.ids("prompt")?, want.len(), Sampling::Greedy, |_| {})
        .await?;
    Ok((got, want))
}
