//! Reading files without trusting them: a regular file of at most a given size, or an error
//! naming the path (so `/dev/zero`, a pipe or a huge file is an error, not a hang).

use std::path::Path;

use crate::error::{Error, Result};

/// Largest model `config.json` read, in bytes (Hugging Face's configs are a few KiB).
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The bytes of a regular file of at most `limit` bytes; anything else (a device, a pipe, a
/// larger file) is an [`Error::Io`] naming the path and the limit. Reads at most `limit + 1`
/// bytes whatever the file does while it is read.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let io = |message: String| Error::io(path.display(), message);
    let file = std::fs::File::open(path).map_err(|e| io(e.to_string()))?;
    let meta = file.metadata().map_err(|e| io(e.to_string()))?;
    if !meta.is_file() {
        return Err(io("not a regular file".into()));
    }
    if meta.len() > limit {
        return Err(io(format!("{} bytes, above the limit of {limit} bytes", meta.len())));
    }
    let mut out = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| io(e.to_string()))?;
    if out.len() as u64 > limit {
        return Err(io(format!("grew past the limit of {limit} bytes while being read")));
    }
    Ok(out)
}

/// [`read_bounded`] as UTF-8 text (a config file).
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String> {
    String::from_utf8(read_bounded(path, limit)?).map_err(|e| Error::Io {
        what: path.display().to_string(),
        message: format!("not UTF-8: {e}"),
    })
}

/// The JSON object of a config file's `text` (`what` names it in errors).
pub(crate) fn json_object(text: &str, what: &str) -> Result<serde_json::Map<String, serde_json::Value>> {
    let io = |message: String| Error::Io {
        what: what.to_string(),
        message,
    };
    match serde_json::from_str(text).map_err(|e| io(format!("not valid JSON: {e}")))? {
        serde_json::Value::Object(m) => Ok(m),
        _ => Err(io("expected a JSON object".into())),
    }
}
