//! The k x v affine scan on the GPU (every block size but k = v = 1, which runs the
//! channel-wise kernels of `linear_gpu`): the kernel sets, one for every (k, v) and
//! specialisations for the shapes that matter most ((2, 1) holds its state in a vec2, k = 8
//! two vec4s a column) with the same passes and side layout, the tuner's pick among them,
//! and their launches through the recurrence launch, forward and backward (the reverse scan
//! gives dB and dh0, a fully parallel pass dA).

use super::envelope::AffineDims;
use super::route::ScanOptions;
use crate::context::{Context, Gpu};
use crate::error::Result;
use crate::kernel::{shader, Binding, KernelDef, Params};
use crate::recurrence::launch::{groups, Columns, Launch, Passes};
use crate::recurrence::strategy::{Cost, Strategy};
use crate::tensor::Tensor;

const SCAN_BINDINGS: &[Binding] = &[
    Binding::Uniform,
    Binding::Read,
    Binding::Read,
    Binding::Read,
    Binding::ReadWrite,
    Binding::ReadWrite,
    Binding::ReadWrite,
];

const fn scan_kernel(entry: &'static str) -> KernelDef {
    KernelDef {
        name: "scan/matrix_affine_scan",
        wgsl: shader!("scan/matrix_affine_scan.wgsl"),
        entry,
        bindings: SCAN_BINDINGS,
    }
}

const fn matrix2_kernel(entry: &'static str) -> KernelDef {
    KernelDef::new("scan/matrix2", shader!("scan/matrix2.wgsl"), entry)
}

/// The kernels of one specialisation of the core: the passes of a scan (indexed by the
/// launch's `Pass`), the dA kernel, the invocations each spends per lane and per step.
struct Kernels {
    /// The set's name in the tuner's cache (`crate::tune::Family::MatrixScan`).
    name: &'static str,
    passes: Passes,
    grad_a: KernelDef,
    /// Invocations per lane of the walking passes and of the chunk reduce.
    columns: fn(&AffineDims) -> Columns,
    /// Invocations of the dA kernel per step (b, t, n).
    grad_a_per_step: fn(&AffineDims) -> usize,
    /// The block sizes ("K", "V") the scan passes and the dA kernel take as `override`
    /// constants (REVERSE every scan pass takes).
    scan_sizes: &'static [&'static str],
    grad_a_sizes: &'static [&'static str],
    /// The dtype slots (`kernel::dtype`) of the scan passes and of the dA kernel: the inputs,
    /// and where the kernel writes the call's dtype itself, the outputs.
    scan_slots: &'static [&'static str],
    grad_a_slots: &'static [&'static str],
    /// Whether H and dA are written in the call's dtype (else f32, narrowed after).
    writes_dtype: bool,
}

/// The slots of kernels that read the call's dtype and write f32 (their invocations own
/// value columns, whose elements share packed words with the neighbouring columns').
const READ_SLOTS: &[&str] = &["a", "x", "h0"];
const READ_GRAD_A_SLOTS: &[&str] = &["h", "h0"];

/// Every (k, v): one invocation per value column, k + v per chunk in the reduce.
const GENERIC: Kernels = Kernels {
    name: "generic",
    passes: [
        scan_kernel("scan_lanes"),
        scan_kernel("scan_chunk_reduce"),
        scan_kernel("scan_carries"),
        scan_kernel("scan_chunk_fixup"),
    ],
    grad_a: KernelDef {
        name: "scan/matrix_affine_scan_backward",
        wgsl: shader!("scan/matrix_affine_scan_backward.wgsl"),
        entry: "scan_backward_da",
        bindings: &[
            Binding::Uniform,
            Binding::Read,
            Binding::Read,
            Binding::Read,
            Binding::ReadWrite,
        ],
    },
    columns: |d| Columns {
        walk: d.v,
        reduce: d.v + d.k,
    },
    grad_a_per_step: |d| d.k * d.k,
    scan_sizes: &["K", "V"],
    grad_a_sizes: &["K", "V"],
    scan_slots: READ_SLOTS,
    grad_a_slots: READ_GRAD_A_SLOTS,
    writes_dtype: false,
};

