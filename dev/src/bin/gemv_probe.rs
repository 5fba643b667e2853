//! The gemv probe (issue #43): what a decode projection `y = x W` costs on this adapter when
//! it runs the way a decode plan runs it, many dependent dispatches back to back, and which
//! kernel shape keeps its weight loads in flight.
//!
//! Each figure is a chain of `CHAIN` dispatches in one compute pass (a barrier between them,
//! as in a plan), each on its own slice of a weight buffer larger than the L2, timed by GPU
//! timestamps around the chain: microseconds per dispatch and GB/s of the weight bytes. The
//! kernels are generated per shape (K is a constant, every load a named register):
//!
//! - `empty`: one workgroup writing one value, the chain's floor per dispatch;
//! - `read`: every weight read once by a grid of vec4 loads, the bytes' floor;
//! - `kn c4 uU`: W as stored by GPT-2, (K, N) row-major: a workgroup of 256 owns c4 vec4
//!   columns and splits K into 256 / c4 slices, each invocation issues U rows' loads before
//!   using them, the slices folded through subgroup shuffles and one shared-memory pass;
//! - `nk wgW rR`: W transposed, (N, K): a subgroup per R output rows, each lane issuing its
//!   loads along K before the dot products, one subgroup sum, no barrier;
//! - `engine cC [ln]`: the engine's own kernel (`generate/ln_matvec_subgroup.wgsl`) with C vec4
//!   columns a workgroup, its layer norm fused in or not (with it, y is not checked).
//!
//! f32 and f16 weights (`--f16`), the shapes of GPT-2 124M and 1.5B. The last dispatch's y is
//! checked against the host.
//!
//! ```text
//! cargo run --release -p wgsl-compute-dev --bin gemv_probe -- [--quick] [--json out.json]
//! ```

#[path = "common/peer.rs"]
mod peer;

use std::fmt::Write as _;

use wgsl_compute::check::Rng;
use wgsl_compute::Context;

const USAGE: &str = "Times chains of decode projections y = x W (GPT-2 124M and 1.5B shapes, f32 and f16
weights) in several kernel shapes beside an empty dispatch and a plain read of the weights:
microseconds per dispatch and GB/s of the weight bytes (see the file's header).";

/// Dispatches timed together.
const CHAIN: usize = 48;

#[derive(Clone, Copy, Debug)]
enum Kind {
    Empty,
    Read,
    Kn {
        c4: usize,
        u: usize,
    },
    Nk {
        wg: usize,
        r: usize,
        u: usize,
    },
    /// The engine's own decode projection (`generate/ln_matvec_subgroup.wgsl`), its layer norm
    /// fused in or not, `c4` vec4 columns a workgroup, the plain store epilogue.
    Engine {
        ln: bool,
        c4: usize,
    },
}

impl Kind {
    fn label(self) -> String {
        match self {
            Kind::Empty => "empty".into(),
            Kind::Read => "read".into(),
            Kind::Kn { c4, u } => format!("kn c{c4} u{u}"),
            Kind::Nk { wg, r, u } => format!("nk wg{wg} r{r} u{u}"),
            Kind::Engine { ln, c4 } => format!("engine c{c4}{}", if ln { " ln" } else { "" }),
        }
    }
}

/// The vec4 loader: four weights from vec4 index i, as f32.
fn loader(f16: bool) -> &'static str {
    if f16 {
        "@group(0) @binding(2) var<storage, read> w: array<vec2<u32>>;
fn ld(i: u32) -> vec4<f32> { let q = w[i]; return vec4<f32>(unpack2x16float(q.x), unpack2x16float(q.y)); }
"
    } else {
        "@group(0) @binding(2) var<storage, read> w: array<vec4<f32>>;
fn ld(i: u32) -> vec4<f32> { return w[i]; }
"
    }
}

