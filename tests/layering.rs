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

/// The module a file is, as its path from the crate root: `engine/ops/matmul.rs` ->
/// `ops::matmul`; a folder's `mod.rs` is the folder (`engine/expr/ir/mod.rs` -> `expr::ir`),
/// `lib.rs` the crate root (no segment).
fn module_path(root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root).unwrap();
    let mut segs: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_str().unwrap().to_string())
        .collect();
    let last = segs.pop().unwrap_or_default();
    let stem = last.strip_suffix(".rs").unwrap_or(&last);
    if stem != "mod" && stem != "lib" {
        segs.push(stem.to_string());
    }
    segs
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Every path that the code of `src` (each line up to its `//`: a doc link imports nothing)
/// names from `crate::`, `super::` or `self::`, resolved from `module` (the module the file is)
/// to its segments from the crate root: in `autograd::var`, `super::tape::Tape` is
/// `autograd::tape::Tape`. A group is read to its closing brace, across lines and nested, so
/// `use super::{\n    tape::{self, Tape},\n};` gives `autograd::tape::self` and
/// `autograd::tape::Tape`. An inline module's `super::` is read as its file's: a `mod tests`'
/// `super::x` names the file's own `x`, so a false edge could show there; the messages name
/// the files to read.
fn paths(src: &str, module: &[String]) -> Vec<Vec<String>> {
    let code: Vec<&str> = src.lines().map(|l| l.split("//").next().unwrap_or("")).collect();
    let code = code.join("\n");
    let s = code.as_bytes();
    let mut raw = vec![];
    let mut pos = 0;
    while pos < s.len() {
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|h| s[pos..].starts_with(h.as_bytes()));
        // `$crate::` counts; `myself::` does not.
        if starts && (pos == 0 || !is_ident(s[pos - 1])) {
            read_tree(s, &mut pos, &[], &mut raw);
        } else {
            pos += 1;
        }
    }
    raw.iter().map(|p| resolve(p, module)).collect()
}

/// Reads the path or `use` tree at `pos` (`a::b`, `a::{b, c::{d, e}}`, `a::*`, `a as b`),
/// pushing each whole path, after `prefix`, to `out`.
fn read_tree(s: &[u8], pos: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    loop {
        if s.get(*pos) == Some(&b'{') {
            *pos += 1;
            loop {
                while s.get(*pos).is_some_and(|c| c.is_ascii_whitespace() || *c == b',') {
                    *pos += 1;
                }
                match s.get(*pos) {
                    None => return,
                    Some(b'}') => {
                        *pos += 1;
                        return;
                    }
                    Some(_) => {
                        let at = *pos;
                        read_tree(s, pos, &path, out);
                        // `*` reads as the group's own path and stays put: step over it.
                        if *pos == at {
                            *pos += 1;
                        }
                    }
                }
            }
        }
        let start = *pos;
        while s.get(*pos).is_some_and(|c| is_ident(*c)) {
            *pos += 1;
        }
        if *pos > start {
            path.push(String::from_utf8_lossy(&s[start..*pos]).into_owned());
        }
        if !s[*pos..].starts_with(b"::") {
            break;
        }
        *pos += 2;
    }
    // `x as y` names `x`; `y` is no path.
    if s[*pos..].starts_with(b" as ") {
        *pos += " as ".len();
        while s.get(*pos).is_some_and(|c| is_ident(*c)) {
            *pos += 1;
        }
    }
    out.push(path);
}

/// `raw` (which starts at `crate`, `super` or `self`) as segments from the crate root, read in
/// `module`.
fn resolve(raw: &[String], module: &[String]) -> Vec<String> {
    let mut base = module.to_vec();
    let mut rest = raw;
    if raw.first().is_some_and(|h| h == "crate") {
        base.clear();
        rest = &raw[1..];
    } else {
        while let Some(head) = rest.first() {
            match head.as_str() {
                "super" => drop(base.pop()),
                "self" => {}
                _ => break,
            }
            rest = &rest[1..];
        }
    }
    base.extend(rest.iter().cloned());
    base
}

