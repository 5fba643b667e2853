//! The texture example on every adapter: the engine computes on the application's device, the
//! application renders the result from a texture; the frame equals the CPU reference's field
//! through the same colour map, and the PNG round-trips.

#[path = "../examples/common/texture.rs"]
mod app;

use wgsl_compute::Context;

fn app_adapters() -> Vec<wgpu::Adapter> {
    let backends = match wgsl_compute::context::BackendChoice::from_env().unwrap() {
        wgsl_compute::context::BackendChoice::Only(b) => b,
        wgsl_compute::context::BackendChoice::Cpu => return vec![],
        wgsl_compute::context::BackendChoice::Auto => wgpu::Backends::all(),
    };
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    let mut list = pollster::block_on(wgpu::Instance::new(desc).enumerate_adapters(backends));
    if let Ok(name) = std::env::var("WGPU_ADAPTER_NAME") {
        list.retain(|a| a.get_info().name.to_lowercase().contains(&name.to_lowercase()));
    }
    list
}

#[test]
fn texture_compute_result_renders_on_the_shared_device() {
    let want_field = app::field(&Context::cpu()).unwrap().to_vec().unwrap();
    let adapters = app_adapters();
    if adapters.is_empty() {
        assert!(
            !wgsl_compute::context::require_gpu(),
            "ENGINE_REQUIRE_GPU=1 but no adapter"
        );
        eprintln!("no adapter: skipped");
    }
    for adapter in adapters {
        let name = format!("{} ({:?})", adapter.get_info().name, adapter.get_info().backend);
        let (device, queue) = app::open(&adapter).unwrap();
        let ctx = Context::from_wgpu(device.clone(), queue.clone());
        let field = app::field(&ctx).unwrap();
        let frame = app::render(&device, &queue, &ctx, &field).unwrap();
        let size = app::FIELD * app::SCALE;
        assert_eq!((frame.width, frame.height), (size, size));
        // Every pixel is its texel's value through the colour map (rounding to 8 bits).
        let mut worst = (0i32, 0u32, 0u32);
        for y in 0..size {
            for x in 0..size {
                let v = want_field[((y / app::SCALE) * app::FIELD + x / app::SCALE) as usize];
                let rgb = app::colormap(v);
                let p = ((y * size + x) * 4) as usize;
                for (c, want) in rgb.iter().enumerate() {
                    let d = (frame.rgba[p + c] as i32 - (want * 255.0).round() as i32).abs();
                    if d > worst.0 {
                        worst = (d, x, y);
                    }
                }
                assert_eq!(frame.rgba[p + 3], 255);
            }
        }
        assert!(
            worst.0 <= 2,
            "{name}: pixel ({}, {}) off by {}",
            worst.1,
            worst.2,
            worst.0
        );
        // The frame is not flat: the field spans the colour map.
        let reds: std::collections::HashSet<u8> = frame.rgba.iter().step_by(4).copied().collect();
        assert!(reds.len() > 50, "{name}: only {} red levels", reds.len());
        // The PNG decodes to the same pixels.
        let path = std::env::temp_dir().join(format!("engine-texture-{}.png", std::process::id()));
        app::write_png(&path, &frame).unwrap();
        let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (size, size));
        assert_eq!(&buf[..info.buffer_size()], &frame.rgba[..], "{name}: PNG round trip");
        std::fs::remove_file(&path).ok();
        eprintln!("texture on {name}: worst channel difference {}", worst.0);
    }
}
