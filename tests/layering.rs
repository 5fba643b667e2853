//! Layers only look down. [`LAYERS`] is the one statement of the order of `engine/`'s
//! top-level modules (the crate root's doc and the book's design chapter carry its one-line
//! [`summary`], checked equal here). Read from the sources: a module may import the modules of
//! its own layer and of the layers below, and the import graph has no cycle (so the modules of
//! one layer import one another in one direction only). A `use crate::` that climbs a layer
//! fails here. Inside each folder the files import one another without a cycle too
//! ([`folder_graphs`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers of `engine/`, bottom up, each with the top-level modules that sit in it.
const LAYERS: &[(&str, &[&str])] = &[
    ("errors, shape algebra, tolerances", &["error", "shape", "check"]),
    (
        "kernel sources, the tuner's bookkeeping, file formats",
        &["kernel", "tune", "io"],
    ),
    ("the device", &["context"]),
    ("the recurrence launch", &["recurrence"]),
    ("tensors", &["tensor"]),
    ("the expression IR", &["expr"]),
    ("the CPU reference", &["reference"]),
    ("fused kernels and tensor ops", &["fused", "ops"]),
    ("plans and scans", &["plan", "scan"]),
    ("mixers and element scans", &["mixer", "element_scan"]),
    ("generation", &["generate"]),
    (
        "training, autograd, layers and models",
        &["train", "autograd", "nn", "models"],
    ),
    ("the parity suite", &["parity"]),
];

/// Edges that climb a layer or close a cycle, each as (from, to, the change that removes it).
/// Keep this empty.
const KNOWN: &[(&str, &str, &str)] = &[];

/// The files that state the order in one line: [`summary`], word for word.
const SUMMARIES: &[&str] = &["engine/lib.rs", "docs/src/design.md"];

/// The order in one line: `` `error`, `shape`, `check` < `kernel`, `tune` < ... ``.
fn summary() -> String {
    let layer = |mods: &[&str]| mods.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ");
    LAYERS
        .iter()
        .map(|(_, mods)| layer(mods))
        .collect::<Vec<_>>()
        .join(" < ")
}

/// The index in [`LAYERS`] of `module`'s layer.
fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, mods)| mods.contains(&module))
}

/// Top-level names the crate root re-exports, and the module they come from.
const ROOT_REEXPORTS: &[(&str, &str)] = &[
    ("Context", "context"),
    ("DeviceInfo", "context"),
    ("Tensor", "tensor"),
    ("DType", "shape"),
    ("Error", "error"),
    ("Result", "error"),
    ("Rng", "check"),
    ("Binary", "expr"),
    ("Unary", "expr"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module of the crate root a file belongs to: `engine/ops/matmul.rs` -> `ops`.
fn top_module(root: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

/// Every top-level module that the code (comments left out) of `src` names through `crate::`.
fn imports(src: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in src.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            // `crate::{a::x, b}` names several modules at once.
            let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                group.split([',', '}']).map(|s| s.trim()).collect()
            } else {
                vec![rest]
            };
            for name in names {
                let ident: String = name.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if modules.contains(&ident) {
                    out.insert(ident);
                } else if let Some((_, m)) = ROOT_REEXPORTS.iter().find(|(n, _)| *n == ident) {
                    out.insert(m.to_string());
                }
            }
        }
    }
    out
}

/// The folder import graph of the engine: module -> the modules it imports.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("engine");
    let mut files = vec![];
    rust_files(&root, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(&root, f)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for f in &files {
        let Some(m) = top_module(&root, f) else { continue };
        let src = std::fs::read_to_string(f).unwrap();
        let deps = g.get_mut(&m).unwrap();
        deps.extend(imports(&src, &modules).into_iter().filter(|d| *d != m));
    }
    g
}

/// The graph without the [`KNOWN`] edges; fails when one of them is gone, so the list is
/// emptied as the edges are.
fn graph_without_known() -> BTreeMap<String, BTreeSet<String>> {
    let mut g = graph();
    for (from, to, why) in KNOWN {
        let removed = g.get_mut(*from).is_some_and(|d| d.remove(*to));
        assert!(
            removed,
            "{from} -> {to} is gone ({why}): remove it from KNOWN in tests/layering.rs"
        );
    }
    g
}

