//! The benchmark's peers: plain WGSL kernels written for the bench alone (`dev/src/shaders/bench/`),
//! run through plain wgpu on a device of their own, opened on the engine's adapter, so nothing
//! of the engine (its kernels, dispatch, pool) is in their figures. Timed as `Context::time`
//! times the engine: GPU timestamps written into the command stream around the dispatch where
//! the adapter has `TIMESTAMP_QUERY_INSIDE_ENCODERS`, else the wall clock around a full wait.
//!
//! - the copy ceiling: a vec4 grid-stride copy (`copy_vec4.wgsl`);
//! - the walk peers: the simplest one-pass lane walk of each scan at its large shape
//!   (`walk_*.wgsl`), the figure an engine scan's lane walk is held to.

use std::time::Instant;

use wgsl_compute::context::{BackendChoice, Clock};
use wgsl_compute::Context;

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A device of the peers' own on the engine's adapter.
pub struct Peer {
    device: wgpu::Device,
    queue: wgpu::Queue,
    timestamps: bool,
}

/// One peer kernel: its pipeline and the workgroup size it was built with.
pub struct PeerKernel {
    pipeline: wgpu::ComputePipeline,
    pub workgroup: u32,
}

impl Peer {
    /// Opens a device on the adapter `ctx` runs on (same name and backend).
    pub fn new(ctx: &Context) -> Result<Self> {
        Self::with_features(ctx, wgpu::Features::empty())
    }

