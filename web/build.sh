#!/usr/bin/env bash
# Builds the browser page's wasm: web/pkg/{engine_web.js, engine_web_bg.wasm}.
#
#   web/build.sh            # release build (what CI and web/serve.sh use)
#
# Needs the wasm32-unknown-unknown target (`rustup target add wasm32-unknown-unknown`) and
# wasm-bindgen-cli at exactly the version of the wasm-bindgen crate in Cargo.lock; the CLI is
# installed from crates.io here when it is missing or at another version (a build from
# source: 768 s measured on a loaded 2-core machine; no registry reachable here has a binary).
# A --locked install of 0.2.130 fails today (its lock names webpki-roots 1.0.11, gone from
# the registry): the unlocked install below is the one that works.
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
have="$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)"
if [ "$have" != "$version" ]; then
    echo "== installing wasm-bindgen-cli $version (found: ${have:-none})"
    # --locked first, as the release was tested; without it if the registry lacks a locked
    # dependency version (then cargo picks the newest compatible ones).
    cargo install wasm-bindgen-cli --version "$version" --locked \
        || cargo install wasm-bindgen-cli --version "$version"
fi

if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi

echo "== cargo build -p engine-web (wasm32-unknown-unknown, release)"
cargo build -p engine-web --release --target wasm32-unknown-unknown
target_dir="${CARGO_TARGET_DIR:-$root/target}"

echo "== wasm-bindgen --target web -> web/pkg/"
rm -rf web/pkg
wasm-bindgen --target web --no-typescript --out-dir web/pkg \
    "$target_dir/wasm32-unknown-unknown/release/engine_web.wasm"
ls -l web/pkg
