//! Probes whether wgpu 30's experimental cooperative matrices (`wgpu_cooperative_matrix`,
//! `EXPERIMENTAL_COOPERATIVE_MATRIX`) reach an adapter's matrix units, for issue #19's f16
//! matmul. Prints every adapter's cooperative-matrix configurations as wgpu reports them;
//! on the first adapter that has f16 x f16 -> f32 16 x 16 x 16, runs `coop_probe.wgsl`
//! (f16 inputs, f32 accumulation, a subgroup per 64 x 64 block: one subgroup a workgroup, or
//! four in a 2 x 2 tile), checks each against an f64 product of the same f16 values at
//! 128^3, and times each at 4096^3.
//! Plain wgpu on a device of its own: nothing of the engine is in the figure.
//!
//! Measured on the H200 (Vulkan, driver 580.159.04): wgpu reports six configurations (16 x 16
//! x 16, 16 x 8 x 16 and 16 x 8 x 8, f16 inputs, f16 or f32 accumulators); both kernels agree
//! with the f64 product to 1.3e-7 and run 4096^3 at 74.6-74.8 TFLOP/s (the fp32 large-tile
//! kernel: 32.9), loading their tiles straight from the storage buffers. Two more variants
//! were measured and dropped (commit 6406cc0 has them): prefetching the next K step's tiles
//! (74.0) and staging 32-wide K slices in workgroup memory with vec4<f16> loads and scalar
//! stores, two barriers a slice (19.4). What is left to try: larger blocks a subgroup, the
//! 16 x 8 x 16 shape, stores into workgroup memory as wide as the loads.
//!
//! Eight more variants, measured on the H200 on 2026-12-01: `coop_matmul_2x2_k32` (direct
//! loads, K unrolled by 2) ran 74.5, no better; seven workgroup-staged ones that read f16
//! matrices through a pointer to vec4<u32> (or u32) words all failed in the driver's compiler
//! ("NVVM compilation failed: 1" at pipeline creation, which loses the device). One of them is
//! kept as `coop_staged_v4`; commit 177c1ce8af52 holds the rest.
//!
//! Issue #44's lead, measured on an H100 (Vulkan, driver 580.159.04) on 2026-12-06: naga
//! decorates every array type with `ArrayStride`, which Vulkan allows only for buffers, so
//! `--passthrough` loads naga's SPIR-V through wgpu's passthrough with those decorations of
//! the workgroup arrays removed (`--keep-stride` keeps them). The lead is not the cause:
//! `coop_staged_v4` fails the same way with and without them, and passthrough itself changes
//! nothing (`coop_matmul_2x2`: 75.5 TFLOP/s both ways). The cause is the pointer's element
//! type: the same kernel with its tiles as vec4<f16> words (`coop_staged_h4`, written by
//! `coop_probe_staged.py` with five variants) compiles through plain wgpu and runs 90.7
//! TFLOP/s; with 16-wide K slices 116.4, with eight subgroups over 256 x 128 (16-wide
//! slices) 120.7, over 128 x 256 112.6, eight subgroups of 32 x 64 fragments 111.7, and
//! without the rows' padding 64.6 (bank conflicts). Raw: `benches/results/raw/2026-12-06b/`.
//!
//! The 16 x 8 x 16 shape cannot be written: naga 30's WGSL has only `coop_mat8x8` and
//! `coop_mat16x16`. Each variant is checked against the f64 product at 128^3 before it is
//! timed; one that fails or whose pipeline the driver rejects with a validation error is
//! reported and skipped (a compiler failure that loses the device ends the process: `--only`
//! runs chosen entries). `--json` writes every timed variant's
//! `coop_probe_<entry>_4096_tflops` and the best as `coop_probe_f16_4096_tflops`.
//! `tests/shaders.rs` checks that naga validates the WGSL and writes its SPIR-V.
//!
//!     cargo run --release -p wgsl-compute-dev --bin coop_probe [-- --only ENTRY,ENTRY] [--json out.json]

use std::time::Instant;

