"""GPT-2 decode the way a PyTorch user after speed runs it (gpt-fast style): a static KV cache and
CUDA graphs, on the same GPU as the engine's bench and under its protocol.

    python3 benches/gpt2_cuda_graph.py [--models 124M,355M,774M,1.5B] [--out peer.json]
                                       [--quick] [--check-all] [--no-check] [--device cpu]

Protocol (dev/src/bin/bench.rs): a 64-token prompt, then 256 new tokens, greedy, the argmax taken on
the device, no host sync per token. GPT-2's forward is written here in plain torch ops from the
state_dict of transformers' GPT2LMHeadModel: ln_1, the fused c_attn QKV (HF's Conv1D, x @ W + b
with W (C, 3C), as torch.addmm like HF), causal attention, c_proj, ln_2, c_fc, gelu tanh
approximation (F.gelu(approximate="tanh"): one kernel where HF's "gelu_new" spells the same
formula in eight elementwise ops), c_proj, ln_f, and the lm head tied to wte.

The cache is one preallocated tensor (n_layer, 2, n_head, MAX_POS, head_dim), MAX_POS = 64 + 256
rounded up to 64. The ids live in one static device tensor `seq` (the token at each position)
and the position in another (`pos`). Prefill reads seq[:64], writes the cache's positions 0..63
(attention causal among the 64), writes its argmax into seq[64] and sets pos to 64. A decode step
reads seq[pos], writes the cache at pos (index_copy_), attends with scaled_dot_product_attention
over the whole static cache with positions > pos masked, writes its argmax into seq[pos + 1] and
increments pos, all on the device. Each is captured once in its own torch.cuda.CUDAGraph after a
warm-up on a side stream (as PyTorch's docs ask); 256 new tokens are one prefill replay and 256
decode replays (257 ids, seq[64:321], as the engine's generate(prompt, 1 + 256)), one
synchronize at the end.

Timing: CUDA events around the 256 decode replays (ms per token = total / 256; the median of 3
generations after an untimed one) and around one prefill replay (median of 20). For reference,
the same decode step run eagerly, op by op (median of 30 steps, fp32 only). fp32 runs with TF32
off; fp16 holds every weight, the cache and the activations in half, as model.half() would.

Weight-bytes floor: every parameter (wte once: it is tied) in the dtype, divided by the device
copy rate, where the copy rate counts bytes read + written per second of a 1 GiB
dst.copy_(src) (the convention of benches/results/h200.md: 498 MB of fp32 weights at 4016
GB/s = 0.124 ms): the time to stream the weights once at the copy's bytes-moved rate, a floor
by that convention (a pass that only reads may run somewhat faster than a copy's read + write).

Correctness: the greedy ids are compared with transformers' GPT2LMHeadModel.generate
(max_new_tokens=256, do_sample=False, use_cache=True) holding the same random weights (default
init under a fixed seed; eos_token_id=None so that generate never stops early), on 124M unless
--check-all, in fp32 and in fp16 (that model .half()). Summation orders differ, so at the first
differing step the table gives transformers' margin between its choice and ours there: a tiny
one is a near tie. An fp32 mismatch exits 1 (after the table and the JSON); an fp16 one does not,
since half activations flip near ties. --no-check skips the comparison.

--device cpu runs the same static-cache forward eagerly, without graphs (the timings are wall
clock), to test the logic on a machine without a GPU; --quick is 124M with 32 new tokens.

Prints a markdown table and, with --out, writes a flat JSON dict of numbers: torch_graph_copy_gbps, and
per model torch_graph_decode{_f16}{tag}_ms, torch_graph_prefill64{_f16}{tag}_ms,
torch_eager_static_decode{tag}_ms, gpt2{tag}_weight_bytes_floor{_f16}_ms and, where checked,
torch_graph_ids_match{_f16}{tag} (1/0; where 0, also torch_graph_ids_first_diff{_f16}{tag} and
torch_graph_ids_margin{_f16}{tag}), with tag "" for 124M and _355m, _774m, _1558m for the others.
"""

import argparse
import json
import statistics
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

F = torch.nn.functional
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

PROMPT = 64
LAYER = ("ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj")
# name: (n_layer, n_embd, n_head, key tag)
MODELS = {
    "124M": (12, 768, 12, ""),
    "355M": (24, 1024, 16, "_355m"),
    "774M": (36, 1280, 20, "_774m"),
    "1.5B": (48, 1600, 25, "_1558m"),
}


def timed_ms(fn, dev):
    """One call of fn: CUDA events on a GPU, wall clock elsewhere."""
    if dev.type != "cuda":
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def copy_gbps(dev):
    """Device-to-device copy of 1 GiB, bytes read + written per second (median of 10)."""
    src = torch.full((1 << 28,), 1.5, device=dev)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    ms = statistics.median(timed_ms(lambda: dst.copy_(src), dev) for _ in range(10))
    return 2 * src.numel() * src.element_size() / ms / 1e6