/// (k, v) = (2, 1), `matrix_scan`: one invocation per lane (per chunk in the reduce) holding
/// the state in a vec2 (`shaders/scan/matrix2.wgsl`).
const MATRIX2: Kernels = Kernels {
    name: "matrix2",
    passes: [
        matrix2_kernel("scan_lanes"),
        matrix2_kernel("scan_chunk_reduce"),
        matrix2_kernel("scan_carries"),
        matrix2_kernel("scan_chunk_fixup"),
    ],
    grad_a: KernelDef::new(
        "scan/matrix2_backward",
        shader!("scan/matrix2_backward.wgsl"),
        "scan_backward_da",
    ),
    columns: |_| Columns { walk: 1, reduce: 1 },
    grad_a_per_step: |_| 1,
    scan_sizes: &[],
    grad_a_sizes: &[],
    // A step's h is one vec2 (one packed word of halves) and its dA one vec4 (two), each
    // written by one invocation: the kernels write the call's dtype themselves (the reverse
    // scan's G stays f32 for dA; see `scan_gpu`).
    scan_slots: &["a", "x", "h0", "out", "dh0"],
    grad_a_slots: &["g", "h", "h0", "da"],
    writes_dtype: true,
};

const fn affine8_kernel(entry: &'static str) -> KernelDef {
    KernelDef::new("scan/affine8", shader!("scan/affine8.wgsl"), entry)
}

/// k = 8, v >= 4 (see [`kernels`]; it runs any v correctly): one invocation per value column holding it in two vec4s, each workgroup
/// staging its lanes' transitions in workgroup memory (`shaders/scan/affine8.wgsl`). Columns
/// come in slots of max(v, 4) invocations (the reduce: v + 8 rounded up to 16 or 32); dA one
/// invocation per row of a step.
const AFFINE8: Kernels = Kernels {
    name: "affine8",
    passes: [
        affine8_kernel("scan_lanes"),
        affine8_kernel("scan_chunk_reduce"),
        affine8_kernel("scan_carries"),
        affine8_kernel("scan_chunk_fixup"),
    ],
    grad_a: KernelDef::new(
        "scan/affine8_backward",
        shader!("scan/affine8_backward.wgsl"),
        "scan_backward_da",
    ),
    columns: |d| Columns {
        walk: d.v.max(4),
        reduce: if d.v > 8 { 32 } else { 16 },
    },
    grad_a_per_step: |_| 8,
    scan_sizes: &["V"],
    grad_a_sizes: &["V"],
    scan_slots: READ_SLOTS,
    grad_a_slots: READ_GRAD_A_SLOTS,
    writes_dtype: false,
};

/// `names`' values for `d` ("K" = k, "V" = v).
fn sizes(names: &[&'static str], d: &AffineDims) -> Vec<(&'static str, f64)> {
    names
        .iter()
        .map(|&name| (name, if name == "K" { d.k } else { d.v } as f64))
        .collect()
}

/// The specialisation that runs `d` on `ctx`. k = 8 with v < 4 stays on the generic kernel:
/// the k = 8 kernel groups columns by max(v, 4), so at v = 1 three of four invocations idle
/// (the Givens k = 8 mixer's materialised scan, v = 1, measured 1.60 ms forward+backward on
/// the H200 against 1.41 ms on the generic kernel). In a browser k = 8 stays generic too:
/// Chromium's SwiftShader ran the k = 8 kernel's staged walk (two barriers a block of steps)
/// for 107 s on one parity row (B 2, T 65, v 4) and lost the device, and a page cannot
/// count on the adapter's name to tell a CPU adapter apart.
fn kernels(ctx: &Context, d: &AffineDims) -> &'static Kernels {
    let browser = ctx.info().backend == wgpu::Backend::BrowserWebGpu;
    match (d.k, d.v) {
        (2, 1) => &MATRIX2,
        (8, v) if v >= 4 && !browser => &AFFINE8,
        _ => &GENERIC,
    }
}

/// A kernel's output in the call's `dtype`: as it is where the kernel wrote that dtype
/// (matrix2); else the kernel read half inputs through its dtype slots but wrote f32
/// (invocations own value columns, and a column's elements share packed words with the
/// neighbouring columns'), and a half call's output is rounded here, once, by the conversion
/// that writes whole words (`Tensor::to_dtype`).
pub(super) fn narrowed(t: Tensor, dtype: crate::DType) -> Result<Tensor> {
    if t.dtype() == dtype {
        return Ok(t);
    }
    t.to_dtype(dtype)
}

/// A candidate of the k x v scans under `Strategy::Tuned` (`crate::tune::Family::MatrixScan`):
/// a kernel set and a walk, named for the cache.
#[derive(Clone, Copy)]
struct Pick {
    kernels: &'static Kernels,
    strategy: Strategy,
    name: &'static str,
}