use half::f16;
use wgsl_compute::check::Rng;
use wgsl_compute::context::BackendChoice;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const WGSL: &str = include_str!("coop_probe.wgsl");

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("usage: coop_probe [--only entry,entry] [--json out.json]\n(the adapters come from ENGINE_BACKEND, as for every example)");
        return Ok(());
    }
    let json = args
        .iter()
        .position(|a| a == "--json")
        .and_then(|i| args.get(i + 1))
        .cloned();
    // --only a,b: just those entry points (a driver that fails to compile one can lose the
    // device, so each variant can run in a process of its own).
    // --passthrough: naga's SPIR-V through wgpu's passthrough, the ArrayStride decorations of
    // workgroup arrays removed (--keep-stride keeps them: the control).
    let mode = if args.iter().any(|a| a == "--passthrough") {
        Some(args.iter().any(|a| a == "--keep-stride"))
    } else {
        None
    };
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.split(',').map(str::to_string).collect());
    let backends = match BackendChoice::from_env()? {
        BackendChoice::Only(b) => b,
        _ => wgpu::Backends::all(),
    };
    wgsl_compute::context::skip_device_select_layer(); // no display: keep Mesa's layer quiet
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    let instance = wgpu::Instance::new(desc);
    let adapters = pollster::block_on(instance.enumerate_adapters(backends));
    let mut chosen = None;
    for adapter in adapters {
        let info = adapter.get_info();
        let f = adapter.features();
        let configs = adapter.cooperative_matrix_properties();
        println!(
            "{} ({:?}, driver {}): SHADER_F16 {}, SUBGROUP {}, EXPERIMENTAL_COOPERATIVE_MATRIX {}, {} configurations",
            info.name,
            info.backend,
            info.driver_info,
            f.contains(wgpu::Features::SHADER_F16),
            f.contains(wgpu::Features::SUBGROUP),
            f.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX),
            configs.len()
        );
        for c in &configs {
            println!(
                "  M {} N {} K {}  A/B {:?} -> C {:?}{}",
                c.m_size,
                c.n_size,
                c.k_size,
                c.ab_type,
                c.cr_type,
                if c.saturating_accumulation { " (saturating)" } else { "" }
            );
        }
        let f16_f32 = configs.iter().any(|c| {
            (c.m_size, c.n_size, c.k_size) == (16, 16, 16)
                && c.ab_type == wgpu::CooperativeScalarType::F16
                && c.cr_type == wgpu::CooperativeScalarType::F32
        });
        if chosen.is_none()
            && f16_f32
            && f.contains(wgpu::Features::SHADER_F16 | wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX)
        {
            chosen = Some(adapter);
        }
    }
    let Some(adapter) = chosen else {
        println!("no adapter offers f16 x f16 -> f32 16x16x16 cooperative matrices through wgpu: nothing to run");
        return Ok(());
    };
    let probe = Probe::new(&adapter, only.as_deref(), mode)?;
    let n = 4096;
    let mut best: f64 = 0.0;
    let mut keys = vec![];
    // A variant that fails (its pipeline rejected, its product wrong) is reported and skipped:
    // the others still run, and only verified ones count.
    for (entry, tm, tn) in ENTRIES {
        if !probe.pipelines.iter().any(|(e, _)| *e == entry) {
            continue;
        }
        let size = tm.max(tn).max(128);
        let err = match probe.check(entry, tm, tn, size) {
            Ok(err) if err <= 1e-3 => err,
            Ok(err) => {
                println!("{entry}: WRONG at {size}^3, max |err| / sum |a||b| = {err:.2e}; not timed");
                continue;
            }
            Err(e) => {
                println!("{entry}: FAILED at {size}^3: {e}; not timed");
                continue;
            }
        };
        let s = probe.median(entry, tm, tn, n, 3, 10)?;
        let tflops = 2.0 * (n as f64).powi(3) / s / 1e12;
        best = best.max(tflops);
        keys.push(format!("  \"coop_probe_{entry}_{n}_tflops\": {tflops}"));
        println!(
            "{entry}: check at {size}^3 against the f64 product of the same f16 values, max |err| / sum |a||b| = {err:.2e}; \
             {n}^3 in {:.3} ms, {tflops:.1} TFLOP/s (f16 inputs, f32 accumulation)",
            s * 1e3
        );
    }
    if let Some(path) = json {
        keys.push(format!("  \"coop_probe_f16_{n}_tflops\": {best}"));
        std::fs::write(path, format!("{{\n{}\n}}\n", keys.join(",\n")))?;
    }
    Ok(())
}

