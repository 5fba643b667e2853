//! Generates the shader table from `shaders/`: every `.wgsl` file with the preludes that its
//! own `// prelude: dir/file.wgsl` lines name. Those lines are the one place a prelude list is
//! written; the engine (`kernel::shader!`) and `tests/shaders.rs` (`kernel::SHADERS`) both read
//! the table generated here.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn wgsl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("shaders/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            wgsl_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "wgsl") {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("shaders");
    println!("cargo:rerun-if-changed=shaders");
    let mut files = vec![];
    wgsl_files(&root, &mut files);
    files.sort();
    let (mut arms, mut table) = (String::new(), String::new());
    for file in &files {
        let rel = file
            .strip_prefix(&root)
            .expect("under shaders/")
            .to_str()
            .expect("a UTF-8 path")
            .replace('\\', "/");
        let src = std::fs::read_to_string(file).expect("a readable shader");
        let preludes: Vec<String> = src
            .lines()
            .filter_map(|l| l.strip_prefix("// prelude: "))
            .map(|p| p.trim().to_string())
            .collect();
        let parts: Vec<String> = preludes
            .iter()
            .chain(std::iter::once(&rel))
            .map(|p| {
                let path = root.join(p);
                assert!(path.is_file(), "{rel}: prelude {p} is not a file under shaders/");
                format!("include_str!({:?})", path.to_str().expect("a UTF-8 path"))
            })
            .collect();
        writeln!(arms, "    ({rel:?}) => {{ concat!({}) }};", parts.join(", ")).expect("a String");
        let names: Vec<String> = preludes.iter().map(|p| format!("{p:?}")).collect();
        writeln!(
            table,
            "    Shader {{ path: {rel:?}, preludes: &[{}], wgsl: shader!({rel:?}) }},",
            names.join(", ")
        )
        .expect("a String");
    }
    let out = format!(
        "/// The WGSL of a file under `shaders/` with its preludes first, as a `&'static str`.\n\
         macro_rules! shader {{\n{arms}}}\n\n\
         /// Every file under `shaders/`, with its preludes and its full source.\n\
         pub const SHADERS: &[Shader] = &[\n{table}];\n"
    );
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("shaders.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
