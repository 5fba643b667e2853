#![no_main]
//! libFuzzer target: `fuzz/entry.rs`'s `sexpr`.

// Each target uses one of the entry points.
#[allow(dead_code)]
#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry::sexpr(data));