/// The kernel's entry points and the output tile (rows, columns) each workgroup covers.
const ENTRIES: [(&str, usize, usize); 12] = [
    ("coop_matmul", 64, 64),
    ("coop_matmul_2x2", 128, 128),
    ("coop_matmul_2x2_k32", 128, 128),
    ("coop_staged_v4", 128, 128),
    ("coop_staged_h4", 128, 128),
    ("coop_staged_h4_k16", 128, 128),
    ("coop_staged_h4_nopad", 128, 128),
    ("coop_staged_h4_256x128", 256, 128),
    ("coop_staged_h4_128x256", 128, 256),
    ("coop_staged_h4_256x128_p4", 256, 128),
    ("coop_staged_h4_256x256", 256, 256),
    ("coop_staged_h4_f2x4", 128, 128),
];

/// The probe's device, pipeline and timestamp support.
struct Probe {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipelines: Vec<(&'static str, wgpu::ComputePipeline)>,
    timestamps: bool,
}

/// A product's buffers: a (n, n) and b (n, n) f16, c (n, n) f32.
struct Operands {
    a: wgpu::Buffer,
    b: wgpu::Buffer,
    c: wgpu::Buffer,
    params: wgpu::Buffer,
    n: usize,
}

impl Probe {
    /// `passthrough`: None builds the pipelines from the WGSL as wgpu does; Some(keep_stride)
    /// from naga's SPIR-V of each entry point through wgpu's passthrough, with the ArrayStride
    /// decorations of workgroup arrays removed unless `keep_stride`.
    fn new(adapter: &wgpu::Adapter, only: Option<&[String]>, passthrough: Option<bool>) -> Result<Self> {
        let stamps = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let pass = if passthrough.is_some() {
            if !adapter.features().contains(wgpu::Features::PASSTHROUGH_SHADERS) {
                return Err("--passthrough: this adapter does not offer PASSTHROUGH_SHADERS".into());
            }
            wgpu::Features::PASSTHROUGH_SHADERS
        } else {
            wgpu::Features::empty()
        };
        let features = wgpu::Features::SHADER_F16
            | wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX
            | pass
            | (adapter.features() & stamps);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("coop probe"),
            required_features: features,
            required_limits: adapter.limits(),
            // SAFETY: the probe uses only the cooperative-matrix loads, stores and
            // multiply-adds, on in-bounds tiles of buffers it sized itself.
            experimental_features: unsafe { wgpu::ExperimentalFeatures::enabled() },
            ..Default::default()
        }))?;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("coop_probe"),
            source: wgpu::ShaderSource::Wgsl(WGSL.into()),
        });
        // Each pipeline in an error scope of its own: a driver that rejects one variant's
        // SPIR-V costs that variant only.
        let mut pipelines = vec![];
        for &(entry, _, _) in &ENTRIES {
            if only.is_some_and(|o| !o.iter().any(|e| e == entry)) {
                continue;
            }
            let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
            let own = match passthrough {
                None => None,
                Some(keep_stride) => Some(passthrough_pipeline(&device, entry, keep_stride)?),
            };
            let (module, layout) = match &own {
                Some((m, l)) => (m, Some(l)),
                None => (&module, None),
            };
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout,
                module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
            match pollster::block_on(scope.pop()) {
                None => pipelines.push((entry, pipeline)),
                Some(e) => println!("{entry}: the pipeline was rejected: {e}"),
            }
        }
        Ok(Probe {
            timestamps: features.contains(stamps),
            device,
            queue,
            pipelines,
        })
    }

    /// Random f16 operands of n x n (n a multiple of every tile) and their f16 values as f64.
    fn operands(&self, n: usize, seed: u64) -> (Operands, Vec<f64>, Vec<f64>) {
        let mut rng = Rng::new(seed);
        let a: Vec<f16> = rng
            .vec_range(n * n, -1.0, 1.0)
            .iter()
            .map(|&v| f16::from_f32(v))
            .collect();
        let b: Vec<f16> = rng
            .vec_range(n * n, -1.0, 1.0)
            .iter()
            .map(|&v| f16::from_f32(v))
            .collect();
        let buffer = |label, bytes: &[u8], usage| {
            let buf = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes.len() as u64,
                usage: usage | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.queue.write_buffer(&buf, 0, bytes);
            buf
        };
        let storage = wgpu::BufferUsages::STORAGE;
        let bits = |v: &[f16]| v.iter().map(|x| x.to_bits()).collect::<Vec<u16>>();
        let params = [n as u32, n as u32, n as u32, 0];
        let ops = Operands {
            a: buffer("coop a", bytemuck::cast_slice(&bits(&a)), storage),
            b: buffer("coop b", bytemuck::cast_slice(&bits(&b)), storage),
            c: buffer("coop c", &vec![0u8; n * n * 4], storage | wgpu::BufferUsages::COPY_SRC),
            params: buffer(
                "coop params",
                bytemuck::cast_slice(&params),
                wgpu::BufferUsages::UNIFORM,
            ),
            n,
        };
        let wide = |v: &[f16]| v.iter().map(|x| x.to_f64()).collect();
        (ops, wide(&a), wide(&b))
    }

    /// Records one product into `encoder` (c must be zero: the kernel accumulates into it).
    fn record(&self, entry: &str, tm: usize, tn: usize, ops: &Operands, encoder: &mut wgpu::CommandEncoder) {
        let Some((_, pipeline)) = self.pipelines.iter().find(|(e, _)| *e == entry) else {
            return;
        };
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("coop bindings"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: ops.params.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: ops.a.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: ops.b.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: ops.c.as_entire_binding(),
                },
            ],
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("coop_probe"),
            timestamp_writes: None,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups((ops.n / tn) as u32, (ops.n / tm) as u32, 1);
    }

    /// The largest |c - a @ b| over sum_k |a||b| of its row and column, at n x n.
    fn check(&self, entry: &str, tm: usize, tn: usize, n: usize) -> Result<f64> {
        let (ops, a, b) = self.operands(n, 19);
        let read = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("coop read"),
            size: (n * n * 4) as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.clear_buffer(&ops.c, 0, None);
        self.record(entry, tm, tn, &ops, &mut encoder);
        encoder.copy_buffer_to_buffer(&ops.c, 0, &read, 0, (n * n * 4) as u64);
        self.queue.submit([encoder.finish()]);
        read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        let c: Vec<f32> = bytemuck::pod_collect_to_vec(&read.slice(..).get_mapped_range()?);
        let mut worst: f64 = 0.0;
        for i in 0..n {
            for j in 0..n {
                let (mut want, mut scale) = (0.0, 0.0);
                for k in 0..n {
                    want += a[i * n + k] * b[k * n + j];
                    scale += (a[i * n + k] * b[k * n + j]).abs();
                }
                worst = worst.max((c[i * n + j] as f64 - want).abs() / scale.max(1e-30));
            }
        }
        Ok(worst)
    }

    /// Median seconds of one n x n x n product over `repeat` runs after `warmup`.
    fn median(&self, entry: &str, tm: usize, tn: usize, n: usize, warmup: usize, repeat: usize) -> Result<f64> {
        let (ops, _, _) = self.operands(n, 23);
        let mut times = vec![];
        for i in 0..warmup + repeat {
            let t = self.time(entry, tm, tn, &ops)?;
            if i >= warmup {
                times.push(t);
            }
        }
        times.sort_by(|x, y| x.total_cmp(y));
        Ok(times[times.len() / 2])
    }

    /// Seconds of one product: timestamps around its pass where the adapter has them inside
    /// encoders, else the wall clock around a full wait.
    fn time(&self, entry: &str, tm: usize, tn: usize, ops: &Operands) -> Result<f64> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let queries = self.timestamps.then(|| {
            let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("coop timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let buffer = |usage| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("coop timestamps"),
                    size: 16,
                    usage,
                    mapped_at_creation: false,
                })
            };
            let resolved = buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
            let read = buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
            (set, resolved, read)
        });
        // The clear is outside the timed region: the stamps go around the product's pass.
        encoder.clear_buffer(&ops.c, 0, None);
        if let Some((set, _, _)) = &queries {
            encoder.write_timestamp(set, 0);
        }
        self.record(entry, tm, tn, ops, &mut encoder);
        if let Some((set, resolved, read)) = &queries {
            encoder.write_timestamp(set, 1);
            encoder.resolve_query_set(set, 0..2, resolved, 0);
            encoder.copy_buffer_to_buffer(resolved, 0, read, 0, 16);
        }
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        let start = Instant::now();
        self.queue.submit([encoder.finish()]);
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        let wall = start.elapsed().as_secs_f64();
        let Some((_, _, read)) = &queries else {
            return Ok(wall);
        };
        read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&read.slice(..).get_mapped_range()?);
        Ok(ticks[1].saturating_sub(ticks[0]) as f64 * self.queue.get_timestamp_period() as f64 * 1e-9)
    }
}

