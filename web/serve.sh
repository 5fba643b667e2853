#!/usr/bin/env bash
# Serves the repository root on http://127.0.0.1:${PORT:-8000}/ so the page and the models
# under assets/ are reachable by URL. Open http://127.0.0.1:8000/web/ in a browser with
# WebGPU (build the wasm first: web/build.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
port="${PORT:-8000}"
echo "serving $root on http://127.0.0.1:$port/web/"
exec python3 -m http.server --directory "$root" --bind 127.0.0.1 "$port"
