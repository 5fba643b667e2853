"""Peer timings on the same GPU as the engine's benchmark (dev/src/bin/bench.rs).

The scan cases are the eager reference the scan seed describes: pure-PyTorch Hillis-Steele
associative scans for linear_scan, matrix_scan and matrix_affine_scan, and the minGRU
cumsum + logcumsumexp form for parallel_scan_log, with autograd for the backward. Matmul is
cuBLAS fp32 with TF32 off. GPT-2 is Hugging Face transformers' GPT2LMHeadModel (fp32, random
weights, use_cache=True): prefill of 64 tokens and per-token decode with the cache.

Each case: inputs drawn at random, ROTATE sets of them cycled so caches do not flatter, warm-up,
then the median of REPEAT timed runs with CUDA events. Prints a markdown table and writes JSON.
The copy case is torch clone of 512 MiB (torch_copy_gbps, bytes read + written per second),
the peer of the engine's copy ceiling.

    python3 benches/torch_reference.py [--out results.json] [--quick]
"""

import argparse
import json
import math
import statistics
import time

import torch

ROTATE = 3


def median_ms(fn, inputs, warmup=3, repeat=20):
    for i in range(warmup):
        fn(*inputs[i % len(inputs)])
    torch.cuda.synchronize()
    times = []
    for i in range(repeat):
        args = inputs[i % len(inputs)]
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


# ---- eager scans (Hillis-Steele over T, dim 1) -------------------------------------------

def linear_scan(a, b, h0):
    # h_t = a_t * h_{t-1} + b_t ; compose (A, B) pairs with doubling offsets.
    A, B = a, b
    T = a.shape[1]
    off = 1
    while off < T:
        A_prev = torch.nn.functional.pad(A[:, :-off], (0, 0, off, 0), value=1.0)
        B_prev = torch.nn.functional.pad(B[:, :-off], (0, 0, off, 0), value=0.0)
        B = A * B_prev + B
        A = A * A_prev
        off *= 2
    return A * h0[:, None] + B


def parallel_scan_log(log_coeffs, log_values):
    a_star = torch.nn.functional.pad(torch.cumsum(log_coeffs, dim=1), (0, 0, 1, 0))
    log_h0_plus_b_star = torch.logcumsumexp(log_values - a_star, dim=1)
    return torch.exp(a_star + log_h0_plus_b_star)[:, 1:]


def affine_scan(A, B):
    # A (Bt, T, N, k, k), B (Bt, T, N, k, v): H_t = A_t H_{t-1} + B_t, H_0 = 0.
    T = A.shape[1]
    k = A.shape[-1]
    eye = torch.eye(k, device=A.device, dtype=A.dtype)
    off = 1
    while off < T:
        A_prev = torch.cat([eye.expand(A.shape[0], off, A.shape[2], k, k), A[:, :-off]], dim=1)
        B_prev = torch.cat([torch.zeros_like(B[:, :off]), B[:, :-off]], dim=1)
        B = A @ B_prev + B
        A = A @ A_prev
        off *= 2
    return B


def matrix_scan(A, b):
    return affine_scan(A, b[..., None])[..., 0]


def scan_cases(quick, fewlanes=False):
    lab, long_t = (128, 64), (16, 1024)
    cases = []
    for label, (Bt, T) in [("lab", lab), ("long-T", long_t)]:
        cases += [
            ("linear_scan", label, dict(B=Bt, T=T, D=256)),
            ("parallel_scan_log", label, dict(B=Bt, T=T, D=256)),
            ("matrix_scan", label, dict(B=Bt, T=T, N=64)),
            ("matrix_affine_scan", label, dict(B=Bt, T=T, N=32, k=8, v=8)),
        ]
    if not quick:
        cases += [
            ("linear_scan", "large", dict(B=16, T=4096, D=4096)),
            ("parallel_scan_log", "large", dict(B=16, T=4096, D=4096)),
            ("matrix_scan", "large", dict(B=16, T=4096, N=1024)),
            ("matrix_affine_scan", "large", dict(B=8, T=1024, N=256, k=8, v=8)),
        ]
    if fewlanes and not quick:
        # few lanes, very long sequences: 64 channels, T = 2^22 (1 GiB an input)
        cases += [
            ("linear_scan", "fewlanes", dict(B=1, T=1 << 22, D=64)),
            ("parallel_scan_log", "fewlanes", dict(B=1, T=1 << 22, D=64)),
        ]
    return cases