/// Every top-level module that the code of `src`, the file of `module`, names ([`paths`]).
fn imports(src: &str, module: &[String], modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for path in paths(src, module) {
        let Some(first) = path.first() else { continue };
        if modules.contains(first) {
            out.insert(first.clone());
        } else if let Some((_, m)) = ROOT_REEXPORTS.iter().find(|(n, _)| n == first) {
            out.insert(m.to_string());
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
        deps.extend(
            imports(&src, &module_path(&root, f), &modules)
                .into_iter()
                .filter(|d| *d != m),
        );
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
    let modules: BTreeSet<String> = ["ops", "tensor", "kernel", "shape"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let found = imports(
        "use crate::{ops::x, kernel::y}; // crate::tensor\nlet c: crate::Tensor;\nuse crate::{\n    shape::z,\n};",
        &["nn".to_string(), "linear".to_string()],
        &modules,
    );
    assert_eq!(
        found,
        ["kernel", "ops", "shape", "tensor"]
            .iter()
            .map(|s| s.to_string())
            .collect()
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

/// The files of each folder under `engine/` (each `x.rs` but `mod.rs`, and each subfolder) and
/// which of them each one's code names, from the files' module paths and sources. A path
/// ([`paths`]) that leaves its file's module at a folder is an edge there: `super::tape::Tape`
/// in `autograd/var.rs` is `var -> tape` in `autograd`. A subfolder's files count for the
/// subfolder: `super::op::Unary` in `expr/ir/mod.rs` is `ir -> op` in `expr`. A folder's
/// `mod.rs` is the folder, the parent of its files, and no node of its own graph: its `mod x;`
/// and `pub use self::x::...` declare and re-export them, which is no circle.
fn folder_graphs_of(files: &[(Vec<String>, String)]) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    // Folder (as its module path) -> its graph; every module below a folder is a node of it.
    let mut out: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (module, _) in files {
        for k in 1..module.len() {
            out.entry(module[..k].to_vec())
                .or_default()
                .entry(module[k].clone())
                .or_default();
        }
    }
    for (module, src) in files {
        for path in paths(src, module) {
            let k = module.iter().zip(&path).take_while(|(a, b)| a == b).count();
            if k == 0 || k >= module.len() || k >= path.len() {
                continue; // the crate root (the layer tests' part), or within the file itself
            }
            if let Some(g) = out.get_mut(&module[..k]) {
                if g.contains_key(&path[k]) {
                    g.get_mut(&module[k]).unwrap().insert(path[k].clone());
                }
            }
        }
    }
    out.into_iter().map(|(folder, g)| (folder.join("/"), g)).collect()
}

/// [`folder_graphs_of`] the files of `engine/`.
fn folder_graphs() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("engine");
    let mut files = vec![];
    rust_files(&root, &mut files);
    let files: Vec<(Vec<String>, String)> = files
        .iter()
        .map(|f| (module_path(&root, f), std::fs::read_to_string(f).unwrap()))
        .collect();
    folder_graphs_of(&files)
}

/// The sibling-import graph of every folder under `engine/` ([`folder_graphs`]) is acyclic: no
/// two files of one folder import each other, directly or around a circle of siblings.
#[test]
fn the_files_of_each_folder_import_without_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("engine");
    let mut cycles = vec![];
    for (folder, g) in folder_graphs() {
        if let Some(cycle) = find_cycle(&g) {
            // Name the files: `var.rs`, or `ir/` for a subfolder.
            let dir = root.join(&folder);
            let files: Vec<String> = cycle
                .iter()
                .map(|n| {
                    if dir.join(format!("{n}.rs")).exists() {
                        format!("{n}.rs")
                    } else {
                        format!("{n}/")
                    }
                })
                .collect();
            cycles.push(format!("engine/{folder}/: {}", files.join(" -> ")));
        }
    }
    assert!(
        cycles.is_empty(),
        "import cycles between the files of a folder (move what both need into the lower one, or a \
         file of its own):\n  {}",
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
    crate::shaders::wgsl_files(&root.join("shaders"), &mut shaders);
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

#[test]
fn the_folder_graphs_find_planted_circles() {
    let file = |module: &str, src: &str| {
        (
            module.split("::").map(String::from).collect::<Vec<_>>(),
            src.to_string(),
        )
    };
    let files = [
        // A folder's `mod.rs` declares and re-exports its files: no edge.
        file("autograd", "mod tape;\nmod var;\npub use self::{tape::Tape, var::Var};"),
        file(
            "autograd::tape",
            "use super::var::Var; // super::nn::Linear is a comment",
        ),
        // A group across lines, as rustfmt writes a long one.
        file(
            "autograd::var",
            "use super::{\n    ops as o,\n    tape::{self, Tape},\n};",
        ),
        file("autograd::ops", "use crate::autograd::var::Var;"),
        // A subfolder's mod.rs names the subfolder's siblings through `super::`.
        file("expr::ir", "mod body;\npub use super::op::Unary;"),
        file("expr::ir::body", "use super::super::op::Binary;"),
        file("expr::op", "use crate::expr::ir::Ty;"),
        file("expr::codegen", "use super::{ir, op};"),
    ];
    let graphs = folder_graphs_of(&files);
    let edges = |folder: &str| -> Vec<String> {
        let g = &graphs[folder];
        g.iter()
            .flat_map(|(a, ds)| ds.iter().map(move |b| format!("{a} -> {b}")))
            .collect()
    };
    assert_eq!(
        edges("autograd"),
        ["ops -> var", "tape -> var", "var -> ops", "var -> tape"]
    );
    assert_eq!(
        edges("expr"),
        ["codegen -> ir", "codegen -> op", "ir -> op", "op -> ir"]
    );
    assert_eq!(edges("expr/ir"), Vec::<String>::new());
    assert!(
        !graphs["autograd"].contains_key("mod"),
        "mod.rs is the folder, not a node"
    );
    assert_eq!(find_cycle(&graphs["autograd"]).unwrap().len(), 3);
    assert_eq!(find_cycle(&graphs["expr"]).unwrap(), ["ir", "op", "ir"]);
}
