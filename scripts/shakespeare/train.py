#!/usr/bin/env python3
"""Train the embedded default model (issue #12): a small GPT-2 on Shakespeare.

A `GPT2LMHeadModel` (transformers) with GPT-2's vocabulary (50,257) and tied embeddings,
trained from scratch on train.bin (uint16 GPT-2 BPE ids from prepare.py) with AdamW, a
linear-warmup cosine schedule and bf16 autocast, under a wall-clock budget. The corpus is
small (about 1.2M tokens), so the model overfits within minutes on a GPU: the script trains
a short sweep of runs (`--runs dropout:max_steps,...`, the budget shared in proportion to the
steps), evaluates the held-out plays every `--eval-every` steps, keeps each run's best
weights (early stopping with `--patience`) and ships the best run.

Writes to --out:
  config.json            HF GPT-2 config
  model.safetensors      f16, HF GPT-2 key names without the `transformer.` prefix (the layout
                         of the original `gpt2` checkpoint), no lm_head (tied to wte). When it
                         is larger than --part-bytes it is written as model.safetensors.part0,
                         .part1, ... instead (the device tool returns files of at most 16 MiB);
                         `cat model.safetensors.part* > model.safetensors` joins them and
                         train_log.json holds the sha256 of the whole file.
  train_log.json         the curves (step, train loss, val loss, time), the settings, the result
  reference_tokens.json  transformers' greedy continuations in fp32 of the saved f16 file

    PYTHONUNBUFFERED=1 python3 train.py --data DIR --out OUT --budget 420
    python3 train.py --data DIR --out OUT --reference-only assets/models/shakespeare  # references only
"""

import argparse
import hashlib
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import transformers
from safetensors.torch import load_file, save_file
from transformers import GPT2Config, GPT2LMHeadModel

VOCAB = 50257
EOT = 50256


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=".", help="folder with train.bin, val.bin, prompts.json, r50k_base.tiktoken")
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=420.0, help="training wall-clock seconds, all runs together")
    ap.add_argument("--n-layer", type=int, default=6)
    ap.add_argument("--n-head", type=int, default=6)
    ap.add_argument("--n-embd", type=int, default=192)
    ap.add_argument("--n-positions", type=int, default=256)
    ap.add_argument("--block", type=int, default=256, help="training sequence length")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--min-lr-frac", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--runs", default="0.1:1500,0.2:3000,0.3:6000", help="dropout:max_steps for each run")
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--patience", type=int, default=8, help="evaluations without a new best before a run stops")
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--compile", action="store_true", help="torch.compile the model")
    ap.add_argument("--max-bytes", type=int, default=25_000_000, help="largest allowed f16 file")
    ap.add_argument("--part-bytes", type=int, default=15 * 2**20)
    ap.add_argument("--gen-tokens", type=int, default=40)
    ap.add_argument("--reference-only", metavar="MODEL_DIR",
                    help="no training: write reference_tokens.json for the f16 model in MODEL_DIR")
    return ap.parse_args()


def log(msg):
    print(msg, flush=True)


def load_tokens(path, device):
    ids = np.fromfile(path, dtype="<u2").astype(np.int64)
    return torch.from_numpy(ids).to(device)


def bpe_decoder(path):
    """id -> bytes from the `base64 rank` lines of r50k_base.tiktoken (no tiktoken needed)."""
    import base64

    table = {}
    for line in Path(path).read_text().splitlines():
        if line:
            tok, rank = line.split()
            table[int(rank)] = base64.b64decode(tok)
    table[EOT] = b"<|endoftext|>"
    return lambda ids: b"".join(table[i] for i in ids).decode("utf-8", errors="replace")


def make_config(args, dropout):
    return GPT2Config(
        vocab_size=VOCAB,
        n_positions=args.n_positions,
        n_embd=args.n_embd,
        n_layer=args.n_layer,
        n_head=args.n_head,
        resid_pdrop=dropout,
        embd_pdrop=dropout,
        attn_pdrop=dropout,
        bos_token_id=EOT,
        eos_token_id=EOT,
        tie_word_embeddings=True,
    )


