#!/usr/bin/env bash
# An ABBA comparison of two bench binaries on one device: `abba.sh A B SUITES DIR [ROUNDS]`
# runs `A --only SUITES`, then B, B, A (ROUNDS pairs of rounds, default 1: A1 B1 B2 A2), each
# binary with a tune cache of its own (a cache written by one build can name candidates the
# other does not know), each round's JSON in DIR/<round>_<suites>.json, then DIR/abba.md: every
# figure's median over A's rounds and over B's, and B / A. Figures are `bench --json`'s (ms
# unless the key's suffix says otherwise); a ratio above 1 is B larger. BENCH_ARGS are passed
# to both (`--quick` on a software adapter).
#   scripts/device/abba.sh .h200/bench_a .h200/bench gpt2 "$OUT/abba"
set -u
a=$1 b=$2 suites=$3 dir=$4 rounds=${5:-1}
mkdir -p "$dir"
cache_a=$(mktemp -u /tmp/tune_a.XXXXXX.json)
cache_b=$(mktemp -u /tmp/tune_b.XXXXXX.json)
tag=${suites//,/_}
order=""
for r in $(seq "$rounds"); do order="$order A$((2 * r - 1)) B$((2 * r - 1)) B$((2 * r)) A$((2 * r))"; done
for round in $order; do
  case $round in A*) bin=$a cache=$cache_a ;; *) bin=$b cache=$cache_b ;; esac
  ENGINE_TUNE_CACHE=$cache "$bin" ${BENCH_ARGS:-} --only "$suites" --json "$dir/${round}_$tag.json" > "$dir/${round}_$tag.md" 2>&1
  echo "$round $bin rc $? at ${SECONDS}s" >> "$dir/abba.log"
done
python3 - "$dir" "$tag" <<'PY'
import json, os, statistics, sys
d, tag = sys.argv[1], sys.argv[2]
runs = {"A": [], "B": []}
for name in sorted(os.listdir(d)):
    if name.endswith(f"_{tag}.json"):
        with open(os.path.join(d, name)) as f:
            runs[name[0]].append(json.load(f))
def median(side, key):
    v = [r[key] for r in runs[side] if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]
    return statistics.median(v) if v else None
keys = sorted(set().union(*[r.keys() for r in runs["A"] + runs["B"]]))
lines = [f"| figure | A median ({len(runs['A'])} rounds) | B median ({len(runs['B'])}) | B / A |", "| --- | --- | --- | --- |"]
for k in keys:
    a, b = median("A", k), median("B", k)
    if a is None or b is None:
        continue
    ratio = f"{b / a:.3f}" if a else "-"
    lines.append(f"| {k} | {a:.6g} | {b:.6g} | {ratio} |")
with open(os.path.join(d, "abba.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
rm -f "$cache_a" "$cache_b"
