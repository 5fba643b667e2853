"""Peer figures for the engine's mixer benchmark (`dev/src/bin/bench.rs --only mixers`): the same
four mixer layers in eager PyTorch on the same GPU, with autograd for the backward.

Each layer is pre = x W_in + b_in -> gates -> the seed's eager scan -> h W_out, with the math of
`wgsl_compute::mixer::MixerKind`: MinGRU through cumsum + logcumsumexp, SignedMinGRU through a
Hillis-Steele linear scan, RotationMinGRU / GivensMinGRU by materialising every step's
lambda * (product of Givens rotations) and a Hillis-Steele matrix scan (the generic path the
seed measured at 395.09 MB for the Givens backward at B=128, T=64, d=64, k=8).

With --train, also times whole training steps of the character model of
`examples/train_mingru.rs` (one-hot embedding, residual mixer layers, linear head,
cross-entropy, Adam; the loss read back every step as the example does) in eager PyTorch.

Reports per mixer: layer fwd+bwd time (median of CUDA-event timed runs) and the peak
`torch.cuda.max_memory_allocated` over one fwd+bwd with only the inputs, dy and weights
allocated before (their bytes are printed too). A self-check first compares each eager layer
with a float64 step-by-step loop of the same math.

    python3 benches/mixers_torch.py [--batch 128] [--seq 64] [--train]
"""

import argparse
import math
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from torch_reference import affine_scan, linear_scan, median_ms  # noqa: E402

F = torch.nn.functional


def g_log(v):
    # log of minGRU's g(v) = v + 0.5 (v >= 0), sigmoid(v) (v < 0)
    return torch.where(v >= 0, torch.log(F.relu(v) + 0.5), -F.softplus(-v))


def givens(theta, k):
    # theta (..., k-1) -> G = R_{k-2} ... R_0 (..., k, k), R_j turning coordinates (j, j+1)
    eye = torch.eye(k, device=theta.device, dtype=theta.dtype)
    G = eye.expand(*theta.shape[:-1], k, k)
    for j in range(k - 1):
        c, s = torch.cos(theta[..., j]), torch.sin(theta[..., j])
        R = eye.expand(*theta.shape[:-1], k, k).clone()
        R[..., j, j], R[..., j, j + 1] = c, -s
        R[..., j + 1, j], R[..., j + 1, j + 1] = s, c
        G = R @ G
    return G


def mixer_scan(kind, k, pre):
    B, T, two_d = pre.shape
    d = two_d // 2
    if kind == "mingru":
        kz, v = pre[..., :d], pre[..., d:]
        log_coeffs = -F.softplus(kz)
        log_values = -F.softplus(-kz) + g_log(v)
        a_star = torch.cumsum(log_coeffs, dim=1)
        return torch.exp(a_star + torch.logcumsumexp(log_values - a_star, dim=1))
    if kind == "signed":
        a = torch.tanh(pre[..., :d])
        return linear_scan(a, (1 - a * a) * pre[..., d:], torch.zeros(B, d, device=pre.device, dtype=pre.dtype))
    n = d // k
    lam = torch.sigmoid(pre[..., d:d + n])
    theta = pre[..., d + n:].reshape(B, T, n, k - 1)
    A = lam[..., None, None] * givens(theta, k)
    b = ((1 - lam[..., None]) * pre[..., :d].reshape(B, T, n, k))[..., None]
    return affine_scan(A, b).reshape(B, T, d)


def mixer_scan_loop(kind, k, pre):
    # float64 step-by-step reference of the same math, for the self-check
    B, T, two_d = pre.shape
    d = two_d // 2
    h = torch.zeros(B, d, dtype=pre.dtype, device=pre.device)
    out = []
    for t in range(T):
        p = pre[:, t]
        if kind == "mingru":
            z = torch.sigmoid(p[:, :d])
            h = (1 - z) * h + z * torch.exp(g_log(p[:, d:]))
        elif kind == "signed":
            a = torch.tanh(p[:, :d])
            h = a * h + (1 - a * a) * p[:, d:]
        else:
            n = d // k
            lam = torch.sigmoid(p[:, d:d + n])
            G = givens(p[:, d + n:].reshape(B, n, k - 1), k)
            hb = (G @ h.reshape(B, n, k, 1))[..., 0]
            h = (lam[..., None] * hb + (1 - lam[..., None]) * p[:, :d].reshape(B, n, k)).reshape(B, d)
        out.append(h)
    return torch.stack(out, dim=1)


def layer(kind, k, x, w_in, b_in, w_out):
    return mixer_scan(kind, k, x @ w_in + b_in) @ w_out


