//! The tune cache file: one small JSON document holding a section per adapter it has seen,
//! natively.
//!
//! Where: `ENGINE_TUNE_CACHE` (a path; empty keeps the entries in memory only), else
//! `$XDG_CACHE_HOME/wgsl-compute/tune.json`, else `~/.cache/wgsl-compute/tune.json`. In a
//! browser there is no file: the entries live in memory.
//!
//! ```json
//! { "format": 2,
//!   "adapters": [
//!     { "adapter": "llvmpipe (LLVM 19.1.7, 256 bits)", "vendor": 65541, "device": 0,
//!       "driver": "llvmpipe Mesa 25.0.7", "backend": "Vulkan", "engine": "0.1.0",
//!       "entries": [ { "family": "matmul", "key": "b1 m128 n128 k128 mod4 m0 n0 k0 f32 f32 vec_a vec_b",
//!                      "chosen": "register_tiled", "hand": "register_tiled", "clock": "timestamps",
//!                      "cost_ms": 41.2, "times_ms": [["register_tiled", 0.61], ["tiled16", 0.97], ["large_tile", null]] } ] },
//!     { "adapter": "llvmpipe (LLVM 19.1.7, 256 bits)", "backend": "Gl", ... } ] }
//! ```
//!
//! A section is an adapter key (name, vendor, device id, driver, backend, engine version)
//! and its entries; a context uses the one section of its own key, so runs that alternate
//! between adapters (lavapipe and GL) each keep their tuning. [`save`] replaces its
//! adapter's section, puts it first and keeps at most [`MAX_ADAPTERS`] sections (the least
//! recently written go first, sections of older engine versions among them), and the
//! document under 16 MiB. A file of format 1 (one adapter, PR #31's) is read as its one
//! section. A file that does not parse, or is of another format, is refused whole: [`load`]
//! says why and the caller starts afresh. [`save`] writes a temporary file next to it and
//! renames it over the old one, so a reader never sees half a file. The cache is a regular
//! file or nothing: a path that names a directory, a device or a FIFO is never opened nor
//! replaced, and a file over 16 MiB is not read.

// In a browser only the (pure) JSON half is compiled in, and nothing calls it.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

use serde_json::{json, Value};

use super::{Family, Identity, TuneEntry};

/// The `format` this engine writes.
const FORMAT: u64 = 2;

/// The one-adapter format before it, still read.
const FORMAT_ONE_ADAPTER: u64 = 1;

/// The most adapter sections a file keeps.
pub(crate) const MAX_ADAPTERS: usize = 16;

/// One adapter's section: its key and its entries.
pub(crate) type Section = (Identity, Vec<TuneEntry>);