def f16_bytes(args):
    """Bytes of the shipped tensors in f16 (wte dominates: n_embd * 50257)."""
    c, L = args.n_embd, args.n_layer
    per_layer = 4 * c + (c * 3 * c + 3 * c) + (c * c + c) + (c * 4 * c + 4 * c) + (4 * c * c + c)
    params = VOCAB * c + args.n_positions * c + L * per_layer + 2 * c
    return params, 2 * params


@torch.no_grad()
def evaluate(model, val, block, batch, device, autocast):
    """Mean next-token cross entropy over all non-overlapping windows of the validation set."""
    was_training = model.training
    model.eval()
    n = (len(val) - 1) // block
    x_all = val[: n * block].view(n, block)
    y_all = val[1 : n * block + 1].view(n, block)
    total, count = 0.0, 0
    for i in range(0, n, batch):
        x, y = x_all[i : i + batch], y_all[i : i + batch]
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=autocast):
            logits = model(input_ids=x).logits
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, VOCAB), y.reshape(-1), reduction="sum")
        total += loss.item()
        count += y.numel()
    model.train(was_training)  # the reference decoding below must not run with dropout on
    return total / count


def train_run(args, run_idx, dropout, max_steps, budget, train, val, device):
    torch.manual_seed(args.seed)
    model = GPT2LMHeadModel(make_config(args, dropout)).to(device)
    model.train()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.95),
        fused=device.type == "cuda",
    )
    fwd = torch.compile(model) if args.compile else model
    gen = torch.Generator(device=device).manual_seed(args.seed + 1000 * run_idx)
    offsets = torch.arange(args.block, device=device)
    autocast = device.type == "cuda"

    curve, best = [], {"val_loss": float("inf"), "step": 0, "state": None}
    t0 = time.time()
    loss_sum, loss_n, step, stop = torch.zeros((), device=device), 0, 0, "max_steps"
    while step < max_steps:
        elapsed = time.time() - t0
        if elapsed >= budget:
            stop = "budget"
            break
        # Cosine over whichever ends first: the steps or the run's share of the budget.
        progress = max(step / max_steps, elapsed / budget)
        lr = args.lr * min(1.0, (step + 1) / args.warmup)
        lr *= args.min_lr_frac + (1 - args.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))
        for g in opt.param_groups:
            g["lr"] = lr
        start = torch.randint(0, len(train) - args.block - 1, (args.batch, 1), device=device, generator=gen)
        idx = start + offsets
        x, y = train[idx], train[idx + 1]
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=autocast):
            logits = fwd(input_ids=x).logits
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loss_sum += loss.detach()
        loss_n += 1
        step += 1
        out_of_time = time.time() - t0 >= budget
        if step % args.eval_every == 0 or step == max_steps or out_of_time:
            train_loss = loss_sum.item() / loss_n
            loss_sum.zero_()
            loss_n = 0
            val_loss = evaluate(model, val, args.block, 64, device, autocast)
            t = time.time() - t0
            curve.append({"step": step, "train_loss": round(train_loss, 4), "val_loss": round(val_loss, 4),
                          "lr": lr, "time_s": round(t, 2)})
            tok_s = step * args.batch * args.block / t
            log(f"run {run_idx} dropout {dropout} step {step:5d} lr {lr:.2e} train {train_loss:.4f} "
                f"val {val_loss:.4f} t {t:6.1f}s {tok_s / 1e6:.2f}M tok/s")
            if val_loss < best["val_loss"]:
                best = {"val_loss": val_loss, "step": step,
                        "state": {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}}
            elif step < max_steps and len(curve) - 1 - next(i for i, c in enumerate(curve) if c["step"] == best["step"]) >= args.patience:
                stop = "patience"
                break
    if best["state"] is None:
        raise SystemExit(f"run {run_idx} ended before its first evaluation")
    summary = {"run": run_idx, "dropout": dropout, "max_steps": max_steps, "budget_s": round(budget, 1),
               "steps": step, "stopped_by": stop, "time_s": round(time.time() - t0, 2),
               "best_val_loss": round(best["val_loss"], 4), "best_step": best["step"], "curve": curve}
    log(f"run {run_idx} done: {step} steps ({stop}), best val {best['val_loss']:.4f} at step {best['step']}")
    return summary, best["state"]


