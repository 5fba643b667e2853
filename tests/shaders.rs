//! Every kernel under `shaders/` (each `.wgsl` file, and each width kernel that `build.rs`
//! generates from a `.widths` description) parses, validates, and translates to SPIR-V, MSL,
//! HLSL and GLSL, so Metal, DX12 and GL problems show up on a machine that has none of them.
//! The SPIR-V also goes through `spirv-val` where that tool is installed. The dev tools' own
//! kernels (`dev/`: the benchmark's peers, the cooperative-matrix probe) are checked here too,
//! with the same translation.

use std::path::{Path, PathBuf};

use wgsl_compute::kernel::{dtype_prelude, has_dtype_slots, uses_subgroups, Shader, SHADERS};
use wgsl_compute::DType;

/// Every `.wgsl` file below `dir` (the shader tests and the layering test's model check).
pub(crate) fn wgsl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            wgsl_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "wgsl") {
            out.push(path);
        }
    }
}

/// Translates the kernel's source (its preludes first, from the engine's shader table:
/// exactly what the engine compiles); one with dtype slots (`// dtype:` lines) once per
/// dtype, every slot of it read as that dtype, with the prelude the engine generates for it.
fn translate(shader: &Shader) -> Result<(), String> {
    let (src, path) = (shader.wgsl, Path::new(shader.path));
    if !has_dtype_slots(src) {
        return translate_source(src, path);
    }
    let slots: Vec<&str> = src
        .lines()
        .filter_map(|l| l.strip_prefix("// dtype: "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for dtype in DType::ALL {
        let dtypes: Vec<(&str, DType)> = slots.iter().map(|&s| (s, dtype)).collect();
        let prelude = dtype_prelude(src, &dtypes)?;
        translate_source(&format!("{prelude}{src}"), path).map_err(|e| format!("{dtype}: {e}"))?;
    }
    Ok(())
}

/// Validates `src` and translates it to every backend; `path` names temporary files. A source
/// that enables wgpu's cooperative matrices (native Vulkan only) goes to SPIR-V alone.
fn translate_source(src: &str, path: &Path) -> Result<(), String> {
    if src.contains(COOPERATIVE) {
        return translate_cooperative(src, path).map(drop);
    }
    let src = src.to_string();
    let (module, info) = validate(&src, naga::valid::Capabilities::all())?;

    // Subgroup operations need SPIR-V 1.3 (Vulkan 1.1), which wgpu targets when it has them.
    let mut spv_options = naga::back::spv::Options::default();
    if uses_subgroups(&src) {
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

/// Parses and validates `src` with `caps`, then gives every override its default, as a
/// pipeline created without constants would.
fn validate(src: &str, caps: naga::valid::Capabilities) -> Result<(naga::Module, naga::valid::ModuleInfo), String> {
    let module = naga::front::wgsl::parse_str(src).map_err(|e| e.emit_to_string(src))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
        .validate(&module)
        .map_err(|e| e.emit_to_string(src))?;
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        None,
        &naga::back::PipelineConstants::default(),
    )
    .map_err(|e| format!("overrides: {e}"))?;
    Ok((module.into_owned(), info.into_owned()))
}

/// The directive that marks a cooperative-matrix source.
const COOPERATIVE: &str = "enable wgpu_cooperative_matrix;";

/// Validates a cooperative-matrix source (f16 and cooperative matrices allowed) and writes
/// SPIR-V 1.6 (Vulkan 1.3) with the index clamping wgpu asks for when runtime checks are on:
/// the path such a kernel takes on the one backend that has them. `spirv-val` checks it where
/// the installed one knows cooperative matrices. No adapter here has them, so this is what
/// catches a broken kernel before it reaches the H200. Returns the module.
fn translate_cooperative(src: &str, path: &Path) -> Result<naga::Module, String> {
    let caps = naga::valid::Capabilities::SHADER_FLOAT16 | naga::valid::Capabilities::COOPERATIVE_MATRIX;
    let (module, info) = validate(src, caps)?;
    let restrict = naga::proc::BoundsCheckPolicy::Restrict;
    let spv_options = naga::back::spv::Options {
        lang_version: (1, 6),
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: restrict,
            buffer: restrict,
            image_load: restrict,
            binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
        },
        ..Default::default()
    };
    let spv = naga::back::spv::write_vec(&module, &info, &spv_options, None).map_err(|e| format!("SPIR-V: {e}"))?;
    spirv_val_env(path, &spv, "vulkan1.3")?;
    Ok(module)
}

fn spirv_val(path: &Path, words: &[u32]) -> Result<(), String> {
    spirv_val_env(path, words, "vulkan1.1")
}

/// `spirv-val --target-env env` on `words`, where the tool is installed. An older one that
/// does not know CooperativeMatrixKHR (capability 6022; this machine's) cannot judge a
/// cooperative-matrix module: that answer is not a failure.
fn spirv_val_env(path: &Path, words: &[u32], env: &str) -> Result<(), String> {
    let Ok(tool) = which("spirv-val") else { return Ok(()) };
    let file = std::env::temp_dir().join(format!(
        "engine-{}-{}.spv",
        std::process::id(),
        path.file_stem().unwrap().to_string_lossy()
    ));
    std::fs::write(&file, bytemuck_words(words)).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(tool)
        .arg("--target-env")
        .arg(env)
        .arg(&file)
        .output()
        .map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&file);
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    if said.contains("Invalid capability operand: 6022") {
        return Ok(());
    }
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
    // Every kernel of the table, the width kernels generated from `.widths` descriptions
    // included. Preludes are checked as part of the kernels that use them (a prelude may hold
    // entry points, as recurrence/channel_entries.wgsl does, over functions its users define).
    let preludes: Vec<&str> = SHADERS.iter().flat_map(|s| s.preludes.iter().copied()).collect();
    let kernels: Vec<&Shader> = SHADERS
        .iter()
        .filter(|s| s.wgsl.contains("@compute") && !preludes.contains(&s.path))
        .collect();
    assert!(!kernels.is_empty(), "no kernels in kernel::SHADERS");
    let failures: Vec<String> = kernels
        .iter()
        .filter_map(|s| translate(s).err().map(|e| format!("{}: {e}", s.path)))
        .collect();
    eprintln!(
        "checked {} shaders (spirv-val: {})",
        kernels.len(),
        if which("spirv-val").is_ok() {
            "yes"
        } else {
            "not installed"
        }
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every file under `dir` that the shader table is built from (`.wgsl` and `.widths`).
fn table_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            table_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "wgsl" || e == "widths") {
            out.push(path);
        }
    }
}