/// A cycle of `g` as a path `a -> b -> ... -> a`, if there is one.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // 0 = unvisited, 1 = on the stack, 2 = done.
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            match state.get(d.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = stack.iter().position(|s| s == d).unwrap();
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(d.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(d, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, g, &mut state, &mut vec![]) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn every_engine_module_sits_in_one_layer() {
    let g = graph();
    for name in ["shape", "tensor", "ops", "reference", "context", "kernel"] {
        assert!(
            g.contains_key(name),
            "engine/{name} not found: is the layering test reading engine/?"
        );
    }
    for m in g.keys() {
        let n = LAYERS.iter().filter(|(_, mods)| mods.contains(&m.as_str())).count();
        assert_eq!(
            n, 1,
            "engine/{m} is in {n} layers of LAYERS in tests/layering.rs; put it in one"
        );
    }
    for (_, mods) in LAYERS {
        for m in *mods {
            assert!(
                g.contains_key(*m),
                "LAYERS names `{m}`, which is not a module of engine/"
            );
        }
    }
}

/// The edges of `g` that climb: from a module to one of a higher layer of [`LAYERS`].
fn upward(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut up = vec![];
    for (m, deps) in g {
        let Some(lm) = layer_of(m) else { continue };
        for d in deps {
            if let Some(ld) = layer_of(d).filter(|&ld| ld > lm) {
                up.push(format!("{m} ({}) -> {d} ({})", LAYERS[lm].0, LAYERS[ld].0));
            }
        }
    }
    up
}

#[test]
fn engine_modules_import_only_their_own_layer_and_below() {
    let up = upward(&graph_without_known());
    assert!(
        up.is_empty(),
        "imports that climb a layer (the order is LAYERS in tests/layering.rs):\n  {}",
        up.join("\n  ")
    );
}

#[test]
fn engine_modules_import_without_a_cycle() {
    let g = graph_without_known();
    if let Some(cycle) = find_cycle(&g) {
        let edges: Vec<String> = g.iter().map(|(m, d)| format!("  {m} -> {d:?}")).collect();
        panic!(
            "import cycle between engine modules: {}\n{}",
            cycle.join(" -> "),
            edges.join("\n")
        );
    }
}

#[test]
fn the_docs_state_the_layer_order_of_the_table() {
    let want = summary();
    for file in SUMMARIES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        // Line breaks and a doc comment's `//!` are not part of the sentence.
        let words: Vec<&str> = text
            .lines()
            .map(|l| l.trim_start().strip_prefix("//!").unwrap_or(l))
            .flat_map(str::split_whitespace)
            .collect();
        assert!(
            words.join(" ").contains(&want),
            "{file} does not state the layer order of tests/layering.rs; write it as:\n{want}"
        );
    }
}

#[test]
fn the_shape_layer_imports_nothing_above_it() {
    let g = graph();
    let deps: Vec<&String> = g["shape"].iter().filter(|d| *d != "error").collect();
    assert!(deps.is_empty(), "engine/shape imports {deps:?}");
}

#[test]
fn the_cycle_finder_finds_a_planted_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let edge = |g: &mut BTreeMap<String, BTreeSet<String>>, a: &str, b: &str| {
        g.entry(a.into()).or_default().insert(b.into());
        g.entry(b.into()).or_default();
    };
    edge(&mut g, "tensor", "ops");
    edge(&mut g, "ops", "reference");
    assert_eq!(find_cycle(&g), None);
    edge(&mut g, "reference", "tensor");
    assert_eq!(find_cycle(&g).unwrap().len(), 4);
    let modules: BTreeSet<String> = ["ops", "tensor", "kernel"].iter().map(|s| s.to_string()).collect();
    let found = imports(
        "use crate::{ops::x, kernel::y}; // crate::tensor\nlet c: crate::Tensor;",
        &modules,
    );
    assert_eq!(
        found,
        ["kernel", "ops", "tensor"].iter().map(|s| s.to_string()).collect()
    );
}

#[test]
fn the_direction_check_finds_a_planted_upward_edge() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("ops".into()).or_default().insert("tensor".into());
    g.entry("ops".into()).or_default().insert("fused".into());
    assert!(upward(&g).is_empty(), "down and same-layer edges are allowed");
    g.entry("tensor".into()).or_default().insert("ops".into());
    assert_eq!(upward(&g).len(), 1);
    assert!(upward(&g)[0].starts_with("tensor (tensors) -> ops"), "{:?}", upward(&g));
}

