#!/usr/bin/env bash
# The benchmark script (docs/src/benchmarks.md), run from the repo root on the device machine
# with binaries built on the development machine and carried in .h200/ (see README):
#   cargo build --release -p wgsl-compute-dev --bins && mkdir -p .h200 && cp target/release/{bench,decode_probe,coop_probe,gpt2_logits,walk_probe} .h200/ && strip .h200/* && xz -9e .h200/*
# (the dev tools, dev/src/bin/: cargo puts a workspace package's binaries in target/release/)
# (compressed, the binaries fit the device's 64 MiB carry beside the checkout's ~39 MiB of
# tracked files: xz -9e makes them about 30% smaller than gzip -9, which left no room for a
# test binary; the script unpacks either, with Python's lzma where the machine has no xz).
# Writes $OUT/engine.json, $OUT/torch.json, raw outputs, and $OUT/h200.json (merged).
set -uo pipefail
OUT=${OUT:-benches/results/raw}
ONLY=${ONLY:-copy,matmul,gpt2,gemv,gpt2_sizes}
# Each suite's process took 80-100 s on the H200 for copy,scans (2026-12-02): a device call of
# the whole script needs most of the 10 minutes a call may run.
mkdir -p "$OUT"
for f in .h200/*.gz; do [ -e "$f" ] && gunzip -f "$f"; done
for f in .h200/*.xz; do
  [ -e "$f" ] || continue
  xz -d -f "$f" 2>/dev/null || python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3], "wb"))' "$f"
done
chmod +x .h200/* 2>/dev/null
export ENGINE_BACKEND=${ENGINE_BACKEND:-vulkan}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
# The SM clock every 100 ms for the whole run: it falls from 1980 to 345 MHz within a second
# of idle, and a case timed at the low clock runs up to 2x slow (walk_probe --clocks).
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 100 > "$OUT/clocks.csv" 2>&1 &
CLOCK_LOG=$!
trap 'kill $CLOCK_LOG 2>/dev/null' EXIT
# Warm-up: clocks idle low; a few seconds of work before the first timed case.
timeout 60 .h200/bench --quick --only copy,matmul > /dev/null 2>&1
# Each suite in a process of its own. In one process the suites after the large scans once
# measured 2-4x slow: the GPU's clock had fallen to idle while the host prepared inputs, which
# the bench now prevents (dev/src/bin/common/clocks.rs; raw/2026-12-02/order). The copy runs with
# the scans, whose table reports it as the ceiling.
: > "$OUT/engine_bench.md"; : > "$OUT/engine_bench.err"
# gemv and gpt2_sizes report against the copy ceiling, so the copy runs with them too.
for suite in matmul gpt2 gpt2_train copy,gemv copy,gpt2_sizes copy,scans copy,element_scans mixers; do
  # A suite runs when ONLY names it (the copy that rides along is not asked for).
  case ",$ONLY," in *",${suite##*,},"*) ;; *) continue ;; esac
  # The matmul suite opts into cooperative matrices for its f16 rows (MatmulPath::Cooperative;
  # the large products take the staged kernel), and gpt2_train for its F16 mixed step.
  ENGINE_EXPERIMENTAL=$(case $suite in matmul|gpt2_train) echo cooperative-matrix ;; esac) .h200/bench --only "$suite" --json "$OUT/engine_${suite/,/_}.json" >> "$OUT/engine_bench.md" 2>> "$OUT/engine_bench.err"
  echo "engine bench $suite rc $?"
done
# The scans and the mixers again with the one-pass look-back forced (Strategy::LookBack:
# linear_scan, parallel_scan_log and k = v = 1 have it; the other scans run Auto's plan), each
# in a process of its own, keyed scan_<op>_<shape>_lookback_* and mixer_<name>_lookback_*.
# LOOKBACK=0 skips them (a call short of time).
for suite in copy,scans mixers; do
  [ "${LOOKBACK:-1}" = 0 ] && continue
  case ",$ONLY," in *",${suite##*,},"*) ;; *) continue ;; esac
  .h200/bench --only "$suite" --strategy lookback --json "$OUT/engine_${suite/,/_}_lookback.json" >> "$OUT/engine_bench.md" 2>> "$OUT/engine_bench.err"
  echo "engine bench $suite lookback rc $?"
done
# The decode probe and the transformers comparison go with the GPT-2 inference suites.
case ",$ONLY," in *",gpt2,"*|*",gemv,"*|*",gpt2_sizes,"*) GPT2_INFERENCE=1 ;; *) GPT2_INFERENCE=0 ;; esac
if [ "$GPT2_INFERENCE" = 1 ]; then
  .h200/decode_probe --steps 64 > "$OUT/decode_probe.md" 2>&1
  echo "decode probe rc $?"
fi
# Issue #19's cooperative-matrix probe (f16 inputs, f32 accumulation) where the binary was carried:
# its kernels, which load their tiles directly, timed together. The workgroup-staged variants,
# which the driver's compiler rejected (losing the device), are gone (dev/src/bin/coop_probe.rs
# names the commit that has them).
if [ -x .h200/coop_probe ]; then
  .h200/coop_probe --only coop_matmul,coop_matmul_2x2,coop_matmul_2x2_k32 --json "$OUT/coop.json" > "$OUT/coop_probe.md" 2>&1
  echo "coop probe rc $?"
fi
python3 benches/torch_reference.py --only "${TORCH_ONLY:-copy,matmul,gpt2}" --out "$OUT/torch.json" > "$OUT/torch.md" 2>&1
echo "torch rc $?"
# The training step's peers (benches/gpt2_train_torch.py): PyTorch eager, torch.compile and
# eager under torch.autocast(bfloat16) (the mixed-precision row).
case ",$ONLY," in *",gpt2_train,"*)
  PYTHONUNBUFFERED=1 timeout 300 python3 benches/gpt2_train_torch.py --out "$OUT/torch_train.json" > "$OUT/torch_train.md" 2>&1
  echo "torch train rc $?"
  ;;
esac
# GPT-2 the way a PyTorch user after speed runs it: a static KV cache, prefill and decode each
# captured in a CUDA graph, fp32 and fp16, the four sizes; its ids checked against transformers.
# TORCH_GRAPH=0 skips it (a run after other figures only).
case "${TORCH_GRAPH:-1},$ONLY," in 1,*",gpt2,"*|1,*",gpt2_sizes,"*)
  PYTHONUNBUFFERED=1 timeout 300 python3 benches/gpt2_cuda_graph.py --out "$OUT/torch_graph.json" > "$OUT/torch_graph.md" 2>&1
  echo "torch cuda graph rc $?"
  ;;
esac
# The scans' Triton peers (the seed's lane walk and a chunked tl.associative_scan) with the
# scans, the element scans' jax.lax.scan peers with the element scans. The Triton large rows
# compile and time several configurations each: give this step a few minutes.
case ",$ONLY," in *",scans,"*)
  PYTHONUNBUFFERED=1 python3 benches/triton_scans.py --out "$OUT/triton.json" > "$OUT/triton.md" 2>&1
  echo "triton rc $?"
  # The engine's linear_scan timed after each way of keeping the device busy (issue #42's
  # 54%-of-copy figures were taken at the idle clock): walk_probe --clocks.
  if [ -x .h200/walk_probe ]; then
    timeout 120 .h200/walk_probe --clocks --json "$OUT/walk_probe_clocks.json.txt" > "$OUT/walk_probe_clocks.md" 2>&1
    echo "walk probe rc $?"
  fi
  ;;
esac
case ",$ONLY," in *",element_scans,"*)
  PYTHONUNBUFFERED=1 python3 benches/jax_element_scans.py --out "$OUT/jax.json" > "$OUT/jax.md" 2>&1
  echo "jax rc $?"
  ;;
esac
# The browser build on Dawn (Chrome's WebGPU) in Node, where ONLY names dawn and .dawn/ carries
# node and dawn.node (README, "Dawn"): parity, the dispatch floor, GPT-2 decode; the native
# figures it is compared with come from the gpt2 suite and the decode probe of the same run.
case ",$ONLY," in *",dawn,"*)
  if [ -e .dawn/node.xz ]; then
    xz -dkf .dawn/node.xz && chmod +x .dawn/node
    mkdir -p web/dawn/node_modules/webgpu/dist/linux-x64
    tar xf .dawn/webgpu.tar -C web/dawn/node_modules
    xz -dkf .dawn/dawn.node.xz && cp .dawn/dawn.node web/dawn/node_modules/webgpu/dist/linux-x64/
    rm -rf web/pkg && mkdir -p web/pkg && tar xzf .dawn/pkg.tgz -C web/pkg
    timeout 400 .dawn/node web/dawn/dawn.mjs --out "$OUT/dawn.json" > "$OUT/dawn.md" 2>&1
    echo "dawn rc $?"
    # Where Dawn's time goes: again with its bounds checks off and its unsafe features on
    # (subgroups), which a page cannot ask for; its figures are not merged.
    DAWN_FLAGS="enable-dawn-toggles=disable_robustness enable-dawn-features=allow_unsafe_apis" \
      timeout 300 .dawn/node web/dawn/dawn.mjs --out "$OUT/dawn_unchecked.json.txt" > "$OUT/dawn_unchecked.md" 2>&1
    echo "dawn unchecked rc $?"
  else
    echo "dawn: .dawn/node.xz not carried; skipped"
  fi
  ;;
esac
# The engine's tokens and logits against transformers on the same files, per weights dtype.
if [ -x .h200/gpt2_logits ] && [ "$GPT2_INFERENCE" = 1 ]; then
  python3 benches/gpt2_h200.py --engine .h200/gpt2_logits --out "$OUT" > "$OUT/gpt2_h200.md" 2>&1
  echo "gpt2 vs transformers rc $?"
fi
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
merged = {}
for name in sorted(n for n in os.listdir(out) if n.startswith("engine_") and n.endswith(".json")) + ["torch.json", "torch_train.json", "torch_graph.json", "coop.json", "triton.json", "jax.json", "dawn.json"]:
    path = os.path.join(out, name)
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
        if isinstance(data, dict):
            # The first file to give a key keeps it (the look-back run's own copy figure
            # does not replace the first suite's).
            for k, v in data.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    merged.setdefault(k, v)
with open(os.path.join(out, "h200.json"), "w") as f:
    json.dump(merged, f, indent=2, sort_keys=True)
print(json.dumps(merged, indent=1, sort_keys=True))
PY