    /// [`Peer::new`] asking also for `extra` features, those the adapter has.
    pub fn with_features(ctx: &Context, extra: wgpu::Features) -> Result<Self> {
        let info = ctx.info();
        let backends = match BackendChoice::from_env()? {
            BackendChoice::Only(b) => b,
            _ => wgpu::Backends::all(),
        };
        wgsl_compute::context::skip_device_select_layer(); // no display: keep Mesa's layer quiet
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = backends;
        let instance = wgpu::Instance::new(desc);
        let adapters = pollster::block_on(instance.enumerate_adapters(backends));
        let adapter = adapters
            .into_iter()
            .find(|a| {
                let a = a.get_info();
                a.name == info.name && a.backend == info.backend
            })
            .ok_or_else(|| format!("no adapter {} ({:?}) for the bench's peers", info.name, info.backend))?;
        let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let features = adapter.features() & (wanted | extra);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("bench peer device"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        }))?;
        Ok(Peer {
            timestamps: features.contains(wanted),
            device,
            queue,
        })
    }

    /// Entry `entry` of `wgsl` with its override constant `WG` (the workgroup size) set to
    /// `workgroup`.
    pub fn kernel(&self, label: &str, wgsl: &str, entry: &str, workgroup: u32) -> PeerKernel {
        self.kernel_with(label, wgsl, entry, workgroup, &[("WG", workgroup as f64)], None)
    }

    /// Entry `entry` of `wgsl` (workgroup size `workgroup`) with override `constants`, and an
    /// explicit layout (binding 0 uniform, then storage: `true` read-only) where given.
    pub fn kernel_with(
        &self,
        label: &str,
        wgsl: &str,
        entry: &str,
        workgroup: u32,
        constants: &[(&str, f64)],
        storage: Option<&[bool]>,
    ) -> PeerKernel {
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(wgsl.into()),
        });
        let layout = storage.map(|storage| {
            let mut entries = vec![wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }];
            for (i, &read_only) in storage.iter().enumerate() {
                entries.push(wgpu::BindGroupLayoutEntry {
                    binding: 1 + i as u32,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                });
            }
            let bgl = self.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(label),
                entries: &entries,
            });
            self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: &[Some(&bgl)],
                immediate_size: 0,
            })
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: layout.as_ref(),
            module: &module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants,
                ..Default::default()
            },
            cache: None,
        });
        PeerKernel { pipeline, workgroup }
    }

    /// Fills `buffer` with uniform values in [0.05, 0.95), fresh all through. Why: on the H200
    /// a buffer that was never written reads far faster than one holding data (the bench's
    /// linear walk peer: 0.94 against 2.61 ms), and so did one holding a 16 MiB random block
    /// repeated (0.94 ms again; the same loads without the recurrence ran at 115% of the copy
    /// ceiling), so a peer that timed either would flatter itself. The engine's inputs are
    /// fresh random values too.
    #[allow(dead_code)] // the bench's (walk peers), not the walk probe's
    pub fn fill(&self, buffer: &wgpu::Buffer, rng: &mut wgsl_compute::check::Rng) {
        const BLOCK: u64 = 16 << 20;
        let mut offset = 0;
        while offset < buffer.size() {
            let n = BLOCK.min(buffer.size() - offset);
            let words: Vec<f32> = (0..n / 4).map(|_| (0.05 + 0.9 * rng.uniform()) as f32).collect();
            self.queue.write_buffer(buffer, offset, bytemuck::cast_slice(&words));
            self.queue.submit([]);
            offset += n;
        }
    }

    /// An engine context on this peer's own device (`Context::from_wgpu`): the engine's
    /// dispatch path on a device the engine did not open.
    #[allow(dead_code)] // the walk probe's
    pub fn context(&self) -> Context {
        Context::from_wgpu(self.device.clone(), self.queue.clone())
    }

    /// A storage buffer of `bytes` (contents zero).
    pub fn buffer(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    /// A storage buffer holding `data`, written in 16 MiB pieces.
    #[allow(dead_code)] // the probes' (walk_probe), not the bench's
    pub fn upload(&self, label: &str, data: &[f32]) -> wgpu::Buffer {
        let buffer = self.buffer(label, (data.len() * 4) as u64);
        for (k, piece) in data.chunks(4 << 20).enumerate() {
            self.queue
                .write_buffer(&buffer, (k * (16 << 20)) as u64, bytemuck::cast_slice(piece));
            self.queue.submit([]);
        }
        buffer
    }

    /// A storage buffer holding `data`, written by one `write_buffer` of the whole of it.
    #[allow(dead_code)] // the probes' (walk_probe), not the bench's
    pub fn upload_whole(&self, label: &str, data: &[f32]) -> wgpu::Buffer {
        let buffer = self.buffer(label, (data.len() * 4) as u64);
        self.queue.write_buffer(&buffer, 0, bytemuck::cast_slice(data));
        self.queue.submit([]);
        buffer
    }

    /// `count` f32 of `buffer` from byte `offset`, read back.
    #[allow(dead_code)] // the probes' (walk_probe), not the bench's
    pub fn read(&self, buffer: &wgpu::Buffer, offset: u64, count: usize) -> Result<Vec<f32>> {
        let bytes = (count * 4).next_multiple_of(4) as u64;
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("peer read"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, offset, &staging, 0, bytes);
        self.queue.submit([encoder.finish()]);
        staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.device.poll(wgpu::PollType::wait_indefinitely())?;
        let words: Vec<f32> = bytemuck::pod_collect_to_vec(&staging.slice(..).get_mapped_range()?);
        Ok(words)
    }

    /// Seconds of one dispatch of `kernel` over `workgroups` workgroups with the uniform words
    /// `params` at binding 0 and `buffers` at bindings 1.., and how they were measured.
    pub fn time(
        &self,
        kernel: &PeerKernel,
        params: &[u32],
        buffers: &[&wgpu::Buffer],
        workgroups: u32,
    ) -> Result<(f64, Clock)> {
        self.time_chain(kernel, &[params.to_vec()], buffers, workgroups)
    }

    /// Seconds of one dispatch of `kernel` per entry of `params` (its uniform words), back to
    /// back in one compute pass, all with `buffers` at bindings 1..: the way a plan runs a
    /// chain of dependent dispatches (wgpu puts a barrier between dispatches that write a
    /// buffer the next one uses). Timestamps around the whole chain, else the wall clock.
    pub fn time_chain(
        &self,
        kernel: &PeerKernel,
        params: &[Vec<u32>],
        buffers: &[&wgpu::Buffer],
        workgroups: u32,
    ) -> Result<(f64, Clock)> {
        let layout = kernel.pipeline.get_bind_group_layout(0);
        let bind_groups: Vec<wgpu::BindGroup> = params
            .iter()
            .map(|params| {
                let mut words = params.clone();
                words.resize(params.len().div_ceil(4).max(1) * 4, 0);
                let uniform = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("peer params"),
                    size: 4 * words.len() as u64,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                self.queue.write_buffer(&uniform, 0, bytemuck::cast_slice(&words));
                let mut entries = vec![wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                }];
                for (i, b) in buffers.iter().enumerate() {
                    entries.push(wgpu::BindGroupEntry {
                        binding: 1 + i as u32,
                        resource: b.as_entire_binding(),
                    });
                }
                self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("peer bindings"),
                    layout: &layout,
                    entries: &entries,
                })
            })
            .collect();
        let queries = self.timestamps.then(|| {
            let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("peer timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolved = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("peer timestamps resolved"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let read = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("peer timestamps read"),
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
                label: Some("peer"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&kernel.pipeline);
            for bind_group in &bind_groups {
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups(workgroups, 1, 1);
            }
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

    /// The median seconds of `repeat` dispatches (as [`Peer::time`]) after `warmup` untimed ones.
    pub fn median(
        &self,
        kernel: &PeerKernel,
        params: &[u32],
        buffers: &[&wgpu::Buffer],
        workgroups: u32,
        warmup: usize,
        repeat: usize,
    ) -> Result<f64> {
        for _ in 0..warmup {
            self.time(kernel, params, buffers, workgroups)?;
        }
        let mut times = (0..repeat)
            .map(|_| self.time(kernel, params, buffers, workgroups).map(|t| t.0))
            .collect::<Result<Vec<_>>>()?;
        times.sort_by(|a, b| a.total_cmp(b));
        Ok(times[times.len() / 2])
    }
}

/// The copy ceiling: a vec4 grid-stride copy of `n` f32 between two buffers of the peer's.
pub struct CopyPeer {
    peer: Peer,
    kernel: PeerKernel,
    src: wgpu::Buffer,
    dst: wgpu::Buffer,
    n4: u32,
}

impl CopyPeer {
    /// `n` f32 (a multiple of 4) on a peer device of `ctx`'s adapter.
    pub fn new(ctx: &Context, n: usize) -> Result<Self> {
        let peer = Peer::new(ctx)?;
        let kernel = peer.kernel(
            "bench/copy_vec4",
            include_str!("../../shaders/bench/copy_vec4.wgsl"),
            "copy_vec4",
            256,
        );
        let (src, dst) = (
            peer.buffer("copy src", n as u64 * 4),
            peer.buffer("copy dst", n as u64 * 4),
        );
        // The source is not filled, unlike the walk peers' inputs: on the H200 the copy moved
        // the same bytes per second either way (4008 GB/s never written, 4006 filled), and
        // filling 512 MiB through the queue before the scans left the chunked scans that
        // follow in the same process 2.5-3x slow (parallel_scan_log long-T 0.128 against
        // 0.050 ms; in a process without the copy both binaries measured 0.050).
        Ok(CopyPeer {
            n4: u32::try_from(n / 4)?,
            peer,
            kernel,
            src,
            dst,
        })
    }

    /// The median seconds of copies by `workgroups` workgroups (the grid the loop strides over).
    pub fn median(&self, workgroups: u32, warmup: usize, repeat: usize) -> Result<f64> {
        let stride = workgroups * self.kernel.workgroup;
        self.peer.median(
            &self.kernel,
            &[self.n4, stride],
            &[&self.src, &self.dst],
            workgroups,
            warmup,
            repeat,
        )
    }

    /// The workgroup counts worth trying for this size: grids of 1024, 4096 and 16384
    /// workgroups (each invocation striding over many vec4s), none larger than one
    /// invocation per vec4.
    pub fn grids(&self) -> Vec<u32> {
        let most = self.n4.div_ceil(self.kernel.workgroup).max(1);
        let mut v: Vec<u32> = [1024, 4096, 16384].iter().map(|&g: &u32| g.min(most)).collect();
        v.dedup();
        v
    }
}