/// The WGSL of `kind` for weights (K, N), and its workgroup count.
fn wgsl(kind: Kind, k: usize, n: usize, f16: bool, sg: usize) -> (String, u32) {
    let n4 = n / 4;
    let k4 = k / 4;
    let mut s = String::new();
    writeln!(
        s,
        "struct P {{ w_off4: u32 }}\n@group(0) @binding(0) var<uniform> p: P;"
    )
    .unwrap();
    s.push_str(loader(f16));
    match kind {
        Kind::Empty => {
            s.push_str(
                "@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32) {
    if lid == 0u { y[0] = x[0] + ld(p.w_off4).x; }
}
",
            );
            (s, 1)
        }
        Kind::Read => {
            let vec4s = k * n / 4;
            writeln!(
                s,
                "@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
    let i = gid.x + gid.y * nwg.x * 256u;
    if i >= {vec4s}u {{ return; }}
    let v = ld(p.w_off4 + i);
    if dot(v, v) < -1.0 - abs(x[0]) {{ y[0] = v; }}
}}"
            )
            .unwrap();
            (s, vec4s.div_ceil(256) as u32)
        }
        Kind::Kn { c4, u } => {
            let slices = 256 / c4;
            let rows = k.div_ceil(slices);
            writeln!(
                s,
                "@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<vec4<f32>>;
var<workgroup> folds: array<vec4<f32>, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) ssz: u32) {{
    let col4 = min(wid.x * {c4}u + lid % {c4}u, {n4}u - 1u);
    let slice = lid / {c4}u;
    var acc = vec4<f32>(0.0);"
            )
            .unwrap();
            for b in (0..rows).step_by(u) {
                let batch = b..(b + u).min(rows);
                for r in batch.clone() {
                    writeln!(s, "    let k{r} = min(slice + {}u, {}u);", r * slices, k - 1).unwrap();
                    writeln!(s, "    let w{r} = ld(p.w_off4 + k{r} * {n4}u + col4);").unwrap();
                }
                for r in batch {
                    let live = if (r + 1) * slices <= k {
                        "true".to_string()
                    } else {
                        format!("slice + {}u < {k}u", r * slices)
                    };
                    writeln!(s, "    acc = fma(vec4<f32>(select(0.0, x[k{r}], {live})), w{r}, acc);").unwrap();
                }
            }
            writeln!(
                s,
                "    for (var o = {c4}u; o < ssz; o <<= 1u) {{ acc += subgroupShuffleXor(acc, o); }}
    if sid < {c4}u {{ folds[(lid / ssz) * {c4}u + sid] = acc; }}
    workgroupBarrier();
    let col = wid.x * {c4}u + lid;
    if lid < {c4}u && col < {n4}u {{
        var t = vec4<f32>(0.0);
        for (var g = 0u; g < 256u / ssz; g++) {{ t += folds[g * {c4}u + lid]; }}
        y[col] = t;
    }}
}}"
            )
            .unwrap();
            (s, n4.div_ceil(c4) as u32)
        }
        Kind::Nk { wg, r, u } => {
            let per_lane = k4.div_ceil(sg);
            let rows_per_group = wg / sg * r;
            writeln!(
                s,
                "@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32,
        @builtin(subgroup_invocation_id) sid: u32) {{
    let row0 = (wid.x * {}u + lid / {sg}u) * {r}u;",
                wg / sg
            )
            .unwrap();
            for i in 0..per_lane {
                writeln!(s, "    let q{i} = min({}u + sid, {}u);", i * sg, k4 - 1).unwrap();
            }
            for j in 0..r {
                writeln!(s, "    let base{j} = p.w_off4 + min(row0 + {j}u, {}u) * {k4}u;", n - 1).unwrap();
                writeln!(s, "    var acc{j} = 0.0;").unwrap();
            }
            // (row, i) pairs in batches of u loads.
            let pairs: Vec<(usize, usize)> = (0..per_lane).flat_map(|i| (0..r).map(move |j| (j, i))).collect();
            for batch in pairs.chunks(u) {
                for &(j, i) in batch {
                    writeln!(s, "    let w{j}_{i} = ld(base{j} + q{i});").unwrap();
                }
                for &(j, i) in batch {
                    let xv = if (i + 1) * sg <= k4 {
                        format!("x[q{i}]")
                    } else {
                        format!("select(vec4<f32>(0.0), x[q{i}], {}u + sid < {k4}u)", i * sg)
                    };
                    writeln!(s, "    acc{j} += dot({xv}, w{j}_{i});").unwrap();
                }
            }
            for j in 0..r {
                writeln!(
                    s,
                    "    let s{j} = subgroupAdd(acc{j});
    if sid == 0u && row0 + {j}u < {n}u {{ y[row0 + {j}u] = s{j}; }}"
                )
                .unwrap();
            }
            s.push_str("}\n");
            (s, n.div_ceil(rows_per_group) as u32)
        }
        Kind::Engine { .. } => unreachable!("the engine kernel is not generated (engine_source)"),
    }
}

