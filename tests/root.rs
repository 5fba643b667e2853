//! The one integration-test binary: every GPU test runs on every adapter present.
//!
//! `ENGINE_REQUIRE_GPU=1` turns "no adapter" into a failure instead of a skip (CI sets it).
//! `WGPU_ADAPTER_NAME` / `ENGINE_BACKEND` narrow the adapters as they do for the engine.

mod common;

mod audit;
mod autograd;
mod campaign;
mod campaign_surfaces;
mod charts;
mod compiled_step;
mod context;
mod cuda;
mod data;
mod dtype;
mod element_scan;
mod element_scan_tensor;
mod elementwise;
mod from_wgpu;
mod fuzz;
// The fuzz targets' raw-byte entry points, shared with fuzz/ (the corpus replay in fuzz.rs).
#[path = "../fuzz/entry.rs"]
mod fuzz_entry;
mod gpt2;
mod gpt2_text;
mod gpt2_train;
mod layering;
mod llama;
mod matmul;
mod mixed_precision;
mod mixer;
mod nn;
mod nn_layers;
mod optim;
mod optim_state;
mod plan;
mod planted;
mod profile;
mod reduce;
mod robustness;
mod scan;
mod shaders;
mod special;
mod stress;
mod tensor_api;
mod texture;
mod train;
mod tune;
mod vec4;
