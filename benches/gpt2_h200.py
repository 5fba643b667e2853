"""The engine's GPT-2 against Hugging Face transformers on the same file and the same GPU.

    python3 benches/gpt2_h200.py --engine PATH/TO/gpt2_logits --out DIR

1. The shipped Shakespeare checkpoint (f16 file, run in fp32 by both): for each prompt of
   assets/models/shakespeare/reference_tokens.json, the engine's greedy 40 tokens must equal
   the tokens transformers produced (recorded there), and the engine's logits at every step are
   compared with transformers' logits for the same sequence (teacher-forced): largest |diff|.
2. A GPT-2 124M-shaped checkpoint with random weights (seeded), saved in the HF layout: the
   same comparison for one prompt, plus decode speed of both (transformers with use_cache=True,
   per-token median; the engine's per-token median including the logits readback).
"""

import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.backends.cuda.matmul.allow_tf32 = False


def run_engine(engine, model_dir, prompt, tokens, prefix):
    subprocess.run([engine, "--model", model_dir, "--prompt", prompt, "--tokens", str(tokens), "--out", prefix],
                   check=True, stdout=subprocess.DEVNULL)
    meta = json.load(open(prefix + ".json"))
    logits = np.fromfile(prefix + ".logits.f32", dtype="<f4").reshape(tokens, -1)
    return meta, logits


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
    model = GPT2LMHeadModel.from_pretrained(shakes, torch_dtype=torch.float32).cuda().eval()
    for i, pr in enumerate(ref["prompts"]):
        n = len(pr["generated_ids"])
        meta, logits = run_engine(args.engine, shakes, pr["prompt"], n, f"/tmp/shakes{i}")
        same_prompt = meta["prompt_ids"] == pr["prompt_ids"]
        equal = meta["generated"] == pr["generated_ids"]
        hf = teacher_forced(model, meta["prompt_ids"] + meta["generated"][:-1], len(meta["prompt_ids"]), n)
        diff = float(np.abs(hf - logits).max())
        rows.append(dict(model="shakespeare (f16 file, fp32 compute)", prompt=pr["prompt"], tokens=n,
                         prompt_ids_equal=same_prompt, greedy_equal=equal, max_logit_diff=diff))

    torch.manual_seed(0)
    big = GPT2LMHeadModel(GPT2Config()).cuda().eval()
    big_dir = "/tmp/gpt2-124m-random"
    big.save_pretrained(big_dir, safe_serialization=True)
    prompt = "Alan Turing theorized that computers would one day become"
    meta, logits = run_engine(args.engine, big_dir, prompt, 20, "/tmp/big")
    with torch.no_grad():
        gen = big.generate(torch.tensor([meta["prompt_ids"]], device="cuda"), max_new_tokens=20, do_sample=False,
                           pad_token_id=50256)[0, len(meta["prompt_ids"]):].tolist()
    hf = teacher_forced(big, meta["prompt_ids"] + meta["generated"][:-1], len(meta["prompt_ids"]), 20)
    rows.append(dict(model="gpt2 124M-shaped, random weights (fp32)", prompt=prompt, tokens=20, prompt_ids_equal=True,
                     greedy_equal=meta["generated"] == gen, max_logit_diff=float(np.abs(hf - logits).max())))
    hf_ms = hf_decode_ms(big, meta["prompt_ids"])
    report["decode"] = dict(engine_ms=meta["decode_ms_median"], transformers_ms=hf_ms,
                            engine_prefill_ms_incl_first_readback=meta["prefill_ms"])
    report["rows"] = rows
    report["meta"] = dict(torch=torch.__version__, gpu=torch.cuda.get_device_name(0), engine_adapter=meta["adapter"])

    print("| model | prompt | tokens | greedy equal | max logit diff |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['prompt']!r} | {r['tokens']} | {r['greedy_equal']} | {r['max_logit_diff']:.3e} |")
    d = report["decode"]
    print(f"\ndecode per token (124M, random): engine {d['engine_ms']:.3f} ms, transformers {d['transformers_ms']:.3f} ms "
          f"-> engine {d['transformers_ms'] / d['engine_ms']:.2f}x")
    json.dump(report, open(os.path.join(args.out, "gpt2_h200.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
