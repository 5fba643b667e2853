#!/usr/bin/env bash
# Issue #41's exit-crash loop, run on the device machine: `exit_loop.sh BIN N TAG DIR` runs
# `.h200/BIN` (gpt2_logits) N times on the shipped model, each with an empty tune cache (so the
# tuner's background builds are in flight near exit), and appends each exit status to
# DIR/TAG.txt and a count of failures to DIR/summary.txt. A SIGSEGV exits 139.
set -u
bin=$1 n=$2 tag=$3 dir=$4
mkdir -p "$dir"
fails=0
for i in $(seq "$n"); do
  cache=$(mktemp -u /tmp/tune.XXXXXX.json)
  ENGINE_TUNE_CACHE=$cache timeout 60 ".h200/$bin" --model assets/models/shakespeare \
    --prompt 'JULIET:\nO Romeo,' --tokens 40 --dtype f16 --out "/tmp/loop_$tag" >/dev/null 2>>"$dir/$tag.err"
  rc=$?
  echo "$i $rc" >> "$dir/$tag.txt"
  [ "$rc" = 0 ] || fails=$((fails + 1))
  rm -f "$cache"
done
echo "$tag ($bin): $fails of $n runs failed" | tee -a "$dir/summary.txt"
