//! The route of a scan: the GPU kernel or the CPU reference, which one runs it.
//!
//! `ENGINE_SCAN=auto|cpu|gpu`, or a per-call
//! [`ScanOptions::route`] that wins over the environment:
//! - `cpu` runs the f64 CPU reference (reading device inputs back, uploading the result);
//! - `auto` runs the GPU kernel and, when the input is outside the kernel's envelope
//!   ([`Error::Fallback`]), warns once per process and runs the reference; on the CPU
//!   context it runs the reference;
//! - `gpu` demands the kernel: a fallback is returned as the error, and a CPU context is an
//!   error, so a benchmark can never measure the wrong path.

use std::sync::Once;

use ndarray::ArrayD;

use super::Strategy;
use crate::context::{Context, Gpu};
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Which implementation runs a scan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Route {
    /// The GPU kernel, the CPU reference outside its envelope (one warning per process).
    #[default]
    Auto,
    /// The CPU reference (f64 accumulation).
    Cpu,
    /// The GPU kernel or an error.
    Gpu,
}

impl Route {
    /// Parses `auto`, `cpu`, `gpu`, case-insensitively.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Route::Auto),
            "cpu" => Ok(Route::Cpu),
            "gpu" => Ok(Route::Gpu),
            other => Err(Error::value("ENGINE_SCAN", "ENGINE_SCAN", "auto, cpu or gpu", other)),
        }
    }

    /// The mode `ENGINE_SCAN` asks for (`auto` when unset).
    pub fn from_env() -> Result<Self> {
        match std::env::var("ENGINE_SCAN") {
            Ok(s) => Self::parse(&s),
            Err(std::env::VarError::NotPresent) => Ok(Route::Auto),
            Err(std::env::VarError::NotUnicode(v)) => Err(Error::value(
                "ENGINE_SCAN",
                "ENGINE_SCAN",
                "auto, cpu or gpu",
                format!("{v:?} (not UTF-8)"),
            )),
        }
    }
}

/// Per-call options of every scan (`Default`: the environment's route, automatic strategy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScanOptions {
    /// Overrides `ENGINE_SCAN` for this call when set.
    pub route: Option<Route>,
    /// How the GPU kernel walks T.
    pub strategy: Strategy,
}

impl ScanOptions {
    /// Options with this route and the automatic strategy.
    pub fn route(r: Route) -> Self {
        ScanOptions {
            route: Some(r),
            ..Self::default()
        }
    }

    /// These options with `strategy`.
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }
}

static FALLBACK_WARNING: Once = Once::new();

/// Runs `gpu` or `cpu` as the route decides for `op` on `ctx`.
pub(crate) fn run<R>(
    op: &'static str,
    ctx: &Context,
    opts: &ScanOptions,
    gpu: impl FnOnce(&Gpu) -> Result<R>,
    cpu: impl FnOnce() -> Result<R>,
) -> Result<R> {
    let mode = match opts.route {
        Some(d) => d,
        None => Route::from_env()?,
    };
    match (mode, ctx.gpu()) {
        (Route::Cpu, _) | (Route::Auto, None) => cpu(),
        (Route::Gpu, None) => Err(Error::Unsupported {
            op,
            message: "route `gpu` needs a GPU context; this is the CPU reference context".into(),
        }),
        (Route::Gpu, Some(g)) => gpu(g),
        (Route::Auto, Some(g)) => match gpu(g) {
            Err(Error::Fallback { op, reason }) => {
                FALLBACK_WARNING.call_once(|| {
                    let msg = format!(
                        "engine: {op}: {reason}; running the CPU reference (ENGINE_SCAN=auto warns once per process)"
                    );
                    log::warn!("{msg}");
                    eprintln!("{msg}");
                });
                cpu()
            }
            other => other,
        },
    }
}

/// The elements of `t` as a host array, reading a device tensor back (native only: the CPU
/// path of a GPU context needs a blocking readback).
pub(crate) fn host(t: &Tensor, op: &'static str) -> Result<ArrayD<f32>> {
    t.expect_dtype(op, "input", &[crate::DType::F32])?;
    if let Some(a) = t.host_array() {
        return a;
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = op;
        t.to_array()
    }
    #[cfg(target_arch = "wasm32")]
    Err(Error::Unsupported {
        op,
        message: "the CPU reference path reads device tensors back, which blocks; not available on wasm".into(),
    })
}

/// [`host`] of a tensor of any dtype, widened to f32 (exact): the reference of a half scan
/// computes on the values the kernel reads.
pub(crate) fn host_widened(t: &Tensor, op: &'static str) -> Result<ArrayD<f32>> {
    match t.dtype() {
        crate::DType::F32 => host(t, op),
        _ if t.host_array().is_some() => t.host_widened(op),
        _ => host(&t.to_dtype(crate::DType::F32)?, op),
    }
}

/// [`host_widened`] of an optional tensor.
pub(crate) fn host_widened_opt(t: Option<&Tensor>, op: &'static str) -> Result<Option<ArrayD<f32>>> {
    t.map(|t| host_widened(t, op)).transpose()
}

/// A reference result as a tensor of `ctx` in `dtype` (rounded to nearest even once).
pub(crate) fn from_host_as(ctx: &Context, a: ArrayD<f32>, dtype: crate::DType) -> Result<Tensor> {
    match dtype {
        crate::DType::F32 => Tensor::from_host(ctx, a),
        _ => {
            let shape = a.shape().to_vec();
            let data: Vec<f32> = a.iter().copied().collect();
            Tensor::from_slice_as(ctx, &shape, &data, dtype)
        }
    }
}
