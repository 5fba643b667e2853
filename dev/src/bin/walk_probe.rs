//! The walk probe (issue #42): what keeps a lane walk's loads in flight on this adapter.
//!
//! Times generated one-pass lane walks of the channel scans and the 2x2 scan at the bench's
//! large shapes on fresh random data (a peer device, `common/peer.rs`), over a grid of
//! workgroup sizes, steps loaded ahead (U named `let` registers per input) and software
//! pipelining (the next block's loads issued before this block's updates), beside the vec4
//! copy. Prints one markdown row per variant (ms, GB/s of the fewest bytes, % of the copy),
//! checks each variant's last step against an f64 walk of a few lanes, and writes the figures
//! as JSON with `--json`.
//!
//! ```text
//! cargo run --release -p wgsl-compute-dev --bin walk_probe -- [--quick] [--json out.json]
//! ```

#[path = "common/clocks.rs"]
mod clocks;
#[path = "common/peer.rs"]
mod peer;

use std::fmt::Write as _;

use wgsl_compute::check::Rng;
use wgsl_compute::Context;

/// One scan walked by the probe: its WGSL pieces and its bytes.
#[derive(Clone, Copy)]
struct Op {
    name: &'static str,
    /// The storage types of a, x, h (binding 1, 2, 3).
    types: [&'static str; 3],
    /// Floats per lane and step in a, x, h.
    widths: [usize; 3],
    /// The state's type and its zero.
    state: (&'static str, &'static str),
    /// The update: `s` from `s`, `a{k}`, `x{k}`; then the stored value from `s`.
    update: &'static str,
    store: &'static str,
}

const LINEAR: Op = Op {
    name: "linear_scan",
    types: ["f32", "f32", "f32"],
    widths: [1, 1, 1],
    state: ("f32", "0.0"),
    update: "fma(A, s, X)",
    store: "s",
};

/// The log scan's forward without its h0 row (x here is log_values shifted by one step): the
/// same loads per step as the engine's walk.
const LOG: Op = Op {
    name: "parallel_scan_log",
    types: ["f32", "f32", "f32"],
    widths: [1, 1, 1],
    state: ("f32", "-1e30"),
    update: "lae(A + s, X)",
    store: "exp(s)",
};

const MATRIX2: Op = Op {
    name: "matrix_scan",
    types: ["vec4<f32>", "vec2<f32>", "vec2<f32>"],
    widths: [4, 2, 2],
    state: ("vec2<f32>", "vec2<f32>(0.0)"),
    update: "m2(A, s, X)",
    store: "s",
};

/// One variant of a walk: channels per invocation (`F` = f32, vec2, vec4; the channel scans
/// only), steps loaded per block, software pipelined or not, and a workgroup barrier after
/// every block (which keeps a workgroup's warps on the same rows of T).
#[derive(Clone, Copy)]
struct Variant {
    width: usize,
    u: usize,
    pipelined: bool,
    sync: bool,
}

/// The WGSL of `op`'s walk as `v` says. T % u == 0; with `sync`, lanes % WG == 0.
fn walk_wgsl(op: &Op, v: Variant) -> String {
    let Variant {
        width,
        u,
        pipelined,
        sync,
    } = v;
    let f = match width {
        1 => "f32".to_string(),
        w => format!("vec{w}<f32>"),
    };
    let ty = |t: &str| if t == "f32" { f.clone() } else { t.to_string() };
    let [mut ta, mut tx, mut th] = op.types.map(ty);
    let (st, zero) = op.state;
    let (mut st, zero) = if st == "f32" {
        (f.clone(), format!("F({zero})"))
    } else {
        (st.to_string(), zero.to_string())
    };
    let mut update = op.update.to_string();
    if op.name == "matrix_scan" && width == 2 {
        // Two adjacent lanes an invocation: both A_t (32 bytes), both b_t and h_t (one vec4).
        (ta, tx, th) = ("P2".into(), "vec4<f32>".into(), "vec4<f32>".into());
        st = "vec4<f32>".into();
        update = "m2p(A, s, X)".into();
    }
    let zero = if st == "vec4<f32>" && op.name == "matrix_scan" {
        "vec4<f32>(0.0)".to_string()
    } else {
        zero
    };
    let guard = if sync { "" } else { "if lane >= p.lanes { return; }" };
    let mut w = format!(
        "override WG: u32 = 64u;
alias F = {f};
struct Params {{ lanes: u32, n: u32, t_len: u32 }}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<{ta}>;       // (B, T, N)
@group(0) @binding(2) var<storage, read> x: array<{tx}>;       // (B, T, N)
@group(0) @binding(3) var<storage, read_write> h: array<{th}>; // (B, T, N)
fn lae(u: F, w: F) -> F {{ let m = max(u, w); return m + log(1.0 + exp(min(u, w) - m)); }}
fn m2(m: vec4<f32>, s: vec2<f32>, b: vec2<f32>) -> vec2<f32> {{
    return vec2<f32>(fma(m.x, s.x, fma(m.y, s.y, b.x)), fma(m.z, s.x, fma(m.w, s.y, b.y)));
}}
struct P2 {{ m0: vec4<f32>, m1: vec4<f32> }}
fn m2p(m: P2, s: vec4<f32>, b: vec4<f32>) -> vec4<f32> {{
    return vec4<f32>(m2(m.m0, s.xy, b.xy), m2(m.m1, s.zw, b.zw));
}}
@compute @workgroup_size(WG)
fn walk(@builtin(global_invocation_id) gid: vec3<u32>) {{
    let lane = gid.x;
    {guard}
    let n = p.n;
    var i = (lane / n) * p.t_len * n + lane % n;
    var s: {st} = {zero};
"
    );
    let barrier = if sync { "        workgroupBarrier();\n" } else { "" };
    let loads = |w: &mut String, prefix: &str, ahead: usize| {
        for k in 0..u {
            let off = ahead + k;
            writeln!(w, "        let {prefix}a{k} = a[i + {off}u * n];").unwrap();
            writeln!(w, "        let {prefix}x{k} = x[i + {off}u * n];").unwrap();
        }
    };
    let updates = |w: &mut String, a: &str, x: &str| {
        for k in 0..u {
            let upd = update.replace('A', &format!("{a}{k}")).replace('X', &format!("{x}{k}"));
            writeln!(w, "        s = {upd};").unwrap();
            writeln!(w, "        h[i + {k}u * n] = {};", op.store).unwrap();
        }
    };
    if pipelined {
        for k in 0..u {
            writeln!(w, "    var ca{k} = a[i + {k}u * n];\n    var cx{k} = x[i + {k}u * n];").unwrap();
        }
        writeln!(w, "    for (var t = 0u; t + {}u <= p.t_len; t += {u}u) {{", 2 * u).unwrap();
        loads(&mut w, "n", u);
        updates(&mut w, "ca", "cx");
        for k in 0..u {
            writeln!(w, "        ca{k} = na{k};\n        cx{k} = nx{k};").unwrap();
        }
        writeln!(w, "        i += {u}u * n;\n{barrier}    }}\n    {{").unwrap();
        updates(&mut w, "ca", "cx");
        w.push_str("    }\n}\n");
    } else {
        writeln!(w, "    for (var t = 0u; t < p.t_len; t += {u}u) {{").unwrap();
        loads(&mut w, "", 0);
        updates(&mut w, "a", "x");
        writeln!(w, "        i += {u}u * n;\n{barrier}    }}\n}}").unwrap();
    }
    w
}

/// The variants timed for `op`: every channels-per-invocation width (one or two lanes for the
/// 2x2 scan), 8 and 16 steps ahead (16 and 32 for one 2x2 lane, whose steps are wider),
/// pipelined, with and without the per-block barrier.
fn variants(op: &Op) -> Vec<Variant> {
    let widths: &[(usize, &[usize])] = if op.name == "matrix_scan" {
        &[(1, &[16, 32]), (2, &[8, 16])]
    } else {
        &[(1, &[8, 16]), (2, &[8, 16]), (4, &[8, 16])]
    };
    let mut v = vec![];
    for &(width, us) in widths {
        for &u in us {
            for sync in [false, true] {
                v.push(Variant {
                    width,
                    u,
                    pipelined: true,
                    sync,
                });
            }
        }
    }
    v
}

/// The f64 walk of one lane's last step, from the host copies of a and x.
fn reference(op: &Op, a: &[f32], x: &[f32], (lanes, n, t): (usize, usize, usize), lane: usize) -> Vec<f64> {
    let _ = lanes;
    let base = (lane / n) * t * n + lane % n;
    let [wa, wx, _] = op.widths;
    let mut s = vec![0.0f64; wx];
    if op.name == "parallel_scan_log" {
        s[0] = -1e30;
    }
    for step in 0..t {
        let i = base + step * n;
        let av: Vec<f64> = a[i * wa..(i + 1) * wa].iter().map(|&v| v as f64).collect();
        let xv: Vec<f64> = x[i * wx..(i + 1) * wx].iter().map(|&v| v as f64).collect();
        s = match op.name {
            "linear_scan" => vec![av[0] * s[0] + xv[0]],
            "parallel_scan_log" => {
                let (u, w) = (av[0] + s[0], xv[0]);
                let m = u.max(w);
                vec![m + (1.0 + (u.min(w) - m).exp()).ln()]
            }
            _ => vec![av[0] * s[0] + av[1] * s[1] + xv[0], av[2] * s[0] + av[3] * s[1] + xv[1]],
        };
    }
    if op.name == "parallel_scan_log" {
        s[0] = s[0].exp();
    }
    s
}

fn main() -> peer::Result<()> {
    let mut quick = false;
    let mut json = None;
    let mut only: Option<String> = None;
    let mut engine = false;
    let mut clocks_only = false;
    let mut dump: Option<String> = None;
    let mut variants_dir: Option<String> = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--json" => json = it.next(),
            "--only" => only = it.next(),
            "--engine" => engine = true,
            "--clocks" => clocks_only = true,
            "--dump" => dump = it.next(),
            "--variants" => {
                variants_dir = it.next();
                engine = true;
            }
            "-h" | "--help" => {
                println!("usage: walk_probe [--quick] [--clocks] [--engine] [--dump DIR] [--variants DIR] [--only linear_scan,parallel_scan_log,matrix_scan] [--json out.json]\n{}", USAGE);
                return Ok(());
            }
            other => return Err(format!("walk_probe: unknown argument {other}").into()),
        }
    }
    if let Some(dir) = dump {
        return dump_sources(&dir);
    }
    let ctx = Context::new()?;
    println!("adapter: {} ({:?})", ctx.info().name, ctx.info().backend);
    if clocks_only {
        return clock_states(&ctx, quick, json.as_deref());
    }
    let peer = peer::Peer::new(&ctx)?;
    let engine_peer = engine
        .then(|| peer::Peer::with_features(&ctx, ENGINE_FEATURES))
        .transpose()?;
    let mut figures = serde_json::Map::new();
    let (lanes_big, t_big) = if quick { (4096, 256) } else { (16 * 4096, 4096) };
    let copy_n = if quick { 1 << 22 } else { 1 << 26 };
    let copy = peer::CopyPeer::new(&ctx, copy_n)?;
    let mut copy_s = f64::MAX;
    for g in copy.grids() {
        copy_s = copy_s.min(copy.median(g, 3, 7)?);
    }
    let ceiling = 2.0 * copy_n as f64 * 4.0 / copy_s / 1e9;
    println!("vec4 copy: {ceiling:.0} GB/s\n");
    figures.insert("copy_vec4_gbps".into(), ceiling.into());
    println!("| op | width | U | pipelined | barrier | WG | ms | GB/s | of copy | last step err |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for op in [LINEAR, LOG, MATRIX2] {
        if only.as_ref().is_some_and(|o| !o.split(',').any(|n| n == op.name)) {
            continue;
        }
        let (n, lanes) = if op.name == "matrix_scan" {
            (lanes_big / 64, lanes_big / 4)
        } else {
            (lanes_big / 16, lanes_big)
        };
        let t = t_big;
        let [wa, wx, wh] = op.widths;
        let elements = lanes * t;
        let mut rng = Rng::new(7);
        let host = |w: usize, lo: f32, hi: f32, rng: &mut Rng| -> Vec<f32> {
            (0..elements * w)
                .map(|_| lo + (hi - lo) * rng.uniform() as f32)
                .collect()
        };
        let (ha, hx) = match op.name {
            "parallel_scan_log" => (host(wa, -0.5, -0.01, &mut rng), host(wx, -2.0, 0.0, &mut rng)),
            "matrix_scan" => (host(wa, -0.5, 0.5, &mut rng), host(wx, -1.0, 1.0, &mut rng)),
            _ => (host(wa, 0.5, 0.99, &mut rng), host(wx, -1.0, 1.0, &mut rng)),
        };
        let check_lanes = [0, lanes / 2 + 1, lanes - 1];
        let want: Vec<Vec<f64>> = check_lanes
            .iter()
            .map(|&l| reference(&op, &ha, &hx, (lanes, n, t), l))
            .collect();
        let bytes = (elements * (wa + wx + wh) * 4) as f64;
        // The probe's own device; with --engine also one opened with the engine's features.
        let mut devices = vec![("probe device", &peer)];
        if engine && op.name == "linear_scan" {
            devices.push((
                "engine features",
                engine_peer.as_ref().ok_or("no engine-featured device")?,
            ));
        }
        if engine && op.name == "linear_scan" {
            println!("the engine's context:");
            engine_api(&ctx, "", &ha, &hx, (lanes, n, t), bytes, ceiling, &mut figures)?;
            println!("an engine context on the probe's device (Context::from_wgpu):");
            engine_api(
                &peer.context(),
                "_from_wgpu",
                &ha,
                &hx,
                (lanes, n, t),
                bytes,
                ceiling,
                &mut figures,
            )?;
            engine_buffers(&peer, &ha, &hx, (lanes, n, t), bytes, ceiling, &mut figures)?;
            placement(&peer, &ha, &hx, (lanes, n, t), bytes, ceiling, &mut figures)?;
        }
        for (device, peer) in devices {
            // The host took seconds to make the inputs: the clock may have fallen meanwhile.
            copy.median(copy.grids()[0], 2000, 1)?;
            let bufs = [
                peer.upload("probe a", &ha),
                peer.upload("probe x", &hx),
                peer.buffer("probe h", (elements * wh * 4) as u64),
            ];
            let check = |peer: &peer::Peer| -> peer::Result<f64> {
                let mut err = 0.0f64;
                for (&l, w) in check_lanes.iter().zip(&want) {
                    let i = (l / n) * t * n + l % n + (t - 1) * n;
                    let got = peer.read(&bufs[2], (i * wh * 4) as u64, wh)?;
                    for (g, w) in got.iter().zip(w) {
                        err = err.max((*g as f64 - w).abs() / w.abs().max(1.0));
                    }
                }
                Ok(err)
            };
            if engine && op.name == "linear_scan" {
                println!("{device}:");
                let on = EngineRun {
                    peer,
                    bufs: &bufs,
                    dims: (lanes, n, t),
                    bytes,
                    ceiling,
                    check: &check,
                    device,
                };
                engine_kernels(&on, &mut figures)?;
                if let Some(dir) = &variants_dir {
                    variant_kernels(&on, dir, &mut figures)?;
                }
            }
            let variants: Vec<Variant> = variants(&op)
                .into_iter()
                .filter(|v| !engine || (v.width == 4 && v.u == 16 && v.sync))
                .collect();
            for v in variants {
                let Variant {
                    width,
                    u,
                    pipelined,
                    sync,
                } = v;
                let wgsl = walk_wgsl(&op, v);
                // In F values: the walks of `width` adjacent channels.
                let (lanes_f, n_f) = (lanes / width, n / width);
                for wg in [64u32, 256] {
                    let label = format!("probe/{}/{width}/{u}/{pipelined}/{sync}/{wg}", op.name);
                    let kernel = peer.kernel(&label, &wgsl, "walk", wg);
                    let groups = (lanes_f as u32).div_ceil(wg);
                    let params = [lanes_f as u32, n_f as u32, t as u32];
                    let secs = peer.median(&kernel, &params, &[&bufs[0], &bufs[1], &bufs[2]], groups, 2, 7)?;
                    let err = check(peer)?;
                    let gbps = bytes / secs / 1e9;
                    println!(
                        "| {} | {width} | {u} | {pipelined} | {sync} | {wg} | {:.3} | {gbps:.0} | {:.0}% | {err:.1e} |",
                        op.name,
                        secs * 1e3,
                        100.0 * gbps / ceiling
                    );
                    let on = if device == "engine features" {
                        "_engine_features"
                    } else {
                        ""
                    };
                    let key = format!(
                        "probe_{}_w{width}_u{u}_{}{}_wg{wg}{on}_ms",
                        op.name,
                        if pipelined { "pipe" } else { "block" },
                        if sync { "_sync" } else { "" }
                    );
                    figures.insert(key, (secs * 1e3).into());
                }
            }
        }
    }
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(&figures)?)?;
    }
    Ok(())
}