/// The file `ENGINE_TUNE_CACHE` or the user's cache directory names (`None` in a browser,
/// for an empty `ENGINE_TUNE_CACHE`, or with no cache or home directory).
pub(crate) fn default_path() -> Option<std::path::PathBuf> {
    if cfg!(target_arch = "wasm32") {
        return None;
    }
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(v) = std::env::var_os("ENGINE_TUNE_CACHE") {
        return (!v.is_empty()).then(|| v.into());
    }
    let dir = var("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))?;
    Some(dir.join("wgsl-compute").join("tune.json"))
}

fn entry_json(e: &TuneEntry) -> Value {
    json!({
        "family": e.family.name(),
        "key": e.key,
        "chosen": e.chosen,
        "hand": e.hand,
        "clock": e.clock,
        "cost_ms": e.cost_ms,
        "times_ms": e.times_ms.iter().map(|(n, t)| json!([n, t])).collect::<Vec<_>>(),
    })
}

fn section_json((identity, entries): &Section) -> Value {
    json!({
        "adapter": identity.adapter,
        "vendor": identity.vendor,
        "device": identity.device,
        "driver": identity.driver,
        "backend": identity.backend,
        "engine": identity.engine,
        "entries": entries.iter().map(entry_json).collect::<Vec<_>>(),
    })
}

/// The document holding `sections`, in order.
pub(crate) fn to_json(sections: &[Section]) -> String {
    let doc = json!({
        "format": FORMAT,
        "adapters": sections.iter().map(section_json).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// The key of a section (or of a format-1 document).
fn identity_of(doc: &Value) -> Identity {
    let text_of = |v: &Value| v.as_str().map(str::to_string).unwrap_or_default();
    Identity {
        adapter: text_of(&doc["adapter"]),
        vendor: doc["vendor"].as_u64().unwrap_or(u64::MAX) as u32,
        device: doc["device"].as_u64().unwrap_or(u64::MAX) as u32,
        driver: text_of(&doc["driver"]),
        backend: text_of(&doc["backend"]),
        engine: text_of(&doc["engine"]),
    }
}

/// The entries of one section; why not when one is malformed (`at` names the section).
fn entries_of(doc: &Value, at: &str) -> Result<Vec<TuneEntry>, String> {
    let list = doc["entries"].as_array().ok_or(format!("{at}has no `entries` array"))?;
    list.iter()
        .enumerate()
        .map(|(i, e)| entry(e).ok_or(format!("{at}entry {i} is malformed")))
        .collect()
}

/// Every section of `text`, in the file's order; why not when it cannot be used (not
/// JSON, another format, a malformed section).
pub(crate) fn sections_from_json(text: &str) -> Result<Vec<Section>, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    match doc["format"].as_u64() {
        Some(FORMAT) => {
            let list = doc["adapters"].as_array().ok_or("no `adapters` array")?;
            list.iter()
                .enumerate()
                .map(|(i, s)| Ok((identity_of(s), entries_of(s, &format!("adapter {i}: "))?)))
                .collect()
        }
        Some(FORMAT_ONE_ADAPTER) => Ok(vec![(identity_of(&doc), entries_of(&doc, "")?)]),
        _ => Err(format!("format {}, expected {FORMAT}", doc["format"])),
    }
}

/// The entries of `text` for `identity` (none when the file has no section of it); why not
/// when the file cannot be used.
pub(crate) fn from_json(text: &str, identity: &Identity) -> Result<Vec<TuneEntry>, String> {
    Ok(sections_from_json(text)?
        .into_iter()
        .find(|(id, _)| id == identity)
        .map(|(_, e)| e)
        .unwrap_or_default())
}

/// `sections` with `identity`'s replaced by `entries` and put first, at most
/// [`MAX_ADAPTERS`] of them, and as a document under the size a reader accepts (the
/// least recently written sections are left out first).
pub(crate) fn merge(mut sections: Vec<Section>, identity: &Identity, entries: &[TuneEntry]) -> String {
    sections.retain(|(id, _)| id != identity);
    sections.insert(0, (identity.clone(), entries.to_vec()));
    sections.truncate(MAX_ADAPTERS);
    let mut text = to_json(&sections);
    while text.len() as u64 > MAX_BYTES && sections.len() > 1 {
        sections.pop();
        text = to_json(&sections);
    }
    text
}

fn entry(e: &Value) -> Option<TuneEntry> {
    let text = |k: &str| e[k].as_str().map(str::to_string);
    let times_ms = e["times_ms"]
        .as_array()?
        .iter()
        .map(|t| {
            let name = t.get(0)?.as_str()?.to_string();
            let ms = t.get(1)?;
            Some((name, if ms.is_null() { None } else { Some(ms.as_f64()?) }))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(TuneEntry {
        family: Family::from_name(e["family"].as_str()?)?,
        key: text("key")?,
        chosen: text("chosen")?,
        hand: text("hand")?,
        times_ms,
        clock: text("clock")?,
        cost_ms: e["cost_ms"].as_f64()?,
        pending: vec![],
    })
}

/// The most a cache file may hold: a real one is a few kilobytes; a larger one is ignored
/// rather than read (a path that names `/dev/zero` would otherwise never end).
const MAX_BYTES: u64 = 16 << 20;

/// Why `path` cannot be the cache file, when it exists and is not a regular file (a
/// directory, a device, a FIFO, a socket; a link is followed): such a path is never opened,
/// written or replaced. A path that does not exist is fine (the first save creates it).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn not_a_file(path: &std::path::Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    (!meta.is_file()).then(|| format!("not a regular file ({:?})", meta.file_type()))
}

/// The text of the cache file at `path`: None when there is none; why not when it cannot
/// be read (not a regular file, over 16 MiB, unreadable, not UTF-8).
#[cfg(not(target_arch = "wasm32"))]
fn read_text(path: &std::path::Path) -> Result<Option<String>, String> {
    use std::io::Read;
    // Checked before opening: opening a FIFO blocks until a writer comes.
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("unreadable ({e})")),
        Ok(m) if !m.is_file() => return Err(format!("not a regular file ({:?})", m.file_type())),
        Ok(_) => {}
    }
    let mut f = std::fs::File::open(path).map_err(|e| format!("unreadable ({e})"))?;
    // Checked again on what was opened, in case the path changed in between.
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err("not a regular file".into());
    }
    let mut bytes = vec![];
    f.by_ref()
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("unreadable ({e})"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("larger than {} MiB", MAX_BYTES >> 20));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| format!("not UTF-8 ({e})"))
}

/// The entries of the file at `path` for `identity`: none when there is no file or it has
/// no section of this adapter; why not when it cannot be used (not a regular file, over
/// 16 MiB, unreadable, not a cache document).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn load(path: &std::path::Path, identity: &Identity) -> Result<Vec<TuneEntry>, String> {
    match read_text(path)? {
        None => Ok(vec![]),
        Some(text) => from_json(&text, identity),
    }
}

