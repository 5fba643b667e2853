"""The engine's GPT-2 against Hugging Face transformers on the same file and the same GPU.

    python3 benches/gpt2_h200.py --engine PATH/TO/gpt2_logits --out DIR

1. The shipped Shakespeare checkpoint (an f16 file): for each prompt of
   assets/models/shakespeare/reference_tokens.json, the engine's greedy 40 tokens must equal
   the tokens transformers produced (recorded there), and the engine's logits at every step are
   compared with transformers' logits for the same sequence (teacher-forced): largest |diff|.
   Once per weights dtype of the engine (f32, f16 as stored, bf16), each against transformers
   holding the same weight values (f32 compute, the engine's semantics: half weights widened,
   activations and sums in f32), and the half ones also against transformers computing in that
   dtype (torch_dtype=float16 / bfloat16: its activations rounded to the half type too).
2. A GPT-2 124M-shaped checkpoint with random weights (seeded), saved in the HF layout: the
   same comparison for one prompt in f32 and f16, plus decode speed of both (transformers with
   use_cache=True, per-token median; the engine's per-token median including the logits
   readback).

Tolerances. Same weight values, both in f32: summation order is the only difference, so the
tokens must be equal and the logits agree to ~1e-4 (measured 2e-5 in f32). Transformers in a
half type rounds every activation to it (f16 2^-11, bf16 2^-8 relative) where the engine keeps
f32, so its logits move by more than the engine's own error: the tokens must be equal, or,
at the first step where they differ, transformers' margin between its own choice and the
engine's must be below the largest logit difference measured before that step (a near-tie
that the activations' rounding decides). The script prints both figures for every row.
"""

import argparse
import copy
import json
import os
import statistics
import subprocess
import time

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.backends.cuda.matmul.allow_tf32 = False


def run_engine(engine, model_dir, prompt, tokens, prefix, dtype=None):
    cmd = [engine, "--model", model_dir, "--prompt", prompt, "--tokens", str(tokens), "--out", prefix]
    if dtype:
        cmd += ["--dtype", dtype]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    meta = json.load(open(prefix + ".json"))
    logits = np.fromfile(prefix + ".logits.f32", dtype="<f4").reshape(tokens, -1)
    return meta, logits


def greedy(model, prompt_ids, n):
    with torch.no_grad():
        return model.generate(torch.tensor([prompt_ids], device="cuda"), max_new_tokens=n, do_sample=False,
                              pad_token_id=50256)[0, len(prompt_ids):].tolist()


def compare(model, meta, logits, hf_tokens, n):
    """Greedy equality, the largest logit difference (teacher-forced on the engine's tokens), and
    where the tokens differ: the step, transformers' margin there between its choice and the
    engine's, and the largest difference before it."""
    hf = teacher_forced(model, meta["prompt_ids"] + meta["generated"][:-1], len(meta["prompt_ids"]), n)
    diff = np.abs(hf - logits).max(axis=1)
    row = dict(greedy_equal=meta["generated"] == hf_tokens, max_logit_diff=float(diff.max()))
    first = next((i for i, (a, b) in enumerate(zip(meta["generated"], hf_tokens)) if a != b), None)
    if first is not None:
        margin = float(hf[first].max() - hf[first][meta["generated"][first]])
        before = float(diff[:first + 1].max())
        row.update(first_difference=first, hf_margin_there=margin, max_diff_until_there=before,
                   near_tie=margin < before)
    return row


def teacher_forced(model, ids, n_prompt, steps):
    with torch.no_grad():
        out = model(torch.tensor([ids], device="cuda")).logits[0].float().cpu().numpy()
    return out[n_prompt - 1:n_prompt - 1 + steps]