/// The SPIR-V naga writes for `entry` of the probe's WGSL, as a passthrough module with its
/// explicit layout (uniform params, a, b read-only, c read-write). Unless `keep_stride`, the
/// `ArrayStride` decorations of the arrays in workgroup memory are removed: naga decorates
/// every array type, and the Vulkan spec allows explicit layout only in the buffer and
/// push-constant storage classes (gfx-rs/wgpu issue 7696), which is the lead issue #44 asks
/// to test against the driver's "NVVM compilation failed" on the staged kernels.
fn passthrough_pipeline(
    device: &wgpu::Device,
    entry: &str,
    keep_stride: bool,
) -> Result<(wgpu::ShaderModule, wgpu::PipelineLayout)> {
    let (words, size) = spirv(entry, keep_stride)?;
    // SAFETY: naga validated the module and wrote the SPIR-V; the only edit removes layout
    // decorations from types no buffer uses (strip_workgroup_layout refuses otherwise).
    let shader = unsafe {
        device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
            label: Some(entry),
            entry_points: vec![wgpu::PassthroughShaderEntryPoint {
                name: entry.to_string().into(),
                workgroup_size: (size[0], size[1], size[2]),
            }]
            .into(),
            spirv: Some(words.into()),
            ..Default::default()
        })
    };
    let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let uniform = wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let group = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("coop passthrough"),
        entries: &[uniform, storage(1, true), storage(2, true), storage(3, false)],
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("coop passthrough"),
        bind_group_layouts: &[Some(&group)],
        immediate_size: 0,
    });
    Ok((shader, layout))
}