/// Writes `entries` as `identity`'s section of the file at `path`, keeping the other
/// adapters' sections it holds ([`merge`]; an unusable file is replaced whole), atomically:
/// a temporary file in the same directory, then a rename over the old one. A path that
/// exists and is not a regular file is an error, and nothing is written.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn save(path: &std::path::Path, identity: &Identity, entries: &[TuneEntry]) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(why) = not_a_file(path) {
        return Err(std::io::Error::other(why));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let others = read_text(path)
        .ok()
        .flatten()
        .and_then(|t| sections_from_json(&t).ok())
        .unwrap_or_default();
    let text = merge(others, identity, entries);
    // Unique per process and call, so two writers never share a temporary file.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.{n}.tmp", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn not_a_file(_path: &std::path::Path) -> Option<String> {
    None
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn load(_path: &std::path::Path, _identity: &Identity) -> Result<Vec<TuneEntry>, String> {
    Ok(vec![])
}

#[cfg(target_arch = "wasm32")]
pub(crate) fn save(_path: &std::path::Path, _identity: &Identity, _entries: &[TuneEntry]) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> Identity {
        Identity {
            adapter: "test adapter".into(),
            vendor: 0x10de,
            device: 0x2335,
            driver: "test driver 1".into(),
            backend: "Vulkan".into(),
            engine: "0.1.0".into(),
        }
    }

    fn entry() -> TuneEntry {
        TuneEntry {
            family: Family::Matmul,
            key: "b1 m128 mod4 m0 f32".into(),
            chosen: "large_tile".into(),
            hand: "register_tiled".into(),
            times_ms: vec![("register_tiled".into(), Some(1.5)), ("large_tile".into(), None)],
            clock: "timestamps".into(),
            cost_ms: 12.0,
            pending: vec![],
        }
    }

    #[test]
    fn a_document_round_trips_and_keeps_one_section_per_adapter() {
        let text = to_json(&[(identity(), vec![entry()])]);
        assert_eq!(from_json(&text, &identity()), Ok(vec![entry()]));
        let others = [
            Identity {
                engine: "9.9.9".into(),
                ..identity()
            },
            Identity {
                adapter: "another".into(),
                ..identity()
            },
            Identity {
                vendor: 0x1002,
                ..identity()
            },
            Identity {
                device: 1,
                ..identity()
            },
            Identity {
                driver: "test driver 2".into(),
                ..identity()
            },
            Identity {
                backend: "Gl".into(),
                ..identity()
            },
        ];
        // Another adapter's key finds no entries in the file, and writing its section keeps
        // the first one.
        let mut text = text;
        for (k, other) in others.iter().enumerate() {
            assert_eq!(from_json(&text, other), Ok(vec![]), "{other:?}");
            let e = TuneEntry {
                key: format!("k{k}"),
                ..entry()
            };
            text = merge(sections_from_json(&text).unwrap(), other, std::slice::from_ref(&e));
            assert_eq!(from_json(&text, other), Ok(vec![e]));
            assert_eq!(
                from_json(&text, &identity()),
                Ok(vec![entry()]),
                "kept beside {other:?}"
            );
        }
        let sections = sections_from_json(&text).unwrap();
        assert_eq!(sections.len(), 1 + others.len());
        assert_eq!(&sections[0].0, others.last().unwrap(), "the last written first");
        // Rewriting one adapter replaces its section, never duplicates it.
        let again = merge(sections, &identity(), &[]);
        let sections = sections_from_json(&again).unwrap();
        assert_eq!(sections.len(), 1 + others.len());
        assert_eq!((&sections[0].0, sections[0].1.len()), (&identity(), 0));
        // Bounded: the least recently written sections go.
        let mut many = vec![];
        for k in 0..(MAX_ADAPTERS + 5) {
            let id = Identity {
                adapter: format!("gpu {k}"),
                ..identity()
            };
            many = sections_from_json(&merge(many, &id, &[entry()])).unwrap();
        }
        assert_eq!(many.len(), MAX_ADAPTERS);
        assert_eq!(many[0].0.adapter, format!("gpu {}", MAX_ADAPTERS + 4));
        assert!(many.iter().all(|(id, _)| id.adapter != "gpu 4"), "the oldest went");
        // A format-1 document (one adapter) is read as its section.
        let v1 = r#"{"format": 1, "engine": "0.1.0", "adapter": "test adapter", "vendor": 4318,
            "device": 9013, "driver": "test driver 1", "backend": "Vulkan", "entries": []}"#;
        assert_eq!(sections_from_json(v1).unwrap(), vec![(identity(), vec![])]);
        // Unusable documents are refused whole.
        assert!(from_json("{\"format\": 2, \"adap", &identity()).is_err());
        assert!(from_json("[]", &identity()).is_err());
        assert!(from_json("{\"format\": 3, \"adapters\": []}", &identity())
            .unwrap_err()
            .contains("format"));
        let bad_entry = to_json(&[(identity(), vec![entry()])]).replace("null", "\"fast\"");
        assert!(from_json(&bad_entry, &identity()).unwrap_err().contains("malformed"));
    }
}