/// The kernel set and the strategy a k x v scan runs: the hand rule's ([`kernels`], the
/// options' strategy) unless the options ask for `Strategy::Tuned`. Then the tuner picks among
/// the shape's kernel sets (its specialisation and `GENERIC`) under each walk that plans
/// differently here (Auto's, lanes, chunked); `run` is the scan under a forced pick.
#[allow(clippy::too_many_arguments)]
fn pick(
    ctx: &Context,
    gpu: &Gpu,
    op: &'static str,
    d: &AffineDims,
    dtype: crate::DType,
    reverse: bool,
    opts: &ScanOptions,
    run: impl Fn(&'static Kernels, Strategy) -> Result<()> + crate::tune::MaybeSync,
) -> (&'static Kernels, Strategy) {
    let hand = kernels(ctx, d);
    if opts.strategy != Strategy::Tuned {
        return (hand, opts.strategy);
    }
    // The hand rule's set first. k = 8 offers its kernel at every v (it runs any v; the rule
    // keeps v < 4 on the generic one), except in a browser (see `kernels`).
    let browser = ctx.info().backend == wgpu::Backend::BrowserWebGpu;
    let special: Option<&'static Kernels> = match (d.k, d.v) {
        (2, 1) => Some(&MATRIX2),
        (8, _) if !browser => Some(&AFFINE8),
        _ => None,
    };
    // By name: each use of a `const` may have an address of its own.
    let mut sets: Vec<&'static Kernels> = vec![&GENERIC];
    if let Some(set) = special {
        if hand.name == set.name {
            sets.insert(0, set);
        } else {
            sets.push(set);
        }
    }
    let walk = |s: Strategy| {
        let columns = (hand.columns)(d);
        Launch::new(gpu, s, d.lanes(), d.t, reverse, columns, Cost::block(d.k))
            .walk
            .kind()
    };
    let auto = walk(Strategy::Auto);
    let mut walks = vec![Strategy::Auto];
    walks.extend(
        [Strategy::Lanes, Strategy::Chunked { chunk: None }]
            .into_iter()
            .filter(|&s| walk(s) != auto),
    );
    // A pick's name written out, so a cache entry names a candidate with a static string.
    let name = |set: &str, s: Strategy| -> &'static str {
        match (set, s) {
            ("affine8", Strategy::Auto) => "affine8 auto",
            ("affine8", Strategy::Lanes) => "affine8 lanes",
            ("affine8", _) => "affine8 chunked",
            ("matrix2", Strategy::Auto) => "matrix2 auto",
            ("matrix2", Strategy::Lanes) => "matrix2 lanes",
            ("matrix2", _) => "matrix2 chunked",
            (_, Strategy::Auto) => "generic auto",
            (_, Strategy::Lanes) => "generic lanes",
            _ => "generic chunked",
        }
    };
    let picks: Vec<Pick> = sets
        .iter()
        .flat_map(|&kernels| {
            walks.iter().map(move |&strategy| Pick {
                kernels,
                strategy,
                name: name(kernels.name, strategy),
            })
        })
        .collect();
    let key = || {
        let dtype = dtype.to_string();
        crate::tune::key::shape_key(
            &[("lanes", d.lanes()), ("t", d.t)],
            &[],
            &[
                op,
                if reverse { "reverse" } else { "" },
                &format!("k{} v{}", d.k, d.v),
                &dtype,
            ],
        )
    };
    let chosen = ctx.choose(
        crate::tune::Family::MatrixScan,
        key,
        picks[0],
        &picks[1..],
        |p| p.name,
        |p| run(p.kernels, p.strategy),
    );
    (chosen.kernels, chosen.strategy)
}

/// One k x v scan's arguments: `x` is B forward, dH in reverse; h0 is read forward only.
#[derive(Clone, Copy)]
pub(super) struct Scan<'a> {
    pub gpu: &'a Gpu,
    pub op: &'static str,
    pub d: &'a AffineDims,
    pub a: &'a Tensor,
    pub x: &'a Tensor,
    pub h0: Option<&'a Tensor>,
    pub reverse: bool,
}

/// One scan with the kernels and the strategy [`pick`] gives. Returns `out` (H, or G = dB)
/// and dh0 (written in reverse; one unused element forward).
pub(super) fn scan_gpu(s: Scan<'_>, opts: &ScanOptions) -> Result<(Tensor, Tensor)> {
    let ctx = s.a.context();
    let (kernels, strategy) = pick(ctx, s.gpu, s.op, s.d, s.a.dtype(), s.reverse, opts, |k, st| {
        scan_with(s, k, st).map(drop)
    });
    scan_with(s, kernels, strategy)
}