/// naga's SPIR-V for `entry` of the probe's WGSL (the options wgpu's Vulkan backend uses on a
/// Vulkan 1.3 driver with robust buffer access 2), its workgroup types' layout decorations
/// removed unless `keep_stride`, and the entry point's workgroup size.
fn spirv(entry: &str, keep_stride: bool) -> Result<(Vec<u32>, [u32; 3])> {
    let module = naga::front::wgsl::parse_str(WGSL).map_err(|e| e.emit_to_string(WGSL))?;
    let caps = naga::valid::Capabilities::SHADER_FLOAT16 | naga::valid::Capabilities::COOPERATIVE_MATRIX;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps).validate(&module)?;
    let options = naga::back::spv::Options {
        lang_version: (1, 6),
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: naga::proc::BoundsCheckPolicy::Restrict,
            buffer: naga::proc::BoundsCheckPolicy::Unchecked,
            image_load: naga::proc::BoundsCheckPolicy::Restrict,
            binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
        },
        zero_initialize_workgroup_memory: naga::back::spv::ZeroInitializeWorkgroupMemoryMode::None,
        ..Default::default()
    };
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: entry.to_string(),
    };
    let mut words = naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline))?;
    let removed = if keep_stride {
        0
    } else {
        strip_workgroup_layout(&mut words)?
    };
    println!(
        "{entry}: passthrough SPIR-V, {} words, {removed} layout decorations of workgroup types removed",
        words.len()
    );
    let size = module
        .entry_points
        .iter()
        .find(|e| e.name == entry)
        .map(|e| e.workgroup_size)
        .ok_or_else(|| format!("no entry point {entry}"))?;
    Ok((words, size))
}

