//! `engine-web-bindgen IN.wasm OUT_DIR`: what `wasm-bindgen --target web --no-typescript
//! --out-dir OUT_DIR IN.wasm` does, through the generator of the pinned wasm-bindgen version
//! (`web/bindgen/Cargo.toml` says why). Run by `web/build.sh`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, out_dir] = args.as_slice() else {
        eprintln!("usage: engine-web-bindgen IN.wasm OUT_DIR");
        return ExitCode::from(2);
    };
    let generated = wasm_bindgen_cli_support::Bindgen::new()
        .input_path(input)
        .web(true)
        .map(|b| b.typescript(false).omit_default_module_path(false))
        .and_then(|b| b.generate(out_dir));
    match generated {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("engine-web-bindgen: {input} -> {out_dir}: {e:#}");
            ExitCode::FAILURE
        }
    }
}
