//! A compute result drawn by the application: the engine computes a field on the
//! application's own device (`Context::from_wgpu`), the application copies the result's
//! buffer into a texture and renders it with its own pipeline, headless, into an RGBA image.
//! No readback sits between the compute and the draw.
//!
//! Shared by `examples/texture.rs` and `tests/texture.rs` with `#[path = "..."] mod texture;`.

#![allow(dead_code)]

use wgsl_compute::{ops, Context, Tensor};

/// Texels per side of the computed field.
pub const FIELD: u32 = 64;
/// Pixels per texel in the rendered image.
pub const SCALE: u32 = 4;
/// Sine and cosine waves multiplied by the matmul (the inner dimension).
const WAVES: usize = 4;

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// An RGBA8 image, rows top to bottom.
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// The field (FIELD, FIELD) on `ctx`: an interference pattern of plane waves as one matmul,
/// `z = u @ v` with u (FIELD, WAVES) rows of sines and v (WAVES, FIELD) columns of cosines,
/// so |z| <= WAVES.
pub fn field(ctx: &Context) -> wgsl_compute::Result<Tensor> {
    let n = FIELD as usize;
    let mut u = Vec::with_capacity(n * WAVES);
    let mut v = vec![0.0; WAVES * n];
    for i in 0..n {
        for k in 0..WAVES {
            let f = (k + 1) as f32 * 0.07;
            u.push((i as f32 * f + k as f32).sin());
        }
    }
    for k in 0..WAVES {
        for j in 0..n {
            let f = (WAVES - k) as f32 * 0.06;
            v[k * n + j] = (j as f32 * f - k as f32).cos();
        }
    }
    let u = Tensor::from_slice(ctx, &[n, WAVES], &u)?;
    let v = Tensor::from_slice(ctx, &[WAVES, n], &v)?;
    ops::matmul(&u, &v)
}

/// The colour of a field value: a blue-teal-yellow ramp over [-WAVES, WAVES]. The shader
/// below computes the same (tests compare the two).
pub fn colormap(value: f32) -> [f32; 3] {
    let t = (0.5 + value / (2.0 * WAVES as f32)).clamp(0.0, 1.0);
    let (a, b, c) = ([0.07, 0.05, 0.35], [0.1, 0.6, 0.55], [0.98, 0.9, 0.15]);
    let mix = |x: [f32; 3], y: [f32; 3], s: f32| [0, 1, 2].map(|i| x[i] + (y[i] - x[i]) * s);
    if t < 0.5 {
        mix(a, b, t * 2.0)
    } else {
        mix(b, c, t * 2.0 - 1.0)
    }
}

const SHADER: &str = r#"
// The application's draw: a full-screen triangle, each pixel coloured by its field texel.
@group(0) @binding(0) var field: texture_2d<f32>; // (FIELD, FIELD) r32float
@group(0) @binding(1) var<uniform> scale: vec4<f32>; // x: pixels per texel, y: 2 * WAVES

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let p = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));
    return vec4<f32>(p * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
    let texel = vec2<i32>(floor(pos.xy / scale.x));
    let value = textureLoad(field, texel, 0).r;
    let t = clamp(0.5 + value / scale.y, 0.0, 1.0);
    let a = vec3<f32>(0.07, 0.05, 0.35);
    let b = vec3<f32>(0.1, 0.6, 0.55);
    let c = vec3<f32>(0.98, 0.9, 0.15);
    var rgb: vec3<f32>;
    if (t < 0.5) {
        rgb = mix(a, b, t * 2.0);
    } else {
        rgb = mix(b, c, t * 2.0 - 1.0);
    }
    return vec4<f32>(rgb, 1.0);
}
"#;

/// Copies `field` (FIELD, FIELD) into a texture and renders it at SCALE pixels per texel.
/// `ctx` must be a context over `device` and `queue` (`Context::from_wgpu`).
pub fn render(device: &wgpu::Device, queue: &wgpu::Queue, ctx: &Context, field: &Tensor) -> Result<Frame> {
    let size = FIELD * SCALE;
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("field texture"),
        size: wgpu::Extent3d {
            width: FIELD,
            height: FIELD,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::R32Float,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("frame"),
        size: wgpu::Extent3d {
            width: size,
            height: size,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8Unorm,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let scale = [SCALE as f32, 2.0 * WAVES as f32, 0.0, 0.0];
    let uniform = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("scale"),
        size: 16,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&uniform, 0, bytemuck::cast_slice(&scale));
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("field draw"),
        source: wgpu::ShaderSource::Wgsl(SHADER.into()),
    });
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("field draw"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("vs"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: wgpu::PrimitiveState::default(),
        depth_stencil: None,
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fs"),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::TextureFormat::Rgba8Unorm.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("field draw"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::TextureView(&texture.create_view(&Default::default())),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: uniform.as_entire_binding(),
            },
        ],
    });
    // Rows of the copy out of the frame are padded to 256 bytes.
    let row = (size * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("frame readback"),
        size: (row * size) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });

    // The engine's result, by reference: its buffer, copied on the device into the texture.
    let (buffer, range) = field.wgpu_buffer()?;
    ctx.submit(); // the engine's recorded ops go first on the shared queue
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("frame") });
    encoder.copy_buffer_to_texture(
        wgpu::TexelCopyBufferInfo {
            buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: range.start,
                bytes_per_row: Some(FIELD * 4),
                rows_per_image: Some(FIELD),
            },
        },
        texture.as_image_copy(),
        texture.size(),
    );
    {
        let view = target.create_view(&Default::default());
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("frame"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
    encoder.copy_texture_to_buffer(
        target.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row),
                rows_per_image: Some(size),
            },
        },
        target.size(),
    );
    queue.submit([encoder.finish()]);

    // Headless: wait for the frame and read it (a windowed app would present it instead).
    let (tx, rx) = std::sync::mpsc::channel();
    readback.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely())?;
    rx.recv()??;
    let data = readback.slice(..).get_mapped_range()?;
    let mut rgba = Vec::with_capacity((size * size * 4) as usize);
    for y in 0..size {
        let start = (y * row) as usize;
        rgba.extend_from_slice(&data[start..start + (size * 4) as usize]);
    }
    drop(data);
    readback.unmap();
    Ok(Frame {
        width: size,
        height: size,
        rgba,
    })
}

/// Writes `frame` as an 8-bit RGBA PNG.
pub fn write_png(path: &std::path::Path, frame: &Frame) -> Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, frame.width, frame.height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&frame.rgba)?;
    writer.finish()?;
    Ok(())
}

/// Opens a device on `adapter` for the application (the engine will share it).
pub fn open(adapter: &wgpu::Adapter) -> Result<(wgpu::Device, wgpu::Queue)> {
    let desc = wgpu::DeviceDescriptor {
        label: Some("application device"),
        required_limits: adapter.limits(),
        ..Default::default()
    };
    Ok(pollster::block_on(adapter.request_device(&desc))?)
}
