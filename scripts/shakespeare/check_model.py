#!/usr/bin/env python3
"""Check the shipped Shakespeare checkpoint without transformers or torch (numpy + safetensors).

1. The file: every GPT-2 tensor present with its shape from config.json, f16, finite, the
   file at most 25,000,000 bytes, its sha256 equal to the one reference_tokens.json names.
2. The references: an independent GPT-2 forward in float64 numpy (layer norm, causal
   attention, tanh GELU, tied lm_head) re-derives the greedy tokens of every prompt in
   reference_tokens.json and the top-5 logits at every step; prints the largest difference.

    python3 scripts/shakespeare/check_model.py [assets/models/shakespeare]
"""

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

MAX_BYTES = 25_000_000


def expected_shapes(cfg):
    c, v, p = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"]
    shapes = {"wte.weight": (v, c), "wpe.weight": (p, c), "ln_f.weight": (c,), "ln_f.bias": (c,)}
    for i in range(cfg["n_layer"]):
        h = f"h.{i}."
        shapes.update({
            h + "ln_1.weight": (c,), h + "ln_1.bias": (c,), h + "ln_2.weight": (c,), h + "ln_2.bias": (c,),
            h + "attn.c_attn.weight": (c, 3 * c), h + "attn.c_attn.bias": (3 * c,),
            h + "attn.c_proj.weight": (c, c), h + "attn.c_proj.bias": (c,),
            h + "mlp.c_fc.weight": (c, 4 * c), h + "mlp.c_fc.bias": (4 * c,),
            h + "mlp.c_proj.weight": (4 * c, c), h + "mlp.c_proj.bias": (c,),
        })
    return shapes


def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def logits_last(w, cfg, ids):
    """GPT-2 forward in float64; the logits of the last position, (vocab,)."""
    t, c, nh, eps = len(ids), cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    d = c // nh
    x = w["wte.weight"][ids] + w["wpe.weight"][:t]  # (T, C)
    mask = np.triu(np.full((t, t), -1e30), 1)
    for i in range(cfg["n_layer"]):
        h = f"h.{i}."
        a = layer_norm(x, w[h + "ln_1.weight"], w[h + "ln_1.bias"], eps)
        qkv = a @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]  # (T, 3C)
        q, k, v = (m.reshape(t, nh, d).transpose(1, 0, 2) for m in np.split(qkv, 3, axis=-1))  # (H, T, D)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(d) + mask
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        o = (s @ v).transpose(1, 0, 2).reshape(t, c)
        x = x + o @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
        m = layer_norm(x, w[h + "ln_2.weight"], w[h + "ln_2.bias"], eps)
        m = gelu_tanh(m @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"])
        x = x + m @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]
    x = layer_norm(x[-1], w["ln_f.weight"], w["ln_f.bias"], eps)
    return x @ w["wte.weight"].T


def main():
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "assets/models/shakespeare")
    cfg = json.loads((folder / "config.json").read_text())
    ref = json.loads((folder / "reference_tokens.json").read_text())
    path = folder / "model.safetensors"
    size = path.stat().st_size
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    raw = load_file(str(path))
    shapes = expected_shapes(cfg)
    problems = []
    if set(raw) != set(shapes):
        problems.append(f"tensor names differ: {sorted(set(raw) ^ set(shapes))}")
    for name, shape in shapes.items():
        t = raw.get(name)
        if t is not None and (t.shape != shape or t.dtype != np.float16 or not np.isfinite(t).all()):
            problems.append(f"{name}: {t.shape} {t.dtype}, expected {shape} float16 finite")
    if size > MAX_BYTES:
        problems.append(f"{size} bytes > {MAX_BYTES}")
    if sha != ref["sha256"]:
        problems.append(f"sha256 {sha} is not the one of reference_tokens.json")
    params = sum(t.size for t in raw.values())
    print(f"{path}: {size:,} bytes, {len(raw)} tensors, {params:,} parameters, f16, sha256 {sha}")

    w = {k: v.astype(np.float64) for k, v in raw.items()}
    for p in ref["prompts"]:
        ids, worst = list(p["prompt_ids"]), 0.0
        for step in p["steps"]:
            logits = logits_last(w, cfg, ids)
            top = [int(i) for i in np.argsort(-logits, kind="stable")[:5]]
            if top[0] != step["argmax"]:
                problems.append(f"{p['prompt']!r}: step {len(ids) - len(p['prompt_ids'])} argmax {top[0]} != "
                                f"{step['argmax']}")
                break
            worst = max(worst, float(np.abs(logits[step["top5"]] - np.array(step["top5_logits"])).max()))
            ids.append(top[0])
        same = ids[len(p["prompt_ids"]):] == p["generated_ids"]
        print(f"{p['prompt']!r}: greedy tokens {'equal' if same else 'DIFFER'}; largest top-5 logit difference "
              f"{worst:.2e}; smallest top-1/top-2 margin {p['min_top1_top2_margin']}")
        if not same:
            problems.append(f"{p['prompt']!r}: greedy tokens differ")
    if problems:
        print("FAILED:\n  " + "\n  ".join(problems))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