def make_scan_inputs(op, s, dev):
    g = lambda *shape: torch.randn(*shape, device=dev)
    if op == "linear_scan":
        return [torch.sigmoid(g(s["B"], s["T"], s["D"])), g(s["B"], s["T"], s["D"]), g(s["B"], s["D"])]
    if op == "parallel_scan_log":
        return [-torch.nn.functional.softplus(g(s["B"], s["T"], s["D"])), g(s["B"], s["T"] + 1, s["D"])]
    if op == "matrix_scan":
        return [0.5 * g(s["B"], s["T"], s["N"], 2, 2), g(s["B"], s["T"], s["N"], 2)]
    k, v = s["k"], s["v"]
    return [g(s["B"], s["T"], s["N"], k, k) / (2 * math.sqrt(k)), g(s["B"], s["T"], s["N"], k, v)]


SCAN_FN = dict(linear_scan=linear_scan, parallel_scan_log=parallel_scan_log, matrix_scan=matrix_scan,
               matrix_affine_scan=affine_scan)


def scan_bytes(op, s):
    """Fewest bytes a forward must move: every input read once, the output written once."""
    if op == "linear_scan":
        return 4 * (3 * s["B"] * s["T"] * s["D"] + s["B"] * s["D"])
    if op == "parallel_scan_log":
        return 4 * (s["B"] * s["T"] * s["D"] + 2 * s["B"] * (s["T"] + 1) * s["D"])
    if op == "matrix_scan":
        return 4 * s["B"] * s["T"] * s["N"] * (4 + 2 + 2)
    k, v = s["k"], s["v"]
    return 4 * s["B"] * s["T"] * s["N"] * (k * k + 2 * k * v)


def run_scans(quick, dev, rows, only_cases=None):
    for op, label, s in scan_cases(quick):
        if only_cases and not any(c in f"{op} {label}" for c in only_cases.split(",")):
            continue
        fn = SCAN_FN[op]
        sets = [make_scan_inputs(op, s, dev) for _ in range(ROTATE)]
        try:
            # The large cases take seconds per run in eager PyTorch: fewer repeats.
            warm, rep = (1, 3) if label == "large" else (3, 20)
            with torch.no_grad():
                fwd = median_ms(fn, sets, warmup=warm, repeat=rep)
            grad_sets = []
            for inp in sets:
                leaf = [x.clone().requires_grad_(True) for x in inp]
                grad_sets.append(leaf)

            def fwd_bwd(*leaf):
                out = fn(*leaf)
                out.backward(torch.ones_like(out))

            fb = median_ms(fwd_bwd, grad_sets, warmup=min(warm, 2), repeat=min(rep, 10))
        except torch.OutOfMemoryError:
            fwd, fb = float("nan"), float("nan")
        torch.cuda.empty_cache()
        rows.append(dict(case=f"{op} {label}", shape=s, fwd_ms=fwd, fwd_bwd_ms=fb,
                         fwd_gbps=scan_bytes(op, s) / fwd / 1e6))
        print(f"| {op} {label} | {s} | {fwd:.3f} | {fb:.3f} |", flush=True)


def run_copy(dev, rows):
    # The peer of the engine's copy ceiling (dev/src/bin/bench.rs): torch clone of the same
    # 512 MiB, bytes read + written per second. Warm-up first: clocks idle low.
    n = 1 << 27
    x = torch.full((n,), 1.5, device=dev)
    ms = median_ms(torch.clone, [(x,)], warmup=10, repeat=20)
    gbps = 8 * n / ms / 1e6
    rows.append(dict(case="copy (torch clone)", n=n, ms=ms, gbps=gbps))
    print(f"| copy (torch clone) | [{n}] | {ms:.4f} ms | {gbps:.0f} GB/s |", flush=True)


