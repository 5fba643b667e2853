"""PyTorch's peers of the bench's gpt2_train suite: one GPT-2 training step (forward,
backward, Adam) in fp32 on the same shapes, eager and under torch.compile, and eager with the
forward under torch.autocast(bfloat16) (the mixed-precision peer, keys torch_autocast_*) and
under torch.autocast(float16) with a GradScaler (keys torch_autocast_f16_*), and torch.compile
under torch.autocast(bfloat16) (keys torch_compile_autocast_*).

The model is written out the way a PyTorch user writes GPT-2 (nanoGPT's layout): one fused
q/k/v projection, causal attention through F.scaled_dot_product_attention, GELU (tanh form),
pre-norm blocks, the output embedding tied to the token embedding, no dropout, cross-entropy
over every position. fp32 throughout, TF32 off (`set_float32_matmul_precision("highest")`),
as the engine's fp32 kernels. Adam is torch.optim.Adam (its default multi-tensor form).

Timing: the median wall time of whole steps after warm-up, each ended by reading the loss on
the host (the engine's step reads it too). Peak memory: torch.cuda.max_memory_allocated over
one step after the first (Adam's moments then exist), as the engine's pool peak bytes in use.

    python3 benches/gpt2_train_torch.py [--quick] [--out torch_train.json]
"""

import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c, h):
        super().__init__()
        self.h = h
        self.ln_1 = nn.LayerNorm(c, eps=1e-5)
        self.c_attn = nn.Linear(c, 3 * c)
        self.c_proj = nn.Linear(c, c)
        self.ln_2 = nn.LayerNorm(c, eps=1e-5)
        self.c_fc = nn.Linear(c, 4 * c)
        self.mlp_proj = nn.Linear(4 * c, c)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.h, c // self.h).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self, layers, c, h, vocab, positions):
        super().__init__()
        self.wte = nn.Embedding(vocab, c)
        self.wpe = nn.Embedding(positions, c)
        self.blocks = nn.ModuleList(Block(c, h) for _ in range(layers))
        self.ln_f = nn.LayerNorm(c, eps=1e-5)

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.ln_f(x) @ self.wte.weight.t()  # tied head
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def measure(model, opt, x, y, warmup, repeat, amp=None):
    # amp: the dtype of torch.autocast around the forward (the mixed-precision row), or None.
    def run(x, y):
        if amp is None:
            return model(x, y)
        with torch.autocast("cuda", dtype=amp):
            return model(x, y)

    # float16 needs a loss scale (its gradients underflow): torch.amp.GradScaler, as its docs use it.
    scaler = torch.amp.GradScaler("cuda") if amp == torch.float16 else None

    def step():
        loss = run(x, y)
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        opt.zero_grad(set_to_none=True)
        return loss.item()

    def forward():
        with torch.no_grad():
            return run(x, y).item()

    def forward_backward():
        loss = run(x, y)
        loss.backward()
        model.zero_grad(set_to_none=True)
        torch.cuda.synchronize()

    step()
    torch.cuda.synchronize()
    resident = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    step()
    peak = torch.cuda.max_memory_allocated()

    def median(f):
        for _ in range(warmup):
            f()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            f()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)

    # Device time of one step in all and in GEMM kernels, from the profiler over 3 steps.
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            step()
        torch.cuda.synchronize()
    busy = gemm = 0.0
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = getattr(e, "self_cuda_time_total", 0.0)
        if getattr(e, "device_type", None) is not None and str(e.device_type).endswith("CPU"):
            continue
        busy += us
        if any(k in e.key.lower() for k in ("gemm", "cutlass", "xmma", "matmul")):
            gemm += us
    losses = []
    fwd = median(forward)
    fwd_bwd = median(forward_backward)
    step_ms = median(lambda: losses.append(step()))
    return {
        "step_ms": step_ms,
        "forward_ms": fwd,
        "forward_backward_ms": fwd_bwd,
        "peak_mb": peak / 2**20,
        "resident_mb": resident / 2**20,
        "device_ms": busy / 3e3,
        "matmul_device_ms": gemm / 3e3,
        "losses": losses,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--no-compile", action="store_true")
    a = ap.parse_args()
    torch.set_float32_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    if a.quick:
        layers, c, h, vocab, positions, batch, t = 2, 32, 2, 50257, 128, 2, 32
    else:
        layers, c, h, vocab, positions, batch, t = 12, 768, 12, 50257, 1024, 8, 256
    dev = "cuda"
    x = torch.randint(0, vocab, (batch, t), device=dev)
    y = torch.randint(0, vocab, (batch, t), device=dev)
    figures = {}
    shape = f"{layers} layers, C {c}, batch {batch}, T {t}"
    print(f"# PyTorch {torch.__version__} on {torch.cuda.get_device_name()}: GPT-2 training step, {shape}, fp32, Adam")
    print("| mode | step ms | forward ms | forward+backward ms | peak MB | resident MB | device ms per step | of which GEMM ms |")
    print("|---|---|---|---|---|---|---|---|")
    # The mixed-precision peer: eager with the forward under torch.autocast(bfloat16), the
    # parameters and Adam in fp32 (no loss scaling: bf16 has fp32's range).
    modes = [("eager", False, None)] + ([] if a.no_compile else [("compile", True, None)])
    modes.append(("autocast_bf16", False, torch.bfloat16))
    # And under torch.autocast(float16) with a GradScaler: the peer of the engine's F16 mixed
    # step (gpt2_train_mixed_f16_step_ms), keys torch_autocast_f16_*.
    modes.append(("autocast_f16", False, torch.float16))
    # The strongest mixed-precision peer: torch.compile under autocast(bfloat16) (the eager
    # autocast step is bound by the host), keys torch_compile_autocast_*.
    if not a.no_compile:
        modes.append(("compile_autocast_bf16", True, torch.bfloat16))
    for name, compiled, amp in modes:
        torch.manual_seed(1)
        model = Gpt2(layers, c, h, vocab, positions).to(dev)
        for p in model.parameters():  # GPT-2's initialisation scale (the bench draws its own)
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
        run = torch.compile(model) if compiled else model
        torch.cuda.empty_cache()
        start = time.perf_counter()
        r = measure(run, opt, x, y, warmup=3, repeat=10, amp=amp)
        total = time.perf_counter() - start
        print(
            f"| {name} | {r['step_ms']:.2f} | {r['forward_ms']:.2f} | {r['forward_backward_ms']:.2f} "
            f"| {r['peak_mb']:.0f} | {r['resident_mb']:.0f} | {r['device_ms']:.2f} | {r['matmul_device_ms']:.2f} |"
        )
        print(f"  {name}: losses {[round(l, 4) for l in r['losses']]}, {total:.1f} s with warm-up and compile")
        key = {
            "eager": "torch_gpt2_train",
            "compile": "torch_compile_gpt2_train",
            "autocast_bf16": "torch_autocast_gpt2_train",
            "autocast_f16": "torch_autocast_f16_gpt2_train",
            "compile_autocast_bf16": "torch_compile_autocast_gpt2_train",
        }[name]
        for k in ("step_ms", "forward_ms", "forward_backward_ms", "peak_mb", "resident_mb", "device_ms", "matmul_device_ms"):
            figures[f"{key}_{k}"] = r[k]
        figures["torch_gpt2_train_params"] = sum(p.numel() for p in model.parameters())
        del model, opt, run
        torch.cuda.empty_cache()
    if a.out:
        with open(a.out, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