/// The optional features the engine's device asks for (`context::adapter::wanted_features`,
/// cooperative matrices aside), where the adapter has them: `--engine` also opens a peer
/// device with them, in case a feature changes the code the driver generates.
const ENGINE_FEATURES: wgpu::Features = wgpu::Features::SUBGROUP
    .union(wgpu::Features::SHADER_F16)
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES);

/// The engine's `scan/linear.wgsl` source as `Context` builds it for F32 slots.
fn engine_linear_source() -> peer::Result<String> {
    let shader = wgsl_compute::kernel::SHADERS
        .iter()
        .find(|s| s.path == "scan/linear.wgsl")
        .ok_or("scan/linear.wgsl is not in the shader table")?;
    Ok(format!(
        "{}{}",
        wgsl_compute::kernel::dtype_prelude(shader.wgsl, &[])?,
        shader.wgsl
    ))
}

/// `--dump DIR`: writes the engine's linear kernel (`engine_linear.wgsl`) and the probe's vec4
/// U = 16 synced walk (`probe_linear_w4_u16_sync.wgsl`), the sources `--variants` starts from.
fn dump_sources(dir: &str) -> peer::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(format!("{dir}/engine_linear.wgsl"), engine_linear_source()?)?;
    let probe = walk_wgsl(
        &LINEAR,
        Variant {
            width: 4,
            u: 16,
            pipelined: true,
            sync: true,
        },
    );
    std::fs::write(format!("{dir}/probe_linear_w4_u16_sync.wgsl"), probe)?;
    Ok(())
}