def run_matmul(dev, rows):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for n in (1024, 2048, 4096):
        sets = [(torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)) for _ in range(ROTATE)]
        ms = median_ms(torch.matmul, sets, warmup=3, repeat=20)
        tflops = 2 * n**3 / ms / 1e9
        rows.append(dict(case=f"matmul fp32 {n}", n=n, ms=ms, tflops=tflops))
        print(f"| matmul fp32 {n} | {ms:.3f} ms | {tflops:.2f} TFLOP/s |", flush=True)
    # fp16 inputs (cuBLAS accumulates fp16 GEMMs in fp32 by default): the peer of the engine's
    # f16 matmul.
    for n in (4096,):
        sets = [(torch.randn(n, n, device=dev, dtype=torch.float16), torch.randn(n, n, device=dev, dtype=torch.float16))
                for _ in range(ROTATE)]
        ms = median_ms(torch.matmul, sets, warmup=3, repeat=20)
        tflops = 2 * n**3 / ms / 1e9
        rows.append(dict(case=f"matmul f16 {n}", n=n, ms=ms, tflops=tflops))
        print(f"| matmul f16 {n} | {ms:.3f} ms | {tflops:.2f} TFLOP/s |", flush=True)


def run_gpt2(dev, rows):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config()).to(dev).eval()
    ids = [torch.randint(0, 50257, (1, 64), device=dev) for _ in range(ROTATE)]
    with torch.no_grad():
        prefill = median_ms(lambda x: model(x, use_cache=True), [(x,) for x in ids], warmup=3, repeat=20)
        # Decode: one token per step against a cache that grows from 64 positions.
        out = model(ids[0], use_cache=True)
        past = out.past_key_values
        tok = out.logits[:, -1:].argmax(-1)
        steps = []
        for i in range(64):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = model(tok, past_key_values=past, use_cache=True)
            past = out.past_key_values
            tok = out.logits[:, -1:].argmax(-1)
            torch.cuda.synchronize()
            steps.append((time.perf_counter() - t0) * 1e3)
        decode = statistics.median(steps[8:])
    rows.append(dict(case="gpt2-124M prefill 64", ms=prefill))
    rows.append(dict(case="gpt2-124M decode (per token, cache)", ms=decode, tokens_per_s=1e3 / decode))
    print(f"| gpt2 prefill 64 | {prefill:.3f} ms |", flush=True)
    print(f"| gpt2 decode / token | {decode:.3f} ms | {1e3 / decode:.1f} tok/s |", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default="copy,scans,matmul,gpt2")
    p.add_argument("--cases", default=None, help="comma-separated substrings of the scan cases to run")
    args = p.parse_args()
    dev = "cuda"
    torch.manual_seed(1234)
    meta = dict(torch=torch.__version__, gpu=torch.cuda.get_device_name(0), date=time.strftime("%Y-%m-%d"))
    print(f"# torch {meta['torch']} on {meta['gpu']}", flush=True)
    rows = []
    if "copy" in args.only:
        run_copy(dev, rows)
    if "scans" in args.only:
        print("| scan | shape | fwd ms | fwd+bwd ms |\n|---|---|---|---|", flush=True)
        run_scans(args.quick, dev, rows, args.cases)
    if "matmul" in args.only:
        run_matmul(dev, rows)
    if "gpt2" in args.only:
        run_gpt2(dev, rows)
    # Flat figures under the keys of docs/src/benchmarks.md (merged into benches/results/h200.json).
    figures = {}
    for r in rows:
        case = r.get("case", "")
        if case == "gpt2-124M prefill 64":
            figures["transformers_prefill64_ms"] = r["ms"]
        elif case.startswith("gpt2-124M decode"):
            figures["transformers_decode_ms"] = r["ms"]
        elif case == "copy (torch clone)":
            figures["torch_copy_gbps"] = r["gbps"]
        elif case.startswith("matmul f16") and "tflops" in r:
            figures[f"torch_f16_{r['n']}_tflops"] = r["tflops"]
        elif case.startswith("matmul") and "tflops" in r:
            figures[f"cublas_{r['n']}_tflops"] = r["tflops"]
        elif case.split(" ")[0] in ("linear_scan", "parallel_scan_log", "matrix_scan", "matrix_affine_scan"):
            op, label = case.split(" ", 1)
            label = {"long-T": "longT"}.get(label, label)
            figures[f"eager_{op}_{label}_fwd_ms"] = r["fwd_ms"]
            if r.get("fwd_bwd_ms") is not None:
                figures[f"eager_{op}_{label}_fwdbwd_ms"] = r["fwd_bwd_ms"]
    print(json.dumps(figures), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(meta=meta, rows=rows, **figures), f, indent=1)


if __name__ == "__main__":
    main()