def hf_model(n_layer, n_embd, n_head, dev):
    """transformers' GPT-2 of that shape with its default init under a fixed seed, built on the
    device (the init of the big ones is slow on a CPU)."""
    config = GPT2Config(n_layer=n_layer, n_embd=n_embd, n_head=n_head, eos_token_id=None, bos_token_id=None)
    torch.manual_seed(0)
    with dev:
        return GPT2LMHeadModel(config).eval()


class StaticGpt2:
    """GPT-2's forward in plain torch ops over a static KV cache, ids and position on the device."""

    def __init__(self, state, n_layer, n_head, new_tokens, dtype, dev):
        names = ["wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias"] + [
            f"h.{i}.{m}.{p}" for i in range(n_layer) for m in LAYER for p in ("weight", "bias")]
        self.w = {n: state["transformer." + n].to(dtype).contiguous() for n in names}
        self.n_layer, self.n_head = n_layer, n_head
        self.C = self.w["wte.weight"].shape[1]
        max_pos = -(-(PROMPT + new_tokens) // 64) * 64
        self.cache = torch.zeros(n_layer, 2, n_head, max_pos, self.C // n_head, dtype=dtype, device=dev)
        self.seq = torch.zeros(max_pos + 1, dtype=torch.long, device=dev)
        self.pos = torch.zeros(1, dtype=torch.long, device=dev)
        self.positions = torch.arange(max_pos, device=dev).view(1, 1, 1, max_pos)  # an attn_mask shape

    def weight_bytes(self):
        return sum(t.numel() * t.element_size() for t in self.w.values())

    def ln(self, x, name):
        return F.layer_norm(x, (self.C,), self.w[name + ".weight"], self.w[name + ".bias"], 1e-5)

    def linear(self, x, name):
        return torch.addmm(self.w[name + ".bias"], x, self.w[name + ".weight"])

    def block(self, i, x, attend):
        """x (T, C); attend(i, q, k, v) with each (1, n_head, T, head_dim) -> the same shape."""
        T, h = x.shape[0], f"h.{i}."
        qkv = self.linear(self.ln(x, h + "ln_1"), h + "attn.c_attn")
        q, k, v = qkv.view(T, 3, self.n_head, -1).permute(1, 2, 0, 3).unsqueeze(1)
        y = attend(i, q, k, v)[0].transpose(0, 1).reshape(T, self.C)
        x = x + self.linear(y, h + "attn.c_proj")
        m = F.gelu(self.linear(self.ln(x, h + "ln_2"), h + "mlp.c_fc"), approximate="tanh")
        return x + self.linear(m, h + "mlp.c_proj")

    def head(self, x):
        """The argmax id of the last row of x (T, C)."""
        return F.linear(self.ln(x[-1:], "ln_f"), self.w["wte.weight"]).argmax(-1)

    def prefill(self):
        def attend(i, q, k, v):
            self.cache[i, 0, :, :PROMPT].copy_(k[0])
            self.cache[i, 1, :, :PROMPT].copy_(v[0])
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

        x = F.embedding(self.seq[:PROMPT], self.w["wte.weight"]) + self.w["wpe.weight"][:PROMPT]
        for i in range(self.n_layer):
            x = self.block(i, x, attend)
        self.seq[PROMPT:PROMPT + 1].copy_(self.head(x))
        self.pos.fill_(PROMPT)

    def decode(self):
        mask = self.positions <= self.pos

        def attend(i, q, k, v):
            self.cache[i, 0].index_copy_(1, self.pos, k[0])
            self.cache[i, 1].index_copy_(1, self.pos, v[0])
            return F.scaled_dot_product_attention(q, self.cache[i, 0][None], self.cache[i, 1][None], attn_mask=mask)

        tok = self.seq.index_select(0, self.pos)
        x = F.embedding(tok, self.w["wte.weight"]) + F.embedding(self.pos, self.w["wpe.weight"])
        for i in range(self.n_layer):
            x = self.block(i, x, attend)
        self.seq.index_copy_(0, self.pos + 1, self.head(x))
        self.pos.add_(1)


def graph(fn):
    """fn captured in a CUDA graph after three warm-up calls on a side stream; returns its replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def run(model, prompt, new_tokens, dev):
    """Prefill and decode replays (graphs on a GPU, eager ops elsewhere): the new ids, the
    decode ms per token, the prefill ms."""
    prefill, decode = model.prefill, model.decode
    if dev.type == "cuda":
        prefill, decode = graph(prefill), graph(decode)

    def decode_all():
        for _ in range(new_tokens):
            decode()

    model.seq[:PROMPT].copy_(prompt)
    prefill()
    decode_all()
    times = []
    for _ in range(3):
        prefill()
        times.append(timed_ms(decode_all, dev) / new_tokens)
    ids = model.seq[PROMPT:PROMPT + new_tokens + 1].tolist()  # the prefill's id, then one per replay
    prefill_ms = statistics.median(timed_ms(prefill, dev) for _ in range(20))
    return ids, statistics.median(times), prefill_ms


def eager_decode_ms(model, dev):
    """The decode step op by op without a graph, after a prefill: median of 30 steps."""
    model.prefill()
    for _ in range(5):
        model.decode()
    return statistics.median(timed_ms(model.decode, dev) for _ in range(30))


def compare(hf, prompt, ids, new_tokens):
    """transformers' greedy ids against ours: (equal, first differing step, transformers' margin
    there between its choice and ours)."""
    prompt = prompt[None]
    out = hf.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=new_tokens,
                      do_sample=False, use_cache=True)
    theirs = out[0, PROMPT:].tolist()
    assert len(theirs) == new_tokens, len(theirs)
    first = next((i for i, (a, b) in enumerate(zip(ids, theirs)) if a != b), None)
    if first is None:
        return True, None, None
    logits = hf(out[:, :PROMPT + first]).logits[0, -1].float()
    return False, first, float(logits[theirs[first]] - logits[ids[first]])


def bench_model(name, args, dev, gbps, prompt, figures):
    """Both dtypes of one model: figures filled, a table row each; True where the fp32 ids differ
    from transformers'."""
    n_layer, n_embd, n_head, tag = MODELS[name]
    check = not args.no_check and (name == "124M" or args.check_all)
    hf = hf_model(n_layer, n_embd, n_head, dev)
    state = hf.state_dict()
    if not check:
        del hf
    fp32_differs = False
    for half in (False, True):
        f16 = "_f16" if half else ""
        model = StaticGpt2(state, n_layer, n_head, args.new_tokens, torch.float16 if half else torch.float32, dev)
        ids, decode_ms, prefill_ms = run(model, prompt, args.new_tokens, dev)
        floor_ms = model.weight_bytes() / gbps / 1e6
        figures[f"torch_graph_decode{f16}{tag}_ms"] = decode_ms
        figures[f"torch_graph_prefill64{f16}{tag}_ms"] = prefill_ms
        figures[f"gpt2{tag}_weight_bytes_floor{f16}_ms"] = floor_ms
        row = dict(model=name, dtype="fp16" if half else "fp32", prefill=prefill_ms, decode=decode_ms,
                   eager=None, mb=model.weight_bytes() / 1e6, floor=floor_ms, ids="not checked")
        if not half:
            row["eager"] = figures[f"torch_eager_static_decode{tag}_ms"] = eager_decode_ms(model, dev)
        if check:
            equal, first, margin = compare(hf.half() if half else hf, prompt, ids, args.new_tokens)
            figures[f"torch_graph_ids_match{f16}{tag}"] = int(equal)
            row["ids"] = "equal" if equal else f"differ at {first} (transformers' margin {margin:.3e})"
            if not equal:
                figures[f"torch_graph_ids_first_diff{f16}{tag}"] = first
                figures[f"torch_graph_ids_margin{f16}{tag}"] = margin
                fp32_differs |= not half
        print_row(row)
        del model
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    return fp32_differs


def print_row(r):
    eager = f"{r['eager']:.3f}" if r["eager"] is not None else "-"
    print(f"| {r['model']} | {r['dtype']} | {r['prefill']:.3f} | {r['decode']:.4f} | {eager} | {r['mb']:.0f} | "
          f"{r['floor']:.4f} | {r['decode'] / r['floor']:.2f} | {r['ids']} |", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--out", default=None)
    p.add_argument("--quick", action="store_true", help="124M only, 32 new tokens")
    p.add_argument("--check-all", action="store_true", help="compare with transformers on every model, not only 124M")
    p.add_argument("--no-check", action="store_true", help="no comparison with transformers")
    p.add_argument("--device", default="cuda", help="cpu runs the same forward eagerly, without graphs")
    args = p.parse_args()
    args.new_tokens = 32 if args.quick else 256
    models = ["124M"] if args.quick else args.models.split(",")
    dev = torch.device(args.device)
    torch.set_grad_enabled(False)
    gpu = torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu"
    gbps = copy_gbps(dev)
    figures = dict(torch_graph_copy_gbps=gbps)
    print(f"# torch {torch.__version__} on {gpu}: {PROMPT}-token prompt, {args.new_tokens} new tokens, greedy; "
          f"copy {gbps:.0f} GB/s (read + write)\n")
    print("| model | dtype | prefill 64 ms | decode ms/token (graph) | eager decode ms/token | weights MB | "
          "weight-bytes floor ms | decode / floor | ids vs transformers |\n|---|---|---|---|---|---|---|---|---|",
          flush=True)
    prompt = torch.randint(0, 50257, (PROMPT,), generator=torch.Generator().manual_seed(1)).to(dev)
    failed = [name for name in models if bench_model(name, args, dev, gbps, prompt, figures)]
    print(json.dumps(figures), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(figures, f, indent=1)
    if failed:
        print(f"fp32 ids differ from transformers' for {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