/// What the engine-kernel rows run on: the peer device, its inputs (a, x, h), the shape
/// (lanes, n, t), the bytes a walk moves, the copy ceiling, the last-step check and the
/// device's label.
#[derive(Clone, Copy)]
struct EngineRun<'a> {
    peer: &'a peer::Peer,
    bufs: &'a [wgpu::Buffer; 3],
    dims: (usize, usize, usize),
    bytes: f64,
    ceiling: f64,
    check: &'a dyn Fn(&peer::Peer) -> peer::Result<f64>,
    device: &'a str,
}

/// The engine's linear kernel's storage bindings 1..=8 (`true`: read-only): a, x, h0, h, then
/// out, da, side, dh0.
const ENGINE_STORAGE: [bool; 8] = [true, true, true, true, false, false, false, false];

/// The engine linear kernel's vec4 invocations and uniform for a one-segment lane walk:
/// Launch (lanes, t_len, t_begin, t_end, chunk, chunks, pad, pad), then n and has_h0, in
/// vec4 units.
fn engine_params(lanes: usize, n: usize, t: usize) -> (usize, [u32; 10]) {
    let (lanes4, n4) = (lanes / 4, n / 4);
    (
        lanes4,
        [lanes4 as u32, t as u32, 0, t as u32, t as u32, 1, 0, 0, n4 as u32, 0],
    )
}