fn kinds(quick: bool) -> Vec<Kind> {
    let mut v = vec![Kind::Empty, Kind::Read];
    for c4 in [1, 2, 4] {
        v.push(Kind::Engine { ln: false, c4 });
    }
    v.push(Kind::Engine { ln: true, c4: 4 });
    for c4 in [1, 2, 4] {
        for u in [4, 8, 64] {
            v.push(Kind::Kn { c4, u });
        }
    }
    for wg in [64, 256] {
        for r in [1, 2, 4] {
            for u in [8, 64] {
                v.push(Kind::Nk { wg, r, u });
            }
        }
    }
    if quick {
        v.retain(|k| !matches!(k, Kind::Kn { u: 4, .. } | Kind::Nk { wg: 64, .. }));
    }
    v
}

/// The engine's decode projection kernel with its preludes and the weights' dtype slot.
fn engine_source(f16: bool) -> peer::Result<String> {
    let shader = wgsl_compute::kernel::SHADERS
        .iter()
        .find(|s| s.path == "generate/ln_matvec_subgroup.wgsl")
        .ok_or("generate/ln_matvec_subgroup.wgsl is not in the shader table")?;
    let dtype = if f16 {
        wgsl_compute::DType::F16
    } else {
        wgsl_compute::DType::F32
    };
    Ok(format!(
        "{}{}",
        wgsl_compute::kernel::dtype_prelude(shader.wgsl, &[("w", dtype)])?,
        shader.wgsl
    ))
}