/// Removes `ArrayStride`, `MatrixStride` and member `Offset` decorations from the types that
/// workgroup variables reach (arrays and structs, through their elements and members); the
/// number removed. Refuses a module where such a type is also reached from a buffer or push
/// constants, whose layout the decorations define.
fn strip_workgroup_layout(words: &mut Vec<u32>) -> Result<usize> {
    const TYPE_ARRAY: u32 = 28;
    const TYPE_RUNTIME_ARRAY: u32 = 29;
    const TYPE_STRUCT: u32 = 30;
    const TYPE_POINTER: u32 = 32;
    const DECORATE: u32 = 71;
    const MEMBER_DECORATE: u32 = 72;
    const ARRAY_STRIDE: u32 = 6;
    const MATRIX_STRIDE: u32 = 7;
    const OFFSET: u32 = 35;
    const WORKGROUP: u32 = 4;
    // Storage classes whose types carry explicit layout: Uniform, PushConstant, StorageBuffer,
    // PhysicalStorageBuffer.
    const LAID_OUT: [u32; 4] = [2, 9, 12, 5349];
    // Each instruction's (start, word count); the header is 5 words.
    let mut at = 5;
    let mut instructions = vec![];
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 || at + count > words.len() {
            return Err(format!("malformed SPIR-V at word {at}").into());
        }
        instructions.push((at, count));
        at += count;
    }
    let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    let (mut workgroup, mut buffers) = (vec![], vec![]);
    for &(at, count) in &instructions {
        let op = words[at] & 0xffff;
        let w = &words[at + 1..at + count];
        match op {
            TYPE_ARRAY | TYPE_RUNTIME_ARRAY => {
                children.insert(w[0], vec![w[1]]);
            }
            TYPE_STRUCT => {
                children.insert(w[0], w[1..].to_vec());
            }
            TYPE_POINTER if w[1] == WORKGROUP => workgroup.push(w[2]),
            TYPE_POINTER if LAID_OUT.contains(&w[1]) => buffers.push(w[2]),
            _ => {}
        }
    }
    let reach = |mut todo: Vec<u32>| {
        let mut seen = std::collections::HashSet::new();
        while let Some(t) = todo.pop() {
            if seen.insert(t) {
                todo.extend(children.get(&t).into_iter().flatten());
            }
        }
        seen
    };
    let workgroup = reach(workgroup);
    let buffers = reach(buffers);
    let mut out = words[..5].to_vec();
    let mut removed = 0;
    for &(at, count) in &instructions {
        let op = words[at] & 0xffff;
        let w = &words[at + 1..at + count];
        let layout = match op {
            DECORATE => [ARRAY_STRIDE, MATRIX_STRIDE].contains(&w[1]) && workgroup.contains(&w[0]),
            MEMBER_DECORATE => [OFFSET, MATRIX_STRIDE].contains(&w[2]) && workgroup.contains(&w[0]),
            _ => false,
        };
        if layout {
            if buffers.contains(&w[0]) {
                return Err(format!(
                    "type %{} is in workgroup memory and in a buffer: its layout stays",
                    w[0]
                )
                .into());
            }
            removed += 1;
        } else {
            out.extend_from_slice(&words[at..at + count]);
        }
    }
    *words = out;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    /// The staged kernel's SPIR-V loses exactly the strides of its two workgroup arrays; the
    /// buffers' runtime arrays keep theirs.
    #[test]
    fn only_the_workgroup_arrays_lose_their_stride() {
        let (kept, _) = super::spirv("coop_staged_v4", true).unwrap();
        let (stripped, _) = super::spirv("coop_staged_v4", false).unwrap();
        let strides = |w: &[u32]| {
            let mut at = 5;
            let mut n = 0;
            while at < w.len() {
                let count = (w[at] >> 16) as usize;
                n += usize::from(w[at] & 0xffff == 71 && w[at + 2] == 6);
                at += count;
            }
            n
        };
        assert_eq!(strides(&kept) - strides(&stripped), 2);
        assert!(strides(&stripped) >= 2, "the buffers' arrays keep their strides");
    }
}
