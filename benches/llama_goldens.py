"""Goldens for a Llama-style decoder (issue #46): a small LlamaForCausalLM with seeded random
weights (RMSNorm, rotary embeddings, SwiGLU, grouped-query attention, an untied head), saved as
Hugging Face saves it (config.json, model.safetensors, f32), with the logits of every position
of a prompt and the greedy continuation, computed by transformers on the CPU in float64 and
stored as float32.

    python3 benches/llama_goldens.py --out assets/models/llama-tiny-random

Runs where transformers is (the device machine); the files are small enough to commit.
"""
import argparse
import json
import os

import torch
from transformers import LlamaConfig, LlamaForCausalLM

SEED = 46
PROMPT = [1, 17, 42, 5, 88, 23, 61, 9, 70, 33, 2, 94]
NEW_TOKENS = 16


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="assets/models/llama-tiny-random")
    args = p.parse_args()
    torch.manual_seed(SEED)
    config = LlamaConfig(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=176,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        rms_norm_eps=1e-5,
        rope_theta=10000.0,
        tie_word_embeddings=False,
        attention_bias=False,
        mlp_bias=False,
        # Wider than the default 0.02 so that the logits differ at the scale a test can see.
        initializer_range=0.2,
        bos_token_id=1,
        eos_token_id=2,
        torch_dtype="float32",
    )
    model = LlamaForCausalLM(config).to(torch.float32).eval()
    # Non-trivial norm weights (their init is ones).
    with torch.no_grad():
        for name, t in model.named_parameters():
            if name.endswith("norm.weight"):
                t.copy_(1.0 + 0.1 * torch.randn_like(t))
    os.makedirs(args.out, exist_ok=True)
    model.save_pretrained(args.out, safe_serialization=True)
    wide = model.to(torch.float64)
    ids = torch.tensor([PROMPT])
    with torch.no_grad():
        logits = wide(ids).logits[0]  # (T, V)
        out = wide.generate(
            ids,
            max_new_tokens=NEW_TOKENS,
            do_sample=False,
            eos_token_id=None,
            pad_token_id=0,
            use_cache=True,
        )
    greedy = out[0, len(PROMPT):].tolist()
    goldens = {
        "what": "LlamaForCausalLM, seeded random weights; logits (T, V) of the prompt in float64 "
        "rounded to float32, and the greedy continuation with the KV cache",
        "seed": SEED,
        "transformers": __import__("transformers").__version__,
        "torch": torch.__version__,
        "prompt": PROMPT,
        "logits_shape": list(logits.shape),
        "logits": [float(v) for v in logits.to(torch.float32).flatten().tolist()],
        "greedy": greedy,
    }
    with open(os.path.join(args.out, "goldens.json"), "w") as f:
        json.dump(goldens, f)
    print(json.dumps({k: v for k, v in goldens.items() if k != "logits"}, indent=1))
    print("files:", sorted(os.listdir(args.out)))


if __name__ == "__main__":
    main()