#[test]
fn the_shader_table_lists_every_file_with_its_preludes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut files = vec![];
    table_files(&root, &mut files);
    let files: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(&root).unwrap().to_str().unwrap().replace('\\', "/"))
        .collect();
    for f in &files {
        assert!(
            SHADERS.iter().any(|s| s.from == f),
            "{f}: in shaders/, not in kernel::SHADERS (rebuild?)"
        );
    }
    for s in SHADERS {
        assert!(
            files.iter().any(|f| f == s.from),
            "{}: from {}, not in shaders/ (rebuild?)",
            s.path,
            s.from
        );
        if s.from == s.path {
            let own = std::fs::read_to_string(root.join(s.path)).unwrap();
            assert!(s.wgsl.ends_with(&own), "{}: its own source comes last", s.path);
        } else {
            // A width kernel: generated from its description, never also a file.
            assert!(s.from.ends_with(".widths"), "{}: from {}", s.path, s.from);
            assert!(
                !root.join(s.path).exists(),
                "{}: generated from {}, and a file",
                s.path,
                s.from
            );
        }
        for p in s.preludes {
            assert!(
                SHADERS.iter().any(|t| t.path == *p),
                "{}: prelude {p} is not a shader",
                s.path
            );
        }
    }
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
        // The vec4 form, every input read as a vec4 and every input but the first splatted.
        use wgsl_compute::shape::Vec4Read;
        let n = src.matches("var<storage, read> in_").count();
        let mixed: Vec<Vec4Read> = (0..n)
            .map(|k| if k == 0 { Vec4Read::Vec4 } else { Vec4Read::Splat })
            .collect();
        for reads in [vec![Vec4Read::Vec4; n], mixed] {
            let src = fused::wgsl_vec4(&graph, &reads).unwrap();
            translate_source(&src, Path::new(&format!("fused_{name}_vec4.wgsl")))
                .unwrap_or_else(|e| panic!("{name} {reads:?}: {e}\n{src}"));
        }
    }
}

/// The benchmark's peer kernels (`dev/src/shaders/bench/`, outside the engine's shader table:
/// no prelude, embedded by the bench with `include_str!`) translate to every backend.
#[test]
fn the_bench_peer_shaders_translate_to_every_backend() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("dev/src/shaders/bench");
    let mut files = vec![];
    wgsl_files(&root, &mut files);
    assert!(!files.is_empty(), "no .wgsl files under {}", root.display());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let src = std::fs::read_to_string(f).unwrap();
            translate_source(&src, f).err().map(|e| format!("{}: {e}", f.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `dev/src/bin/coop_probe.wgsl` (cooperative matrices, f16) parses, validates and translates
/// to SPIR-V, and passes `spirv-val` where one that knows cooperative matrices is installed: no
/// adapter here has cooperative matrices, so this is the check that catches a broken probe
/// kernel before it reaches the H200.
#[test]
fn the_cooperative_matrix_probe_translates_to_spirv() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("dev/src/bin/coop_probe.wgsl");
    let src = std::fs::read_to_string(&path).unwrap();
    let module = translate_cooperative(&src, &path).unwrap_or_else(|e| panic!("{e}"));
    // Every kernel is one the probe's harness runs (its ENTRIES table names it).
    let harness = std::fs::read_to_string(path.with_extension("rs")).unwrap();
    assert!(
        module.entry_points.len() >= 3,
        "{} entry points",
        module.entry_points.len()
    );
    for ep in &module.entry_points {
        assert!(
            harness.contains(&format!("(\"{}\",", ep.name)),
            "{} is not in coop_probe.rs's ENTRIES",
            ep.name
        );
    }
}

/// Every folder under `dir` (paths relative to `root`, `/`-separated).
fn folders(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let rel = path.strip_prefix(root).unwrap().to_str().unwrap().replace('\\', "/");
            out.push(rel);
            folders(root, &path, out);
        }
    }
}

#[test]
fn shader_folders_mirror_the_engine_modules() {
    // Issue 46: each folder of `shaders/` is named after the engine module whose kernels it
    // holds (`shaders/ops/matmul/` and `engine/ops/matmul/`, `shaders/models/gpt2/` and
    // `engine/models/gpt2/`), so a model's kernels sit under its own folder on both sides.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![];
    folders(&root.join("shaders"), &root.join("shaders"), &mut dirs);
    let mut missing = vec![];
    for d in &dirs {
        let module = root.join("engine").join(d);
        let file = root.join("engine").join(format!("{d}.rs"));
        if !(module.is_dir() || file.is_file()) {
            missing.push(format!("shaders/{d} (no engine module of that path)"));
        }
    }
    assert!(missing.is_empty(), "{missing:?}");
}