/// The files of one folder of `engine/` (each `x.rs` but `mod.rs`, and each subfolder) and
/// which of them each one's code names: `super::x` from a file of the folder, `crate::<the
/// folder's path>::x` from anywhere in it (a subfolder's files count for the subfolder).
fn folder_graphs() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("engine");
    let mut files = vec![];
    rust_files(&root, &mut files);
    let mut out: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut dirs: BTreeSet<PathBuf> = files.iter().filter_map(|f| f.parent().map(Path::to_path_buf)).collect();
    dirs.remove(&root);
    for dir in dirs {
        let rel = dir.strip_prefix(&root).unwrap();
        let path = rel
            .components()
            .map(|c| c.as_os_str().to_str().unwrap())
            .collect::<Vec<_>>()
            .join("::");
        let mut nodes: BTreeSet<String> = BTreeSet::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_stem().unwrap().to_str().unwrap().to_string();
            if (p.is_dir() || p.extension().is_some_and(|x| x == "rs")) && name != "mod" {
                nodes.insert(name);
            }
        }
        let mut g: BTreeMap<String, BTreeSet<String>> = nodes.iter().map(|n| (n.clone(), BTreeSet::new())).collect();
        for f in files
            .iter()
            .filter(|f| f.starts_with(&dir) && f.parent() != Some(&root))
        {
            let below = f.strip_prefix(&dir).unwrap();
            let first = below.components().next().unwrap().as_os_str().to_str().unwrap();
            let node = first.strip_suffix(".rs").unwrap_or(first).to_string();
            if node == "mod" {
                continue;
            }
            let direct = f.parent() == Some(dir.as_path());
            let src = std::fs::read_to_string(f).unwrap();
            for line in src.lines() {
                let code = line.split("//").next().unwrap_or("");
                let mut prefixes = vec![format!("crate::{path}::")];
                if direct {
                    prefixes.push("super::".to_string());
                }
                for prefix in &prefixes {
                    let mut rest = code;
                    while let Some(i) = rest.find(prefix.as_str()) {
                        rest = &rest[i + prefix.len()..];
                        let names: Vec<&str> = match rest.strip_prefix('{') {
                            Some(group) => group.split([',', '}']).map(str::trim).collect(),
                            None => vec![rest],
                        };
                        for name in names {
                            let ident: String = name.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                            if nodes.contains(&ident) && ident != node {
                                g.get_mut(&node).unwrap().insert(ident);
                            }
                        }
                    }
                }
            }
        }
        out.insert(path, g);
    }
    out
}

#[test]
fn the_files_of_each_folder_import_without_a_cycle() {
    let mut cycles = vec![];
    for (folder, g) in folder_graphs() {
        if let Some(cycle) = find_cycle(&g) {
            cycles.push(format!("engine/{folder}: {}", cycle.join(" -> ")));
        }
    }
    assert!(
        cycles.is_empty(),
        "import cycles between the files of a folder (make one side not name the other):\n  {}",
        cycles.join("\n  ")
    );
}

/// The files outside `engine/models/<name>/` whose code names a model: they may use a model
/// whole (a parity case that runs it, the crate root's book chapters), never hold a piece of
/// one. Anything else that names a model belongs in its folder.
const MODEL_USERS: &[&str] = &["engine/lib.rs", "engine/models/mod.rs", "engine/parity/cuda.rs"];

/// A model is one folder: `engine/models/` holds only `mod.rs` and one folder a model, the
/// shaders of a model sit in `shaders/models/<name>/`, and no other engine or shader file names
/// a model in its code (comments aside) except [`MODEL_USERS`].
#[test]
fn model_specific_code_lives_in_the_models_folder() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let models_dir = root.join("engine/models");
    let mut loose = vec![];
    let mut models = vec![];
    for e in std::fs::read_dir(&models_dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if p.is_dir() {
            models.push(name);
        } else if name != "mod.rs" {
            loose.push(format!("engine/models/{name}"));
        }
    }
    assert!(models.len() >= 3, "models found: {models:?}");
    assert!(
        loose.is_empty(),
        "files in engine/models/ outside a model's folder: {loose:?}"
    );
    let mut files = vec![];
    rust_files(&root.join("engine"), &mut files);
    let mut shaders = vec![];
    wgsl_files(&root.join("shaders"), &mut shaders);
    let mut outside = vec![];
    for f in files.iter().chain(&shaders) {
        let rel = f.strip_prefix(root).unwrap().to_str().unwrap().to_string();
        let own = |m: &String| {
            rel.starts_with(&format!("engine/models/{m}/")) || rel.starts_with(&format!("shaders/models/{m}/"))
        };
        if MODEL_USERS.contains(&rel.as_str()) {
            continue;
        }
        let src = std::fs::read_to_string(f).unwrap();
        for m in models.iter().filter(|m| !own(m)) {
            let named = src
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .any(|code| code.to_lowercase().contains(m.as_str()));
            if named {
                outside.push(format!("{rel} names {m}"));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "model-specific code outside engine/models/<name>/ (move it into the model's folder, or make it any model's):\n  {}",
        outside.join("\n  ")
    );
}

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
