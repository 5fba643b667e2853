#!/usr/bin/env bash
# Builds the browser page's wasm: web/pkg/{engine_web.js, engine_web_bg.wasm}.
#
#   web/build.sh            # release build (what CI and web/serve.sh use)
#
# Needs the wasm32-unknown-unknown target (`rustup target add wasm32-unknown-unknown`, done here
# where rustup is). The JS glue comes from wasm-bindgen's own generator at exactly the version
# of the wasm-bindgen crate in Cargo.lock, built from web/bindgen/ with its dependencies locked
# in web/bindgen/Cargo.lock (65 s once on a 2-core machine, against 768 s for `cargo install
# wasm-bindgen-cli`, whose --locked install of 0.2.130 fails today: its lock names
# webpki-roots 1.0.11, gone from the registry). Its output equals the CLI's byte for byte.
# CARGO_TARGET_DIR is honoured (default: target/ at the repository root).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# The wasm-bindgen version Cargo.lock resolved: the CLI must match it exactly.
version="$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)"
if [ -z "$version" ]; then
    echo "build.sh: no wasm-bindgen in Cargo.lock" >&2
    exit 1
fi
# The generator: wasm-bindgen's, at that version, built from web/bindgen/ with its dependencies
# locked there (web/bindgen/Cargo.toml says why not `cargo install wasm-bindgen-cli --locked`).
if ! grep -q "wasm-bindgen-cli-support = \"=$version\"" web/bindgen/Cargo.toml; then
    echo "build.sh: web/bindgen/Cargo.toml must pin wasm-bindgen-cli-support = \"=$version\" (Cargo.lock's wasm-bindgen)" >&2
    exit 1
fi
target_dir="${CARGO_TARGET_DIR:-$root/target}"
echo "== cargo build --locked web/bindgen (wasm-bindgen $version's generator)"
cargo build --release --locked --manifest-path web/bindgen/Cargo.toml --target-dir "$target_dir"

if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi

echo "== cargo build -p engine-web (wasm32-unknown-unknown, release)"
cargo build -p engine-web --release --target wasm32-unknown-unknown

echo "== wasm-bindgen $version --target web -> web/pkg/"
rm -rf web/pkg
"$target_dir/release/engine-web-bindgen" \
    "$target_dir/wasm32-unknown-unknown/release/engine_web.wasm" web/pkg
ls -l web/pkg