def train_steps_per_s(kind, k, layers, d, batch, seq, steps, dev, vocab=63):
    """Steps per second of the train_mingru model in eager PyTorch (random character data)."""
    g = torch.Generator(device="cpu").manual_seed(0)
    embed = (torch.rand(vocab, d, generator=g) * 2 - 1).to(dev).requires_grad_()
    params = [embed]
    layer_params = []
    for _ in range(layers):
        w_in = ((torch.rand(d, 2 * d, generator=g) * 2 - 1) / math.sqrt(d)).to(dev).requires_grad_()
        b_in = torch.zeros(2 * d, device=dev, requires_grad=True)
        w_out = ((torch.rand(d, d, generator=g) * 2 - 1) / math.sqrt(d)).to(dev).requires_grad_()
        layer_params.append((w_in, b_in, w_out))
        params += [w_in, b_in, w_out]
    head = ((torch.rand(d, vocab, generator=g) * 2 - 1) / math.sqrt(d)).to(dev).requires_grad_()
    head_b = torch.zeros(vocab, device=dev, requires_grad=True)
    params += [head, head_b]
    opt = torch.optim.Adam(params, lr=3e-3)
    text = torch.randint(0, vocab, (400_000,), generator=g)

    def step():
        starts = torch.randint(0, len(text) - seq - 1, (batch,))
        rows = torch.stack([text[s:s + seq + 1] for s in starts]).to(dev)
        x = embed[rows[:, :-1]]
        for w_in, b_in, w_out in layer_params:
            x = x + layer(kind, k, x, w_in, b_in, w_out)
        loss = F.cross_entropy((x @ head + head_b).reshape(-1, vocab), rows[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        step()
    end.record()
    end.synchronize()
    return steps / (start.elapsed_time(end) / 1000)


CASES = [("mingru", 1, "MinGRU"), ("signed", 1, "SignedMinGRU"), ("rotation", 2, "RotationMinGRU"),
         ("givens", 8, "GivensMinGRU(k=8)")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--train", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("mixers_torch.py measures a CUDA GPU; torch.cuda.is_available() is False")
    dev = "cuda"
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"# eager PyTorch mixers on {torch.cuda.get_device_name()} (torch {torch.__version__})")

    for kind, k, name in CASES:
        pre = torch.randn(3, 9, 16, dtype=torch.float64, device=dev)
        err = (mixer_scan(kind, k, pre) - mixer_scan_loop(kind, k, pre)).abs().max().item()
        assert err < 1e-9, f"{name}: eager scan vs loop {err}"
    print("self-check: every eager mixer scan equals the float64 step loop (< 1e-9)")

    B, T, d = args.batch, args.seq, args.d
    dm = d
    print(f"\n| mixer | layer fwd+bwd ms | layer fwd+bwd peak MB | of which inputs + weights MB |")
    print("|---|---|---|---|")
    for kind, k, name in CASES:
        def fresh():
            x = torch.randn(B, T, dm, device=dev, requires_grad=True)
            w_in = (torch.rand(dm, 2 * d, device=dev) * 2 - 1) / math.sqrt(dm)
            w_out = (torch.rand(d, dm, device=dev) * 2 - 1) / math.sqrt(d)
            b_in = torch.zeros(2 * d, device=dev)
            params = [p.requires_grad_() for p in (w_in, b_in, w_out)]
            return [x, *params, torch.randn(B, T, dm, device=dev)]

        def step(x, w_in, b_in, w_out, dy):
            y = layer(kind, k, x, w_in, b_in, w_out)
            torch.autograd.backward(y, dy)
            for t in (x, w_in, b_in, w_out):
                t.grad = None

        sets = [fresh() for _ in range(3)]
        ms = median_ms(step, sets, warmup=3, repeat=10)
        del sets
        inputs = fresh()
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step(*inputs)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        print(f"| {name} | {ms:.4f} | {peak / 1e6:.2f} | {base / 1e6:.2f} |")
        del inputs
        torch.cuda.empty_cache()

    if args.train:
        print("\n| training step (train_mingru's model) | eager steps/s |")
        print("|---|---|")
        for kind, k, name, layers, d, batch, seq in [
            ("mingru", 1, "MinGRU, 2 layers, d 64, 32 x 64", 2, 64, 32, 64),
            ("givens", 8, "GivensMinGRU(k=8), 2 layers, d 128, 64 x 128", 2, 128, 64, 128),
        ]:
            print(f"| {name} | {train_steps_per_s(kind, k, layers, d, batch, seq, 200, dev):.1f} |")


if __name__ == "__main__":
    main()
