//! Graphics-adjacent use: the engine computes on a device the application owns, and the
//! application draws the result from a texture, headless, into a PNG.
//!
//! ```text
//! cargo run --release --example texture -- [--out field.png]
//! ```
//! The application opens the device (here on the adapter the engine would pick), shares it
//! with the engine (`Context::from_wgpu`), runs one matmul on it, copies the result's buffer
//! (`Tensor::wgpu_buffer`) into an `r32float` texture and renders it with its own pipeline.
//! Nothing is read back between the compute and the draw; the frame is read back only to
//! save it. The code lives in `examples/common/texture.rs`, shared with `tests/texture.rs`.

#[path = "common/texture.rs"]
mod texture;

use std::path::PathBuf;

const USAGE: &str = "usage: texture [--out FILE.png]
Computes a field with the engine on the application's device, renders it from a texture
headless and writes the frame as a PNG (default field.png). The adapter: WGPU_ADAPTER_NAME,
ENGINE_BACKEND=vulkan|gl|metal|dx12 as for the engine.";

fn main() -> texture::Result<()> {
    let mut out = PathBuf::from("field.png");
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            "--out" => out = PathBuf::from(it.next().ok_or("--out needs a value")?),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}").into()),
        }
    }
    // The application's side: an instance, an adapter, a device.
    let backends = match wgsl_compute::context::BackendChoice::from_env()? {
        wgsl_compute::context::BackendChoice::Only(b) => b,
        _ => wgpu::Backends::all(),
    };
    wgsl_compute::context::skip_device_select_layer(); // no display: keep Mesa's layer quiet
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    let instance = wgpu::Instance::new(desc);
    let mut adapters = pollster::block_on(instance.enumerate_adapters(backends));
    if let Ok(name) = std::env::var("WGPU_ADAPTER_NAME") {
        adapters.retain(|a| a.get_info().name.to_lowercase().contains(&name.to_lowercase()));
    }
    // Hardware first, as the engine ranks them.
    adapters.sort_by_key(|a| a.get_info().device_type == wgpu::DeviceType::Cpu);
    let adapter = adapters
        .first()
        .ok_or("no adapter (install mesa-vulkan-drivers for lavapipe)")?;
    println!(
        "adapter: {} ({:?})",
        adapter.get_info().name,
        adapter.get_info().backend
    );
    let (device, queue) = texture::open(adapter)?;

    // The engine on the same device.
    let ctx = wgsl_compute::Context::from_wgpu(device.clone(), queue.clone());
    let field = texture::field(&ctx)?;
    let frame = texture::render(&device, &queue, &ctx, &field)?;
    texture::write_png(&out, &frame)?;
    println!(
        "wrote {} ({}x{}: the engine's {f}x{f} matmul result drawn from a texture)",
        out.display(),
        frame.width,
        frame.height,
        f = texture::FIELD
    );
    Ok(())
}