def hf_decode_ms(model, ids, steps=40):
    with torch.no_grad():
        out = model(torch.tensor([ids], device="cuda"), use_cache=True)
        past, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)
        times = []
        for _ in range(steps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = model(tok, past_key_values=past, use_cache=True)
            past, tok = out.past_key_values, out.logits[:, -1:].argmax(-1)
            _ = tok.item()  # the engine's figure includes reading the chosen id back too
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times[5:])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--engine", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows, report = [], {}

    shakes = "assets/models/shakespeare"
    ref = json.load(open(os.path.join(shakes, "reference_tokens.json")))
    f32 = GPT2LMHeadModel.from_pretrained(shakes, torch_dtype=torch.float32).cuda().eval()
    half = {d: GPT2LMHeadModel.from_pretrained(shakes, torch_dtype=t).cuda().eval()
            for d, t in (("f16", torch.float16), ("bf16", torch.bfloat16))}
    # The engine's semantics at each weights dtype: those weight values, f32 compute.
    same = {"f32": f32, "f16": f32, "bf16": copy.deepcopy(half["bf16"]).float()}
    for i, pr in enumerate(ref["prompts"]):
        n = len(pr["generated_ids"])
        for dtype in ("f32", "f16", "bf16"):
            meta, logits = run_engine(args.engine, shakes, pr["prompt"], n, f"/tmp/shakes{i}_{dtype}", dtype)
            assert meta["prompt_ids"] == pr["prompt_ids"], (meta["prompt_ids"], pr["prompt_ids"])
            peers = [("f32, same weight values", same[dtype],
                      pr["generated_ids"] if dtype != "bf16" else greedy(same[dtype], meta["prompt_ids"], n))]
            if dtype != "f32":
                peers.append((f"{dtype} (torch_dtype)", half[dtype], greedy(half[dtype], meta["prompt_ids"], n)))
            for hf_compute, model, hf_tokens in peers:
                rows.append(dict(model="shakespeare (f16 file)", engine_weights=meta["dtype"], transformers=hf_compute,
                                 prompt=pr["prompt"], tokens=n, **compare(model, meta, logits, hf_tokens, n)))

    torch.manual_seed(0)
    big = GPT2LMHeadModel(GPT2Config()).cuda().eval()
    big_dir = "/tmp/gpt2-124m-random"
    big.save_pretrained(big_dir, safe_serialization=True)
    prompt = "Alan Turing theorized that computers would one day become"
    big16 = copy.deepcopy(big).half()
    big16w = copy.deepcopy(big16).float()
    for dtype, peers in (("f32", [("f32", big)]),
                         ("f16", [("f32, same weight values", big16w), ("f16 (torch_dtype)", big16)])):
        meta, logits = run_engine(args.engine, big_dir, prompt, 20, f"/tmp/big_{dtype}", dtype)
        if dtype == "f32":
            big_meta = meta
        for hf_compute, model in peers:
            rows.append(dict(model="gpt2 124M-shaped, random weights (f32 file)", engine_weights=meta["dtype"],
                             transformers=hf_compute, prompt=prompt, tokens=20,
                             **compare(model, meta, logits, greedy(model, meta["prompt_ids"], 20), 20)))
    meta = big_meta
    hf_ms = hf_decode_ms(big, meta["prompt_ids"])
    report["decode"] = dict(engine_ms=meta["decode_ms_median"], transformers_ms=hf_ms,
                            engine_prefill_ms_incl_first_readback=meta["prefill_ms"])
    report["rows"] = rows
    report["meta"] = dict(torch=torch.__version__, gpu=torch.cuda.get_device_name(0), engine_adapter=meta["adapter"])

    print("| model | engine weights | transformers computes in | prompt | tokens | greedy equal | max logit diff | "
          "first difference: step, transformers' margin, max diff until there |\n|---|---|---|---|---|---|---|---|")
    for r in rows:
        where = (f"{r['first_difference']}, {r['hf_margin_there']:.3e}, {r['max_diff_until_there']:.3e}"
                 f" ({'near tie' if r['near_tie'] else 'NOT a near tie'})" if "first_difference" in r else "-")
        print(f"| {r['model']} | {r['engine_weights']} | {r['transformers']} | {r['prompt']!r} | {r['tokens']} | "
              f"{r['greedy_equal']} | {r['max_logit_diff']:.3e} | {where} |")
    d = report["decode"]
    print(f"\ndecode per token (124M, random): engine {d['engine_ms']:.3f} ms, transformers {d['transformers_ms']:.3f} ms "
          f"-> engine {d['transformers_ms'] / d['engine_ms']:.2f}x")
    json.dump(report, open(os.path.join(args.out, "gpt2_h200.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
