//! The engine in a browser: wasm-bindgen exports over the browser's WebGPU adapter.
//!
//! Built for `wasm32-unknown-unknown` and wrapped by `wasm-bindgen --target web` into
//! `web/pkg/` (see `web/build.sh`); `web/index.html` + `web/main.js` are the page. Everything
//! is async: every result comes back through a promise, and no call blocks the page.
//!
//! JS surface (see [`bindings`]): `Engine.create(allowCpu)` opens the adapter,
//! `engine.info()` describes it, `engine.parityCases()` / `engine.runParityCase(i)` run the
//! parity suite one row at a time (the page's own cases plus the library suite
//! `wgsl_compute::parity`), `engine.loadGpt2(configJson, bytes)` loads GPT-2 and
//! `model.generate(prompt, nTokens, onToken, temperature, topK, seed)` streams sampled (or,
//! without a temperature, greedy) tokens, `gpt2Defaults()` gives the sampling defaults,
//! `engine.trainer(text, mixer, seed)` makes a character-level minGRU model whose
//! `trainer.step()` runs one training step and `trainer.sample(prompt, n)` writes text. The
//! suite ([`suite`]) and the trainer ([`train`]) are plain async Rust, tested natively too.

pub mod bindings;
pub mod gpt2;
mod js;
pub mod suite;
pub mod train;

pub use wgsl_compute;
