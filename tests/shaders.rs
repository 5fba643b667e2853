//! Every `.wgsl` file under `shaders/` parses, validates, and translates to SPIR-V, MSL, HLSL
//! and GLSL, so Metal, DX12 and GL problems show up on a machine that has none of them.
//! The SPIR-V also goes through `spirv-val` where that tool is installed.

use std::path::{Path, PathBuf};

fn wgsl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            wgsl_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "wgsl") {
            out.push(path);
        }
    }
}

/// The file's source with its preludes first: a line `// prelude: dir/file.wgsl` (relative
/// to `shaders/`) names a file the engine prepends to this one before compiling it.
fn source_with_preludes(path: &Path) -> Result<String, String> {
    let own = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut src = String::new();
    for line in own.lines() {
        if let Some(prelude) = line.strip_prefix("// prelude: ") {
            src += &std::fs::read_to_string(root.join(prelude.trim())).map_err(|e| format!("{prelude}: {e}"))?;
        }
    }
    Ok(src + &own)
}

fn translate(path: &Path) -> Result<(), String> {
    translate_source(&source_with_preludes(path)?, path)
}

/// Validates `src` and translates it to every backend; `path` names temporary files.
fn translate_source(src: &str, path: &Path) -> Result<(), String> {
    let src = src.to_string();
    let module = naga::front::wgsl::parse_str(&src).map_err(|e| e.emit_to_string(&src))?;
    let mut validator =
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
    let info = validator.validate(&module).map_err(|e| e.emit_to_string(&src))?;
    // Overrides take their defaults, as a pipeline without constants would.
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        None,
        &naga::back::PipelineConstants::default(),
    )
    .map_err(|e| format!("overrides: {e}"))?;

    // Subgroup operations need SPIR-V 1.3 (Vulkan 1.1), which wgpu targets when it has them.
    let mut spv_options = naga::back::spv::Options::default();
    if src.contains("@builtin(subgroup_") {
        spv_options.lang_version = (1, 3);
    }
    let spv = naga::back::spv::write_vec(&module, &info, &spv_options, None).map_err(|e| format!("SPIR-V: {e}"))?;
    spirv_val(path, &spv)?;

    let msl_pipeline = naga::back::msl::PipelineOptions::default();
    naga::back::msl::write_string(&module, &info, &naga::back::msl::Options::default(), &msl_pipeline)
        .map_err(|e| format!("MSL: {e}"))?;

    let hlsl_options = naga::back::hlsl::Options::default();
    let mut hlsl = String::new();
    naga::back::hlsl::Writer::new(&mut hlsl, &hlsl_options, &naga::back::hlsl::PipelineOptions::default())
        .write(&module, &info, None)
        .map_err(|e| format!("HLSL: {e}"))?;

    for ep in &module.entry_points {
        let options = naga::back::glsl::Options {
            version: naga::back::glsl::Version::new_gles(310),
            ..Default::default()
        };
        let pipeline = naga::back::glsl::PipelineOptions {
            shader_stage: ep.stage,
            entry_point: ep.name.clone(),
            multiview: None,
        };
        let mut glsl = String::new();
        naga::back::glsl::Writer::new(
            &mut glsl,
            &module,
            &info,
            &options,
            &pipeline,
            naga::proc::BoundsCheckPolicies::default(),
        )
        .and_then(|mut w| w.write())
        .map_err(|e| format!("GLSL ({}): {e}", ep.name))?;
    }
    Ok(())
}

fn spirv_val(path: &Path, words: &[u32]) -> Result<(), String> {
    let Ok(tool) = which("spirv-val") else { return Ok(()) };
    let file = std::env::temp_dir().join(format!(
        "engine-{}-{}.spv",
        std::process::id(),
        path.file_stem().unwrap().to_string_lossy()
    ));
    std::fs::write(&file, bytemuck_words(words)).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(tool)
        .arg("--target-env")
        .arg("vulkan1.1")
        .arg(&file)
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&file);
    if !out.status.success() {
        return Err(format!(
            "spirv-val: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

fn bytemuck_words(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn which(tool: &str) -> Result<PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn every_shader_translates_to_every_backend() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut files = vec![];
    wgsl_files(&root, &mut files);
    // Preludes (no entry point of their own) are checked as part of the files that use them.
    files.retain(|f| std::fs::read_to_string(f).is_ok_and(|s| s.contains("@compute")));
    assert!(!files.is_empty(), "no .wgsl files under {}", root.display());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| translate(f).err().map(|e| format!("{}: {e}", f.display())))
        .collect();
    eprintln!(
        "checked {} shaders (spirv-val: {})",
        files.len(),
        if which("spirv-val").is_ok() {
            "yes"
        } else {
            "not installed"
        }
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn generated_fused_kernels_translate_to_every_backend() {
    use wgsl_compute::fused;
    for (name, graph) in [
        ("gelu", fused::gelu_graph()),
        ("bias_gelu", fused::bias_gelu_graph()),
        ("residual_bias", fused::residual_bias_graph()),
    ] {
        let src = fused::wgsl(&graph).unwrap();
        translate_source(&src, Path::new(&format!("fused_{name}.wgsl")))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{src}"));
    }
}