def save_f16(state, config, folder):
    """model.safetensors (f16, HF GPT-2 names, tied lm_head left out) and config.json."""
    tensors = {}
    for k, v in state.items():
        if k == "lm_head.weight" or k.endswith(".attn.bias") or k.endswith(".attn.masked_bias"):
            continue  # tied to wte / causal-mask buffers of older transformers
        tensors[k.removeprefix("transformer.")] = v.to(torch.float16).contiguous()
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    cfg = config.to_dict()
    cfg.update({"architectures": ["GPT2LMHeadModel"], "torch_dtype": "float16", "dtype": "float16",
                "_comment": "Small GPT-2 trained on Shakespeare (scripts/shakespeare); see README.md"})
    (folder / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    return tensors


@torch.no_grad()
def reference(folder, saved, prompts, decode, args, device, val):
    """Load the f16 file back with transformers, widen to f32, greedy-decode each prompt."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    model = GPT2LMHeadModel.from_pretrained(str(folder), attn_implementation="eager").float().to(device).eval()
    # Guard against a silently missed tensor: everything must be the saved f16 values.
    sd = model.state_dict()
    for k, v in saved.items():
        got = sd["transformer." + k]
        if not torch.equal(got.cpu(), v.float()):
            raise SystemExit(f"reloaded tensor differs: {k}")
    if not torch.equal(model.lm_head.weight, model.transformer.wte.weight):
        raise SystemExit("lm_head is not tied to wte after loading")
    val_loss = evaluate(model, val, args.block, 64, device, autocast=False)
    log(f"val loss of the saved f16 model in fp32: {val_loss:.4f}")
    if model.training:
        raise SystemExit("reference decoding must run in eval mode (dropout off)")
    out = []
    for p in prompts:
        ids = list(p["ids"])
        steps = []
        for _ in range(args.gen_tokens):
            logits = model(input_ids=torch.tensor([ids], device=device)).logits[0, -1]
            top = torch.topk(logits, 5)
            nxt = int(top.indices[0])
            steps.append({"argmax": nxt, "top5": top.indices.tolist(),
                          "top5_logits": [round(float(v), 5) for v in top.values]})
            ids.append(nxt)
        gen_ids = ids[len(p["ids"]):]
        text = decode(gen_ids)
        # The smallest gap between the best and second-best logit: how close a step came to a tie.
        margin = min(s["top5_logits"][0] - s["top5_logits"][1] for s in steps)
        out.append({"prompt": p["text"], "prompt_ids": p["ids"], "generated_ids": gen_ids,
                    "generated_text": text, "full_text": p["text"] + text,
                    "min_top1_top2_margin": round(margin, 5), "steps": steps})
        log(f"--- {p['text']!r} -> {gen_ids}\n{p['text'] + text}")
    # A sampled continuation (temperature 0.8, top-k 40, torch's RNG) for the README; the
    # engine's sampler uses its own RNG, so only the greedy tokens above are comparable.
    g = torch.Generator(device=device).manual_seed(args.seed)
    ids = list(prompts[0]["ids"])
    for _ in range(200):
        logits = model(input_ids=torch.tensor([ids[-args.n_positions:]], device=device)).logits[0, -1] / 0.8
        top = torch.topk(logits, 40)
        probs = torch.softmax(top.values, dim=-1)
        ids.append(int(top.indices[torch.multinomial(probs, 1, generator=g)]))
    sample = prompts[0]["text"] + decode(ids[len(prompts[0]["ids"]):])
    log(f"--- sampled (T 0.8, top-k 40):\n{sample}")
    return val_loss, out, sample


def write_reference(out, sha, env, args, val_loss, refs, sample):
    doc = {"model": "assets/models/shakespeare/model.safetensors", "sha256": sha,
           "how": "transformers GPT2LMHeadModel in eval mode, f16 file widened to f32, eager attention, no TF32, "
                  "greedy (argmax) decoding with full recomputation each step",
           **env, "val_loss_fp32": round(val_loss, 4), "tokens_per_prompt": args.gen_tokens, "prompts": refs,
           "sample_t0.8_topk40_seed": {"seed": args.seed, "text": sample}}
    (out / "reference_tokens.json").write_text(json.dumps(doc, indent=1) + "\n")


def main():
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    params, nbytes = f16_bytes(args)
    log(f"model: {args.n_layer} layers, {args.n_head} heads, n_embd {args.n_embd}, n_positions {args.n_positions}: "
        f"{params:,} parameters, f16 tensors {nbytes / 1e6:.2f} MB")
    if nbytes > args.max_bytes:
        raise SystemExit(f"f16 file would be {nbytes} bytes > {args.max_bytes}")
    if args.block > args.n_positions:
        raise SystemExit("--block exceeds --n-positions")
    gpu = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    log(f"torch {torch.__version__}, transformers {transformers.__version__}, device {gpu}")
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
    train, val = load_tokens(data / "train.bin", device), load_tokens(data / "val.bin", device)
    prompts = json.loads((data / "prompts.json").read_text())
    decode = bpe_decoder(data / "r50k_base.tiktoken")
    for p in prompts:
        if decode(p["ids"]) != p["text"]:
            raise SystemExit(f"prompt ids do not decode to {p['text']!r}")
    log(f"train {len(train):,} tokens, val {len(val):,} tokens")
    env = {"torch": torch.__version__, "transformers": transformers.__version__, "gpu": gpu,
           "cuda": torch.version.cuda}
    if args.reference_only:
        folder = Path(args.reference_only)
        saved = load_file(str(folder / "model.safetensors"))
        sha = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
        val_f16, refs, sample = reference(folder, saved, prompts, decode, args, device, val)
        write_reference(out, sha, env, args, val_f16, refs, sample)
        return

    runs = [(float(d), int(s)) for d, s in (r.split(":") for r in args.runs.split(","))]
    total_steps = sum(s for _, s in runs)
    t_start = time.time()
    summaries, best_state, best_run = [], None, None
    for i, (dropout, steps) in enumerate(runs):
        # A run gets its share of what is left, so time a fast run saves goes to the next ones.
        left = args.budget - (time.time() - t_start)
        if left <= 0:
            log(f"run {i} skipped: the budget is spent")
            continue
        share = left * steps / sum(s for _, s in runs[i:])
        summary, state = train_run(args, i, dropout, steps, share, train, val, device)
        summaries.append(summary)
        if best_run is None or summary["best_val_loss"] < summaries[best_run]["best_val_loss"]:
            best_state, best_run = state, i
    train_time = time.time() - t_start
    chosen = summaries[best_run]
    log(f"chosen: run {best_run} (dropout {chosen['dropout']}), val {chosen['best_val_loss']} at step "
        f"{chosen['best_step']}; training took {train_time:.1f}s")

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        saved = save_f16(best_state, make_config(args, chosen["dropout"]), folder)
        size = (folder / "model.safetensors").stat().st_size
        if size > args.max_bytes:
            raise SystemExit(f"model.safetensors is {size} bytes > {args.max_bytes}")
        val_f16, refs, sample = reference(folder, saved, prompts, decode, args, device, val)
        blob = (folder / "model.safetensors").read_bytes()
        sha = hashlib.sha256(blob).hexdigest()
        parts = [blob[i : i + args.part_bytes] for i in range(0, len(blob), args.part_bytes)]
        if len(parts) == 1:
            (out / "model.safetensors").write_bytes(blob)
        else:
            for i, part in enumerate(parts):
                (out / f"model.safetensors.part{i}").write_bytes(part)
        (out / "config.json").write_bytes((folder / "config.json").read_bytes())

    result = {
        "command": " ".join(sys.argv), "seed": args.seed, "settings": vars(args), "env": env,
        "parameters": params, "file_bytes": size, "sha256": sha, "parts": len(parts) if len(parts) > 1 else 0,
        "train_tokens": len(train), "val_tokens": len(val), "train_time_s": round(train_time, 1),
        "chosen_run": best_run, "best_val_loss_bf16": chosen["best_val_loss"],
        "val_loss_f16_weights_fp32": round(val_f16, 4), "runs": summaries,
    }
    (out / "train_log.json").write_text(json.dumps(result, indent=1) + "\n")
    write_reference(out, sha, env, args, val_f16, refs, sample)
    log(f"wrote {sorted(os.listdir(out))}; model {size:,} bytes sha256 {sha}")


if __name__ == "__main__":
    main()
