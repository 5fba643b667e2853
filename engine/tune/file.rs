//! The tune cache file: one small JSON document per adapter, natively.
//!
//! Where: `ENGINE_TUNE_CACHE` (a path; empty keeps the entries in memory only), else
//! `$XDG_CACHE_HOME/wgsl-compute/tune.json`, else `~/.cache/wgsl-compute/tune.json`. In a
//! browser there is no file: the entries live in memory.
//!
//! ```json
//! { "format": 1, "engine": "0.1.0",
//!   "adapter": "llvmpipe (LLVM 19.1.7, 256 bits)", "vendor": 65541, "device": 0,
//!   "driver": "llvmpipe Mesa 25.0.7", "backend": "Vulkan",
//!   "entries": [ { "family": "matmul", "key": "b1 m128 n128 k128 mod4 m0 n0 k0 f32 f32 vec_a vec_b",
//!                  "chosen": "register_tiled", "hand": "register_tiled", "clock": "timestamps",
//!                  "cost_ms": 41.2, "times_ms": [["register_tiled", 0.61], ["tiled16", 0.97], ["large_tile", null]] } ] }
//! ```
//!
//! A file is used only when it parses, has this format, this engine version and this
//! adapter's name, vendor, device id, driver and backend; otherwise [`load`] says why and the
//! caller starts afresh. [`save`] writes a temporary file next to it and renames it over the
//! old one, so a reader never sees half a file. The cache is a regular file or nothing: a
//! path that names a directory, a device or a FIFO is never opened nor replaced, and a file
//! over 16 MiB is not read.

// In a browser only the (pure) JSON half is compiled in, and nothing calls it.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

use serde_json::{json, Value};

use super::{Family, Identity, TuneEntry};

/// The `format` this engine writes and reads.
const FORMAT: u64 = 1;

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

/// The document for `identity` holding `entries`.
pub(crate) fn to_json(identity: &Identity, entries: &[TuneEntry]) -> String {
    let entries: Vec<Value> = entries
        .iter()
        .map(|e| {
            json!({
                "family": e.family.name(),
                "key": e.key,
                "chosen": e.chosen,
                "hand": e.hand,
                "clock": e.clock,
                "cost_ms": e.cost_ms,
                "times_ms": e.times_ms.iter().map(|(n, t)| json!([n, t])).collect::<Vec<_>>(),
            })
        })
        .collect();
    let doc = json!({
        "format": FORMAT,
        "engine": identity.engine,
        "adapter": identity.adapter,
        "vendor": identity.vendor,
        "device": identity.device,
        "driver": identity.driver,
        "backend": identity.backend,
        "entries": entries,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// The entries of `text` when it is a document of this format for `identity`; else why not.
pub(crate) fn from_json(text: &str, identity: &Identity) -> Result<Vec<TuneEntry>, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    if doc["format"].as_u64() != Some(FORMAT) {
        return Err(format!("format {}, expected {FORMAT}", doc["format"]));
    }
    let text_of = |v: &Value| v.as_str().map(str::to_string);
    let written = Identity {
        adapter: text_of(&doc["adapter"]).unwrap_or_default(),
        vendor: doc["vendor"].as_u64().unwrap_or(u64::MAX) as u32,
        device: doc["device"].as_u64().unwrap_or(u64::MAX) as u32,
        driver: text_of(&doc["driver"]).unwrap_or_default(),
        backend: text_of(&doc["backend"]).unwrap_or_default(),
        engine: text_of(&doc["engine"]).unwrap_or_default(),
    };
    if written.engine != identity.engine {
        return Err(format!(
            "written by engine version {:?}, this is {:?}",
            written.engine, identity.engine
        ));
    }
    if written != *identity {
        return Err(format!(
            "written for adapter {:?} ({}, vendor {:#x}, device {:#x}, driver {:?}), this is {:?} ({}, vendor {:#x}, device {:#x}, driver {:?})",
            written.adapter,
            written.backend,
            written.vendor,
            written.device,
            written.driver,
            identity.adapter,
            identity.backend,
            identity.vendor,
            identity.device,
            identity.driver
        ));
    }
    let list = doc["entries"].as_array().ok_or("no `entries` array")?;
    list.iter()
        .enumerate()
        .map(|(i, e)| entry(e).ok_or(format!("entry {i} is malformed")))
        .collect()
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

/// The entries of the file at `path` for `identity`: none when there is no file; why not
/// when it cannot be used (not a regular file, over 16 MiB, unreadable, not this adapter's).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn load(path: &std::path::Path, identity: &Identity) -> Result<Vec<TuneEntry>, String> {
    use std::io::Read;
    // Checked before opening: opening a FIFO blocks until a writer comes.
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
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
    let text = String::from_utf8(bytes).map_err(|e| format!("not UTF-8 ({e})"))?;
    from_json(&text, identity)
}

/// Writes `entries` for `identity` to `path` atomically: a temporary file in the same
/// directory, then a rename over the old one. A path that exists and is not a regular file
/// is an error, and nothing is written.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn save(path: &std::path::Path, identity: &Identity, entries: &[TuneEntry]) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(why) = not_a_file(path) {
        return Err(std::io::Error::other(why));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    // Unique per process and call, so two writers never share a temporary file.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.{n}.tmp", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(to_json(identity, entries).as_bytes())?;
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
    fn a_document_round_trips_and_a_foreign_one_is_refused() {
        let text = to_json(&identity(), &[entry()]);
        assert_eq!(from_json(&text, &identity()), Ok(vec![entry()]));
        let other_version = Identity {
            engine: "9.9.9".into(),
            ..identity()
        };
        assert!(from_json(&text, &other_version).unwrap_err().contains("engine version"));
        for other in [
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
        ] {
            assert!(from_json(&text, &other).unwrap_err().contains("adapter"), "{other:?}");
        }
        assert!(from_json("{\"format\": 1, \"entr", &identity()).is_err());
        assert!(from_json("[]", &identity()).is_err());
        let bad_entry = text.replace("null", "\"fast\"");
        assert!(from_json(&bad_entry, &identity()).unwrap_err().contains("malformed"));
    }
}
