//! The benchmark's copy peer: a plain vec4 grid-stride WGSL copy
//! (`shaders/bench/copy_vec4.wgsl`), written apart from the engine's kernels and run through
//! plain wgpu on a device of its own, opened on the engine's adapter, so nothing of the
//! engine (its kernels, dispatch, pool) is in the figure. Timed as `Context::time` times the
//! engine: GPU timestamps written into the command stream around the dispatch where the
//! adapter has `TIMESTAMP_QUERY_INSIDE_ENCODERS`, else the wall clock around a full wait.

use std::time::Instant;

use wgsl_compute::context::{BackendChoice, Clock};
use wgsl_compute::Context;

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const WGSL: &str = include_str!("../../shaders/bench/copy_vec4.wgsl");
const WG: u32 = 256;

/// A vec4 copy of `n` f32 between two buffers of its own device.
pub struct CopyPeer {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    src: wgpu::Buffer,
    dst: wgpu::Buffer,
    n4: u32,
    timestamps: bool,
}

impl CopyPeer {
    /// Opens a device on the adapter `ctx` runs on (same name and backend) and two buffers of
    /// `n` f32 (`n` a multiple of 4).
    pub fn new(ctx: &Context, n: usize) -> Result<Self> {
        let info = ctx.info();
        let backends = match BackendChoice::from_env()? {
            BackendChoice::Only(b) => b,
            _ => wgpu::Backends::all(),
        };
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = backends;
        let instance = wgpu::Instance::new(desc);
        let adapters = pollster::block_on(instance.enumerate_adapters(backends));
        let adapter = adapters
            .into_iter()
            .find(|a| {
                let a = a.get_info();
                a.name == info.name && format!("{:?}", a.backend) == info.backend
            })
            .ok_or_else(|| format!("no adapter {} ({}) for the copy peer", info.name, info.backend))?;
        let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let features = adapter.features() & wanted;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("copy peer device"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        }))?;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("bench/copy_vec4"),
            source: wgpu::ShaderSource::Wgsl(WGSL.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("bench/copy_vec4"),
            layout: None,
            module: &module,
            entry_point: Some("copy_vec4"),
            compilation_options: Default::default(),
            cache: None,
        });
        let n4 = u32::try_from(n / 4)?;
        let buffer = |label| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: n as u64 * 4,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        let (src, dst) = (buffer("copy peer src"), buffer("copy peer dst"));
        Ok(CopyPeer {
            timestamps: features == wanted,
            device,
            queue,
            pipeline,
            src,
            dst,
            n4,
        })
    }

    /// Seconds of one copy run by `workgroups` workgroups of 256 invocations (the grid the
    /// loop strides over), and how they were measured.
    pub fn time(&self, workgroups: u32) -> Result<(f64, Clock)> {
        let params: [u32; 4] = [self.n4, workgroups * WG, 0, 0];
        let uniform = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("copy peer params"),
            size: 16,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&uniform, 0, bytemuck::cast_slice(&params));
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("copy peer bindings"),
            layout: &self.pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: self.src.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: self.dst.as_entire_binding(),
                },
            ],
        });
        let queries = self.timestamps.then(|| {
            let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("copy peer timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolved = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("copy peer timestamps resolved"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let read = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("copy peer timestamps read"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            (set, resolved, read)
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        if let Some((set, _, _)) = &queries {
            encoder.write_timestamp(set, 0);
        }
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("bench/copy_vec4"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(workgroups, 1, 1);
        }
        if let Some((set, resolved, read)) = &queries {
            encoder.write_timestamp(set, 1);
            encoder.resolve_query_set(set, 0..2, resolved, 0);
            encoder.copy_buffer_to_buffer(resolved, 0, read, 0, 16);
        }
        // Nothing of ours is pending before the region: the wall clock starts here.
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        let start = Instant::now();
        self.queue.submit([encoder.finish()]);
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        let wall = start.elapsed().as_secs_f64();
        let Some((_, _, read)) = &queries else {
            return Ok((wall, Clock::WallClock));
        };
        read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&read.slice(..).get_mapped_range()?);
        let ns = ticks[1].saturating_sub(ticks[0]) as f64 * self.queue.get_timestamp_period() as f64;
        Ok((ns * 1e-9, Clock::Timestamps))
    }

    /// The median of `repeat` copies by `workgroups` workgroups, after `warmup` untimed ones.
    pub fn median(&self, workgroups: u32, warmup: usize, repeat: usize) -> Result<f64> {
        for _ in 0..warmup {
            self.time(workgroups)?;
        }
        let mut times = (0..repeat)
            .map(|_| self.time(workgroups).map(|t| t.0))
            .collect::<Result<Vec<_>>>()?;
        times.sort_by(|a, b| a.total_cmp(b));
        Ok(times[times.len() / 2])
    }

    /// The workgroup counts worth trying for this size: grids of 1024, 4096 and 16384
    /// workgroups (each invocation striding over many vec4s), none larger than one
    /// invocation per vec4.
    pub fn grids(&self) -> Vec<u32> {
        let most = self.n4.div_ceil(WG).max(1);
        let mut v: Vec<u32> = [1024, 4096, 16384].iter().map(|&g: &u32| g.min(most)).collect();
        v.dedup();
        v
    }
}