/// [`scan_gpu`] with `kernels` under `strategy`.
fn scan_with(s: Scan<'_>, kernels: &'static Kernels, strategy: Strategy) -> Result<(Tensor, Tensor)> {
    let Scan {
        gpu,
        op,
        d,
        a,
        x,
        h0,
        reverse,
    } = s;
    let ctx = a.context();
    let (a, x) = (a.contiguous()?, x.contiguous()?);
    let h0 = h0.map(|t| t.contiguous()).transpose()?;
    let dtype = a.dtype();
    // The adjoint G = dB stays f32 when dA is computed from it (rounding it first would round
    // dA twice); it is narrowed after, with dh0.
    let out_dtype = if kernels.writes_dtype && !reverse {
        dtype
    } else {
        crate::DType::F32
    };
    let out = Tensor::uninit_dtype(ctx, &d.h_shape(), out_dtype, op)?;
    let dh0 = if reverse {
        Tensor::uninit_dtype(ctx, &d.h0_shape(), out_dtype, op)?
    } else {
        Tensor::uninit(ctx, &[1], op)?
    };
    let mut constants = sizes(kernels.scan_sizes, d);
    constants.push(("REVERSE", if reverse { 1.0 } else { 0.0 }));
    let lanes = d.lanes();
    let columns = (kernels.columns)(d);
    let launch = Launch::new(gpu, strategy, lanes, d.t, reverse, columns, Cost::block(d.k));
    // f32 scratch: the chunks' values, or a segmented lane walk's state (matrix2 resumes from
    // it; the f32-output kernels resume from out).
    let side = match launch.chunks() {
        None if launch.segmented() => Tensor::uninit(ctx, &[lanes * d.k * d.v], op)?,
        None => Tensor::uninit(ctx, &[1], op)?,
        Some((_, chunks)) => Tensor::uninit(ctx, &[lanes * chunks * d.k * (d.v + d.k)], op)?,
    };
    // An absent h0 binds A again: both are read-only, and the kernel does not read it.
    let h0_buf = match &h0 {
        Some(t) => t.typed_buffer(op)?,
        None => a.typed_buffer(op)?,
    };
    let buffers = [
        a.typed_buffer(op)?,
        x.typed_buffer(op)?,
        h0_buf,
        out.typed_buffer(op)?,
        side.gpu_buffer(op)?,
        dh0.typed_buffer(op)?,
    ];
    let tail = Params::new().usize(d.n).u32(h0.is_some() as u32);
    let slots: Vec<(&str, crate::DType)> = kernels
        .scan_slots
        .iter()
        .map(|&s| (s, if ["out", "dh0"].contains(&s) { out_dtype } else { dtype }))
        .collect();
    launch.run_passes(gpu, &kernels.passes, &slots, &constants, &tail, &buffers)?;
    Ok((out, dh0))
}

/// dA_t = G_t H_{t-1}^T (H_{-1} = h0 or zero), fully parallel over the steps.
pub(super) fn backward_da_gpu(
    gpu: &Gpu,
    op: &'static str,
    d: &AffineDims,
    g: &Tensor,
    h: &Tensor,
    h0: Option<&Tensor>,
) -> Result<Tensor> {
    let ctx = g.context();
    let h = h.contiguous()?;
    let h0 = h0.map(|t| t.contiguous()).transpose()?;
    let kernels = kernels(ctx, d);
    let dtype = h.dtype();
    let da_dtype = if kernels.writes_dtype { dtype } else { crate::DType::F32 };
    let da = Tensor::uninit_dtype(ctx, &d.a_shape(), da_dtype, op)?;
    let total = d.b * d.t * d.n * (kernels.grad_a_per_step)(d);
    let params = Params::new()
        .usize(total)
        .usize(d.n)
        .usize(d.t)
        .u32(h0.is_some() as u32);
    let h0_buf = match &h0 {
        Some(t) => t.typed_buffer(op)?,
        None => h.typed_buffer(op)?,
    };
    let slots: Vec<(&str, crate::DType)> = kernels
        .grad_a_slots
        .iter()
        .map(|&s| match s {
            "g" => (s, g.dtype()),
            "da" => (s, da_dtype),
            _ => (s, dtype),
        })
        .collect();
    let kernel = gpu.typed_kernel(&kernels.grad_a, &slots, &sizes(kernels.grad_a_sizes, d))?;
    gpu.dispatch(
        &kernel,
        &params,
        &[g.typed_buffer(op)?, h.typed_buffer(op)?, h0_buf, da.typed_buffer(op)?],
        groups(total),
    )?;
    Ok(da)
}
