//! Reading and writing model files, below every model: the safetensors format ([`safetensors`]:
//! a parser over borrowed bytes and a writer, no file I/O, so it runs in wasm) and bounded
//! reads of untrusted files (`file.rs`). Models map the
//! named tensors to their own parameters (`models::gpt2::Weights`); the parity suite reads its
//! fixtures through the same parser.

mod file;
pub mod safetensors;

pub use file::MAX_CONFIG_BYTES;
pub(crate) use file::{json_object, read_bounded, read_text};