/// `--variants DIR`: every `*.wgsl` in DIR, each a variant of the engine's linear kernel with
/// its bindings and uniform (entry `scan_lanes`; a `// wg: N` line sets the workgroup size,
/// else 64), timed on the same inputs with its own output buffers.
fn variant_kernels(
    on: &EngineRun<'_>,
    dir: &str,
    figures: &mut serde_json::Map<String, serde_json::Value>,
) -> peer::Result<()> {
    let EngineRun {
        peer,
        bufs,
        dims: (lanes, n, t),
        bytes,
        ceiling,
        check,
        device,
    } = *on;
    let mut files: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wgsl"))
        .collect();
    files.sort();
    let small: Vec<wgpu::Buffer> = (0..5).map(|_| peer.buffer("variant scratch", 64)).collect();
    let (lanes4, params) = engine_params(lanes, n, t);
    println!("| variant | WG | ms | GB/s | of copy | last step err |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for path in files {
        let wgsl = std::fs::read_to_string(&path)?;
        let wg = wgsl
            .lines()
            .find_map(|l| l.trim().strip_prefix("// wg:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(64u32);
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_string();
        let kernel = peer.kernel_with(&name, &wgsl, "scan_lanes", wg, &[], Some(&ENGINE_STORAGE));
        let bound = [
            &bufs[0], &bufs[1], &small[0], &small[1], &bufs[2], &small[2], &small[3], &small[4],
        ];
        let groups = (lanes4 as u32).div_ceil(wg);
        let secs = peer.median(&kernel, &params, &bound, groups, 2, 7)?;
        let err = check(peer)?;
        let gbps = bytes / secs / 1e9;
        println!(
            "| {name} | {wg} | {:.3} | {gbps:.0} | {:.0}% | {err:.1e} |",
            secs * 1e3,
            100.0 * gbps / ceiling
        );
        let on = if device == "engine features" {
            "_engine_features"
        } else {
            ""
        };
        figures.insert(format!("variant_{name}{on}_ms"), (secs * 1e3).into());
    }
    println!();
    Ok(())
}

/// `--engine`: `scan::linear_scan` through the engine's own context (its device, pool and
/// dispatch) on the same inputs as Tensors, timed as the bench times it (`Context::time`), with
/// one input set and with three rotated sets (as the bench): the kernel's figure on the peer
/// device against the engine's path around it.
#[allow(clippy::too_many_arguments)]
fn engine_api(
    ctx: &Context,
    tag: &str,
    ha: &[f32],
    hx: &[f32],
    (lanes, n, t): (usize, usize, usize),
    bytes: f64,
    ceiling: f64,
    figures: &mut serde_json::Map<String, serde_json::Value>,
) -> peer::Result<()> {
    use wgsl_compute::scan::{self, Route, ScanOptions};
    let shape = [lanes / n, t, n];
    let opts = ScanOptions::route(Route::Gpu);
    ctx.set_profiling(true);
    println!("| engine path | sets | ms | GB/s | of copy |");
    println!("| --- | --- | --- | --- | --- |");
    let mut sets = vec![];
    for k in 0..3 {
        sets.push((
            wgsl_compute::Tensor::from_slice(ctx, &shape, ha)?,
            wgsl_compute::Tensor::from_slice(ctx, &shape, hx)?,
        ));
        let rotate = if k == 0 {
            1
        } else if k == 2 {
            3
        } else {
            continue;
        };
        for _ in 0..2 {
            for (a, x) in &sets[..rotate] {
                scan::linear_scan_with(a, x, None, &opts)?;
            }
        }
        ctx.synchronize()?;
        let mut times = vec![];
        for i in 0..7 {
            let (a, x) = &sets[i % rotate];
            let ((), timed) = ctx.time(|| scan::linear_scan_with(a, x, None, &opts).map(drop))?;
            times.push(timed.seconds);
        }
        times.sort_by(|a, b| a.total_cmp(b));
        let secs = times[3];
        let gbps = bytes / secs / 1e9;
        println!(
            "| linear_scan_with (Route::Gpu) | {rotate} | {:.3} | {gbps:.0} | {:.0}% |",
            secs * 1e3,
            100.0 * gbps / ceiling
        );
        figures.insert(
            format!("probe_engine_api_linear_sets{rotate}{tag}_ms"),
            (secs * 1e3).into(),
        );
    }
    // Which kernels ran, and each one's device time (every dispatch timed).
    println!("\n```\n{}\n```", ctx.profile()?);
    ctx.set_profiling(false);
    // Wall clock over 20 calls back to back (no profiling, one wait): whether the device
    // time above is what a caller waits for, and whether the pool allocates per call.
    let (a, x) = &sets[0];
    ctx.synchronize()?;
    let before = ctx.pool_stats();
    let start = std::time::Instant::now();
    for _ in 0..20 {
        scan::linear_scan_with(a, x, None, &opts)?;
    }
    ctx.synchronize()?;
    let secs = start.elapsed().as_secs_f64() / 20.0;
    let after = ctx.pool_stats();
    println!(
        "20 calls back to back, wall clock: {:.3} ms a call ({:.0}% of copy); pool: {} buffers created, {} reused",
        secs * 1e3,
        100.0 * bytes / secs / 1e9 / ceiling,
        after.created - before.created,
        after.reused - before.reused
    );
    figures.insert(format!("probe_engine_api_linear_wall20{tag}_ms"), (secs * 1e3).into());
    println!();
    Ok(())
}

/// `--engine`: the engine's linear kernel built and dispatched by the probe (its pipeline,
/// bind group and uniform) over buffers the engine allocated (`Context::from_wgpu` on the
/// probe's device: two input tensors and a scan's output): whether the engine's buffers or its
/// dispatch hold the gap between the two.
fn engine_buffers(
    peer: &peer::Peer,
    ha: &[f32],
    hx: &[f32],
    (lanes, n, t): (usize, usize, usize),
    bytes: f64,
    ceiling: f64,
    figures: &mut serde_json::Map<String, serde_json::Value>,
) -> peer::Result<()> {
    use wgsl_compute::scan::{self, Route, ScanOptions};
    let ctx = peer.context();
    let shape = [lanes / n, t, n];
    let a = wgsl_compute::Tensor::from_slice(&ctx, &shape, ha)?;
    let x = wgsl_compute::Tensor::from_slice(&ctx, &shape, hx)?;
    let out = scan::linear_scan_with(&a, &x, None, &ScanOptions::route(Route::Gpu))?;
    ctx.synchronize()?;
    let (ab, xb, ob) = (a.wgpu_buffer()?.0, x.wgpu_buffer()?.0, out.wgpu_buffer()?.0);
    let small: Vec<wgpu::Buffer> = (0..3).map(|_| peer.buffer("engine scratch", 64)).collect();
    let (lanes4, params) = engine_params(lanes, n, t);
    let kernel = peer.kernel_with(
        "engine/scan/linear",
        &engine_linear_source()?,
        "scan_lanes",
        64,
        &[],
        Some(&ENGINE_STORAGE),
    );
    let bound = [ab, xb, ab, ab, ob, &small[0], &small[1], &small[2]];
    println!("| kernel dispatched by | pipeline | buffers | ms | GB/s | of copy |");
    println!("| --- | --- | --- | --- | --- | --- |");
    // The engine's pipeline passes REVERSE as an override constant; the probe's leaves the default.
    let constant = peer.kernel_with(
        "engine/scan/linear REVERSE=0",
        &engine_linear_source()?,
        "scan_lanes",
        64,
        &[("REVERSE", 0.0)],
        Some(&ENGINE_STORAGE),
    );
    for (what, kernel, key) in [
        ("REVERSE default", &kernel, "probe_engine_linear_engine_buffers_ms"),
        (
            "REVERSE=0 passed",
            &constant,
            "probe_engine_linear_engine_buffers_reverse_constant_ms",
        ),
    ] {
        let secs = peer.median(kernel, &params, &bound, (lanes4 as u32).div_ceil(64), 2, 7)?;
        let gbps = bytes / secs / 1e9;
        println!(
            "| the probe | {what} | the engine's (from_slice, a scan's output) | {:.3} | {gbps:.0} | {:.0}% |",
            secs * 1e3,
            100.0 * gbps / ceiling
        );
        figures.insert(key.into(), (secs * 1e3).into());
    }
    println!();
    Ok(())
}

/// `--engine`: the engine's own forward lane walk of `linear_scan` (`scan/linear.wgsl`, vec4
/// channels, F32 slots, as `Context` builds it) on this peer device and these inputs, bound as
/// the engine binds it (h0 and h aliasing a) and with its own buffers, and with its stores made
/// unconditional: what of the engine's walk costs what the probe's walk does not.
fn engine_kernels(on: &EngineRun<'_>, figures: &mut serde_json::Map<String, serde_json::Value>) -> peer::Result<()> {
    let EngineRun {
        peer,
        bufs,
        dims: (lanes, n, t),
        bytes,
        ceiling,
        check,
        device,
    } = *on;
    let source = engine_linear_source()?;
    let unconditional = source.replace("if write { fwd_store(", "{ fwd_store(");
    let small: Vec<wgpu::Buffer> = (0..5).map(|_| peer.buffer("engine scratch", 64)).collect();
    let (lanes4, params) = engine_params(lanes, n, t);
    println!("| engine kernel | bindings | ms | GB/s | of copy | last step err |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (what, wgsl) in [("as built", &source), ("stores unconditional", &unconditional)] {
        let kernel = peer.kernel_with("engine/scan/linear", wgsl, "scan_lanes", 64, &[], Some(&ENGINE_STORAGE));
        for (aliased, h0, h) in [(true, &bufs[0], &bufs[0]), (false, &small[0], &small[1])] {
            let bound = [&bufs[0], &bufs[1], h0, h, &bufs[2], &small[2], &small[3], &small[4]];
            let groups = (lanes4 as u32).div_ceil(64);
            let secs = peer.median(&kernel, &params, &bound, groups, 2, 7)?;
            let err = check(peer)?;
            let gbps = bytes / secs / 1e9;
            let binding = if aliased {
                "h0, h alias a (as the engine)"
            } else {
                "own buffers"
            };
            println!(
                "| {what} | {binding} | {:.3} | {gbps:.0} | {:.0}% | {err:.1e} |",
                secs * 1e3,
                100.0 * gbps / ceiling
            );
            let key = format!(
                "probe_engine_linear_{}_{}{}_ms",
                what.replace(' ', "_"),
                if aliased { "aliased" } else { "own" },
                if device == "engine features" {
                    "_engine_features"
                } else {
                    ""
                }
            );
            figures.insert(key, (secs * 1e3).into());
        }
    }
    println!();
    Ok(())
}

const USAGE: &str = "Times generated lane walks (linear, log, 2x2) over workgroup sizes, steps loaded
ahead and software pipelining, on fresh random data, against the vec4 copy (issue #42).
--quick: small shapes (a software adapter); --clocks: only the engine's linear_scan timed after
each way of keeping the device busy (idle, matmuls, copies, scans: the GPU's clock); --dump DIR: write the engine's linear kernel and the
probe's vec4 walk as WGSL; --variants DIR: also time every DIR/*.wgsl (variants of the engine's
linear kernel, its bindings, a `// wg: N` line for the workgroup size); --json: the figures as JSON; --engine: the engine's
own linear_scan lane walk on the same inputs (as built, bindings aliased or not, stores made
unconditional) beside the probe's vec4 walk, on the probe's device and on one opened with the
engine's features.";

/// `--engine`: the engine's linear kernel (built and dispatched by the probe) over fresh
/// buffer sets, each kept alive: three filled in 16 MiB writes (as the probe fills its
/// inputs), three filled by one `write_buffer` of the whole tensor (as `Tensor::from_slice`
/// did), then one set of the engine's (`Context::from_wgpu`) with each of its three buffers
/// in turn swapped in among the probe's: whether the time depends on where a buffer landed
/// and which buffer it is.
fn placement(
    peer: &peer::Peer,
    ha: &[f32],
    hx: &[f32],
    (lanes, n, t): (usize, usize, usize),
    bytes: f64,
    ceiling: f64,
    figures: &mut serde_json::Map<String, serde_json::Value>,
) -> peer::Result<()> {
    use wgsl_compute::scan::{self, Route, ScanOptions};
    let kernel = peer.kernel_with(
        "engine/scan/linear",
        &engine_linear_source()?,
        "scan_lanes",
        64,
        &[],
        Some(&ENGINE_STORAGE),
    );
    let small: Vec<wgpu::Buffer> = (0..3).map(|_| peer.buffer("placement scratch", 64)).collect();
    let (lanes4, params) = engine_params(lanes, n, t);
    let groups = (lanes4 as u32).div_ceil(64);
    let h_bytes = (ha.len() * 4) as u64;
    let mut kept: Vec<[wgpu::Buffer; 3]> = vec![];
    println!("| set | filled by | ms | of copy |");
    println!("| --- | --- | --- | --- |");
    let mut time = |set: [&wgpu::Buffer; 3], what: &str, key: String| -> peer::Result<()> {
        let bound = [set[0], set[1], set[0], set[0], set[2], &small[0], &small[1], &small[2]];
        let secs = peer.median(&kernel, &params, &bound, groups, 2, 7)?;
        println!(
            "| {key} | {what} | {:.3} | {:.0}% |",
            secs * 1e3,
            100.0 * bytes / secs / 1e9 / ceiling
        );
        figures.insert(format!("placement_{key}_ms"), (secs * 1e3).into());
        Ok(())
    };
    for k in 0..6 {
        let pieces = k < 3;
        let set = if pieces {
            [peer.upload("pa", ha), peer.upload("px", hx), peer.buffer("ph", h_bytes)]
        } else {
            [
                peer.upload_whole("wa", ha),
                peer.upload_whole("wx", hx),
                peer.buffer("wh", h_bytes),
            ]
        };
        let what = if pieces { "16 MiB writes" } else { "one whole write" };
        time([&set[0], &set[1], &set[2]], what, format!("set{k}"))?;
        kept.push(set);
    }
    let ctx = peer.context();
    let shape = [lanes / n, t, n];
    let a = wgsl_compute::Tensor::from_slice(&ctx, &shape, ha)?;
    let x = wgsl_compute::Tensor::from_slice(&ctx, &shape, hx)?;
    let out = scan::linear_scan_with(&a, &x, None, &ScanOptions::route(Route::Gpu))?;
    ctx.synchronize()?;
    let (ea, ex, eo) = (a.wgpu_buffer()?.0, x.wgpu_buffer()?.0, out.wgpu_buffer()?.0);
    let p = &kept[0];
    time([ea, ex, eo], "the engine's three", "engine_all".into())?;
    time([ea, &p[1], &p[2]], "the engine's a only", "engine_a".into())?;
    time([&p[0], ex, &p[2]], "the engine's x only", "engine_x".into())?;
    time([&p[0], &p[1], eo], "the engine's out only", "engine_out".into())?;
    time([&p[0], &p[1], &p[2]], "set0 again", "set0_again".into())?;
    println!();
    Ok(())
}

/// `--clocks`: the engine's `linear_scan` (B16 T4096 D4096, or the quick shape) timed as the
/// bench times it (median of 7 `Context::time` regions after 2 warm-up calls) after each way
/// of keeping the device busy, with the wall time since start on every line, to line up with
/// a clock log (`nvidia-smi -lms`): whether the kernel's time follows the device's clocks.
fn clock_states(ctx: &Context, quick: bool, json: Option<&str>) -> peer::Result<()> {
    use wgsl_compute::scan::{self, Route, ScanOptions};
    let t0 = std::time::Instant::now();
    let (b, t, n) = if quick { (1, 256, 4096) } else { (16, 4096, 4096) };
    let mut rng = Rng::new(7);
    let ha: Vec<f32> = (0..b * t * n).map(|_| 0.5 + 0.49 * rng.uniform() as f32).collect();
    let hx: Vec<f32> = (0..b * t * n).map(|_| rng.uniform() as f32 * 2.0 - 1.0).collect();
    let a = wgsl_compute::Tensor::from_slice(ctx, &[b, t, n], &ha)?;
    let x = wgsl_compute::Tensor::from_slice(ctx, &[b, t, n], &hx)?;
    drop((ha, hx));
    let bytes = (3 * b * t * n * 4) as f64;
    let opts = ScanOptions::route(Route::Gpu);
    let copy = peer::CopyPeer::new(ctx, if quick { 1 << 22 } else { 1 << 27 })?;
    let mut figures = serde_json::Map::new();
    let mut measure = |what: &str, key: &str| -> peer::Result<()> {
        for _ in 0..2 {
            scan::linear_scan_with(&a, &x, None, &opts)?;
        }
        ctx.synchronize()?;
        let mut times = vec![];
        for _ in 0..7 {
            let ((), timed) = ctx.time(|| scan::linear_scan_with(&a, &x, None, &opts).map(drop))?;
            times.push(timed.seconds);
        }
        times.sort_by(|p, q| p.total_cmp(q));
        let secs = times[3];
        println!(
            "| {:.2} s | {what} | {:.3} ms | {:.0} GB/s |",
            t0.elapsed().as_secs_f64(),
            secs * 1e3,
            bytes / secs / 1e9
        );
        figures.insert(key.into(), (secs * 1e3).into());
        Ok(())
    };
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    println!("start: unix {unix:.2}\n\n| at | after | linear_scan | |\n| --- | --- | --- | --- |");
    measure("uploads only", "cold")?;
    clocks::sustain(ctx, 0.3)?;
    measure("0.3 s of 2048^3 matmuls (the bench's warm-up)", "matmul_0_3s")?;
    clocks::sustain(ctx, 2.0)?;
    measure("2 s of matmuls", "matmul_2s")?;
    std::thread::sleep(std::time::Duration::from_secs(3));
    measure("3 s idle", "idle_3s")?;
    copy.median(copy.grids()[0], 2000, 1)?;
    measure("2000 copies of 512 MiB (a peer device)", "copies_2000")?;
    std::thread::sleep(std::time::Duration::from_secs(3));
    measure("3 s idle", "idle_3s_b")?;
    let start = std::time::Instant::now();
    while start.elapsed().as_secs_f64() < 2.0 {
        for _ in 0..20 {
            scan::linear_scan_with(&a, &x, None, &opts)?;
        }
        ctx.synchronize()?;
    }
    measure("2 s of linear_scan calls back to back", "scans_2s")?;
    let start = std::time::Instant::now();
    let mut calls = 0;
    while start.elapsed().as_secs_f64() < 2.0 {
        for _ in 0..20 {
            scan::linear_scan_with(&a, &x, None, &opts)?;
        }
        ctx.synchronize()?;
        calls += 20;
    }
    let secs = start.elapsed().as_secs_f64() / calls as f64;
    println!(
        "| {:.2} s | 2 s more of calls back to back: wall clock a call | {:.3} ms | {:.0} GB/s |",
        t0.elapsed().as_secs_f64(),
        secs * 1e3,
        bytes / secs / 1e9
    );
    figures.insert("scans_2s_wall_per_call".into(), (secs * 1e3).into());
    if let Some(path) = json {
        std::fs::write(path, serde_json::to_string_pretty(&figures)?)?;
    }
    Ok(())
}