/// The engine kernel's uniform words for weights (K, N) at vec4 offset `w_off4`.
fn engine_params(n: usize, w_off4: u32) -> Vec<u32> {
    // n, x_off, w_off4, bias_off, out_off, ln_w_off, ln_b_off, eps, c, d, positions, k_off, v_off
    vec![
        n as u32,
        0,
        w_off4,
        0,
        0,
        0,
        0,
        1e-5f32.to_bits(),
        n as u32 / 3,
        64,
        1,
        0,
        0,
    ]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> peer::Result<()> {
    let mut quick = false;
    let mut json = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--json" => json = it.next(),
            "-h" | "--help" => {
                println!("usage: gemv_probe [--quick] [--json out.json]\n{USAGE}");
                return Ok(());
            }
            other => return Err(format!("gemv_probe: unknown argument {other}").into()),
        }
    }
    let ctx = Context::new()?;
    let info = ctx.info().clone();
    println!("adapter: {} ({:?})", info.name, info.backend);
    let (lo, hi) = info.subgroup_size;
    if !info.subgroups || lo != hi {
        return Err(format!("gemv_probe needs one subgroup size (adapter: {lo}..{hi})").into());
    }
    let sg = lo as usize;
    let peer = peer::Peer::with_features(&ctx, wgpu::Features::SUBGROUP)?;
    let copy = peer::CopyPeer::new(&ctx, if quick { 1 << 22 } else { 1 << 26 })?;
    let mut figures = serde_json::Map::new();
    let shapes: &[(&str, usize, usize)] = if quick {
        &[("qkv", 64, 192), ("fc_proj", 260, 64)]
    } else {
        &[
            ("124M qkv", 768, 2304),
            ("124M attn_proj", 768, 768),
            ("124M fc", 768, 3072),
            ("124M fc_proj", 3072, 768),
            ("1.5B qkv", 1600, 4800),
            ("1.5B fc_proj", 6400, 1600),
        ]
    };
    let mut rng = Rng::new(11);
    for f16 in [false, true] {
        let dt = if f16 { "f16" } else { "f32" };
        for &(name, k, n) in shapes {
            let bytes = k * n * if f16 { 2 } else { 4 };
            // Distinct slices enough to overflow a 60 MB L2 at least threefold.
            let slices = (200usize << 20).div_ceil(bytes).clamp(4, 16);
            let host_w: Vec<f32> = (0..slices * k * n).map(|_| rng.uniform() as f32 * 2.0 - 1.0).collect();
            let host_x: Vec<f32> = (0..k).map(|_| rng.uniform() as f32 * 2.0 - 1.0).collect();
            let w = if f16 {
                let words: Vec<f32> = host_w
                    .chunks(2)
                    .map(|p| {
                        let lo = half::f16::from_f32(p[0]).to_bits() as u32;
                        let hi = half::f16::from_f32(p[1]).to_bits() as u32;
                        f32::from_bits(lo | hi << 16)
                    })
                    .collect();
                peer.upload("probe w", &words)
            } else {
                peer.upload("probe w", &host_w)
            };
            let host_w: Vec<f32> = if f16 {
                host_w.iter().map(|&v| half::f16::from_f32(v).to_f32()).collect()
            } else {
                host_w
            };
            let x = peer.upload("probe x", &host_x);
            let y = peer.buffer("probe y", (n.max(4) * 4) as u64);
            // The engine kernel's other bindings: the decode state, the layer norm's weight
            // and bias (ones, zeros), the bias (zeros) and a key/value cache it does not write.
            let state = peer.buffer("probe state", 64);
            let ln_w = peer.upload("probe ln_w", &vec![1.0; k]);
            let ln_b = peer.buffer("probe ln_b", (k * 4) as u64);
            let bias = peer.buffer("probe bias", (n * 4) as u64);
            let kv = peer.buffer("probe kv", 256);
            let vec4s = k * n / 4;
            let params: Vec<Vec<u32>> = (0..CHAIN).map(|i| vec![((i % slices) * vec4s) as u32]).collect();
            let last = (CHAIN - 1) % slices;
            let wl = &host_w[last * k * n..(last + 1) * k * n];
            println!(
                "\n### {name} {dt}: K {k} N {n}, {:.2} MB of weights, {slices} slices\n",
                bytes as f64 / 1e6
            );
            println!("| kernel | workgroups | us per dispatch | GB/s | max err |");
            println!("| --- | --- | --- | --- | --- |");
            copy.median(copy.grids()[0], 1000, 1)?;
            for kind in kinds(quick) {
                if let Kind::Nk { wg, .. } = kind {
                    if wg < sg || k % 4 != 0 {
                        continue;
                    }
                }
                let (kernel, groups, params, bufs): (_, u32, Vec<Vec<u32>>, Vec<&wgpu::Buffer>) =
                    if let Kind::Engine { ln, c4 } = kind {
                        let constants = [
                            ("LN", if ln { 1.0 } else { 0.0 }),
                            ("EPILOGUE", 0.0),
                            ("K", k as f64),
                            ("C4", c4 as f64),
                        ];
                        let kernel = peer.kernel_with(
                            &kind.label(),
                            &engine_source(f16)?,
                            "ln_matvec_subgroup",
                            256,
                            &constants,
                            None,
                        );
                        let params = params.iter().map(|p| engine_params(n, p[0])).collect();
                        let bufs = vec![&state, &x, &ln_w, &ln_b, &w, &bias, &y, &kv];
                        (kernel, (n / 4).div_ceil(c4) as u32, params, bufs)
                    } else {
                        let (src, groups) = wgsl(kind, k, n, f16, sg);
                        let kernel = peer.kernel_with(&kind.label(), &src, "main", 256, &[], None);
                        (kernel, groups, params.clone(), vec![&x, &w, &y])
                    };
                for _ in 0..2 {
                    peer.time_chain(&kernel, &params, &bufs, groups)?;
                }
                let t = median(
                    (0..7)
                        .map(|_| peer.time_chain(&kernel, &params, &bufs, groups).map(|t| t.0))
                        .collect::<peer::Result<Vec<_>>>()?,
                ) / CHAIN as f64;
                let err = match kind {
                    Kind::Kn { .. } | Kind::Nk { .. } | Kind::Engine { ln: false, .. } => {
                        let got = peer.read(&y, 0, n)?;
                        let nk = matches!(kind, Kind::Nk { .. });
                        (0..n)
                            .map(|j| {
                                let want: f64 = (0..k)
                                    .map(|kk| {
                                        let wv = if nk { wl[j * k + kk] } else { wl[kk * n + j] };
                                        host_x[kk] as f64 * wv as f64
                                    })
                                    .sum();
                                (got[j] as f64 - want).abs() / (k as f64).sqrt()
                            })
                            .fold(0.0, f64::max)
                    }
                    _ => 0.0,
                };
                let gbps = bytes as f64 / t / 1e9;
                println!(
                    "| {} | {groups} | {:.2} | {gbps:.0} | {err:.1e} |",
                    kind.label(),
                    t * 1e6
                );
                let key = format!("gemv_probe_{name}_{dt}_{}_us", kind.label()).replace([' ', '.'], "_");
                figures.insert(key, (t * 1e6).into());
            }
        }
    }
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(&figures)?)?;
    }
    Ok(())
}
