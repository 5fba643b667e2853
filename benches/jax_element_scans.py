"""jax.lax.scan peers of the element scans (seed 002), under jax.jit, forward and forward+gradient.

Bodies (f32; h is the state, every other name a per-step sequence of the state's shape, the
seed's convention of broadcasting parameters to the sequence shape before the call):

  seed_tanh  h_t = tanh(x_t + a_t * h_{t-1})                          (the seed's first example)
  gru        z_t = sigmoid(xz_t); h_t = (1 - z_t) * h_{t-1} + z_t * tanh(xh_t + a_t * h_{t-1})
  norm16     y_t = a_t * h_{t-1} + x_t; h_t = y_t / max(1, sqrt(sum(y_t * y_t)))  (seed's vector
             state: 16 values a lane, the sum over those 16; a_t one value a lane, broadcast)

Inputs: x, xz, xh ~ N(0, 1); a = sigmoid(N(0, 1)) in (0, 1); h0 ~ N(0, 1) for the scalar bodies;
norm16: x ~ 0.25 N(0, 1) (|x| about 1, so the cap binds on some steps and not others), h0 = 0
(as in the seed). Output: every step's state, shape of x.
Shapes (batch-major names; JAX gets the time-major layout lax.scan wants, (T, B, D), so no
transpose is timed):
  lab    B128 T64 D256;   norm16: B128 T64 H16 x 16 values (H * 16 = D = 256)
  large  B16 T4096 D4096; norm16: B16 T4096 H256 x 16 values (H * 16 = D = 4096)
fwd: jit(scan) -> all states. fwdbwd: jit(grad(sum of all states)) w.r.t. every input
(sequences and h0). Each scan runs with lax.scan(unroll=u) for u in --unroll (default 1,8);
the best is reported (key _unroll). ROTATE input sets cycled, warm-up (compiles), then the
median of REPEAT calls timed with block_until_ready.

    python3 benches/jax_element_scans.py [--out FILE] [--quick] [--cases SUBSTR,...] [--unroll 1,8]
    python3 benches/jax_element_scans.py --check     # tiny shapes on CPU: numpy loop, finite differences

Keys: jax_element_scan_<body>_<case>_fwd_ms, _fwdbwd_ms, _fwd_gbps (inputs read once, states
written once over fwd), _unroll (of the fwd row), _fwdbwd_unroll.
"""

import argparse
import json
import statistics
import sys
import time

if "--check" in sys.argv:
    import os

    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np

ROTATE = 3


def seed_tanh(h, x, a):
    return jnp.tanh(x + a * h)


def gru(h, xz, xh, a):
    z = jax.nn.sigmoid(xz)
    return (1.0 - z) * h + z * jnp.tanh(xh + a * h)


def norm16(h, x, a):
    y = a * h + x
    return y / jnp.maximum(1.0, jnp.sqrt(jnp.sum(y * y, axis=-1, keepdims=True)))


BODIES = dict(seed_tanh=seed_tanh, gru=gru, norm16=norm16)
SHAPES = dict(lab=(128, 64, 256), large=(16, 4096, 4096))  # (B, T, D)


def make_inputs(body, B, T, D, key, dtype=jnp.float32):
    """(h0, seqs), time-major: scalar bodies (T, B, D); norm16 (T, B, D/16, 16), a (T, B, D/16, 1)."""
    ks = jax.random.split(key, 4)
    n = lambda k, shape: jax.random.normal(k, shape, dtype)
    if body == "norm16":
        H = D // 16
        return jnp.zeros((B, H, 16), dtype), (0.25 * n(ks[0], (T, B, H, 16)), jax.nn.sigmoid(n(ks[1], (T, B, H, 1))))
    a = jax.nn.sigmoid(n(ks[0], (T, B, D)))
    h0 = n(ks[1], (B, D))
    if body == "seed_tanh":
        return h0, (n(ks[2], (T, B, D)), a)
    return h0, (n(ks[2], (T, B, D)), n(ks[3], (T, B, D)), a)


def scan_fn(body, unroll):
    f = BODIES[body]

    def step(h, xs):
        h = f(h, *xs)
        return h, h

    def run(h0, seqs):
        return jax.lax.scan(step, h0, seqs, unroll=unroll)[1]

    return run


def grad_fn(run):
    return jax.grad(lambda h0, seqs: jnp.sum(run(h0, seqs)), argnums=(0, 1))


def median_ms(fn, sets, warmup=3, repeat=20):
    for i in range(warmup):
        jax.block_until_ready(fn(*sets[i % len(sets)]))
    times = []
    for i in range(repeat):
        args = sets[i % len(sets)]
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def nbytes(h0, seqs):
    # h0 and every sequence read once, the states (the shape of the first sequence) written once
    return 4 * (h0.size + sum(s.size for s in seqs) + seqs[0].size)


def bench(args, figures):
    unrolls = [int(u) for u in args.unroll.split(",")]
    print("| body | case | shape (B, T, D) | fwd ms | unroll | fwd+grad ms | unroll |\n|---|---|---|---|---|---|---|",
          flush=True)
    for label, (B, T, D) in SHAPES.items():
        if args.quick and label == "large":
            continue
        for body in BODIES:
            if args.cases and not any(c in f"{body} {label}" for c in args.cases.split(",")):
                continue
            sets = [make_inputs(body, B, T, D, jax.random.PRNGKey(i)) for i in range(ROTATE)]
            warm, rep = (2, 10) if label == "large" else (3, 20)
            best = {}
            for u in unrolls:
                run = scan_fn(body, u)
                for kind, fn in (("fwd", jax.jit(run)), ("fwdbwd", jax.jit(grad_fn(run)))):
                    ms = median_ms(fn, sets, warmup=warm, repeat=rep)
                    if kind not in best or ms < best[kind][0]:
                        best[kind] = (ms, u)
            key = f"jax_element_scan_{body}_{label}"
            figures[f"{key}_fwd_ms"] = best["fwd"][0]
            figures[f"{key}_unroll"] = best["fwd"][1]
            figures[f"{key}_fwdbwd_ms"] = best["fwdbwd"][0]
            figures[f"{key}_fwdbwd_unroll"] = best["fwdbwd"][1]
            figures[f"{key}_fwd_gbps"] = nbytes(*sets[0]) / best["fwd"][0] / 1e6
            print(f"| {body} | {label} | {B}, {T}, {D} | {best['fwd'][0]:.4f} | {best['fwd'][1]} | "
                  f"{best['fwdbwd'][0]:.4f} | {best['fwdbwd'][1]} |", flush=True)
            del sets


# ---- check: tiny shapes on CPU, float64 -------------------------------------------------

def numpy_scan(body, h0, seqs):
    h = np.asarray(h0, np.float64)
    seqs = [np.asarray(s, np.float64) for s in seqs]
    out = []
    for t in range(seqs[0].shape[0]):
        s = [q[t] for q in seqs]
        if body == "seed_tanh":
            h = np.tanh(s[0] + s[1] * h)
        elif body == "gru":
            z = 1 / (1 + np.exp(-s[0]))
            h = (1 - z) * h + z * np.tanh(s[1] + s[2] * h)
        else:
            y = s[1] * h + s[0]
            h = y / np.maximum(1.0, np.sqrt((y * y).sum(-1, keepdims=True)))
        out.append(h)
    return np.stack(out)


def check():
    jax.config.update("jax_enable_x64", True)
    ok = True
    for body in BODIES:
        for u in (1, 3):
            h0, seqs = make_inputs(body, 2, 7, 48, jax.random.PRNGKey(7), jnp.float64)
            run = scan_fn(body, u)
            out = jax.jit(run)(h0, seqs)
            e_fwd = float(np.abs(np.asarray(out) - numpy_scan(body, h0, seqs)).max())
            # gradient of sum(states) against central differences along a random direction
            g = jax.jit(grad_fn(run))(h0, seqs)
            leaves, tree = jax.tree_util.tree_flatten((h0, seqs))
            dirs = [jax.random.normal(jax.random.PRNGKey(11 + i), x.shape, jnp.float64) for i, x in enumerate(leaves)]
            eps = 1e-6
            shift = lambda sgn: jax.tree_util.tree_unflatten(tree, [x + sgn * eps * d for x, d in zip(leaves, dirs)])
            fd = (float(jnp.sum(run(*shift(1)))) - float(jnp.sum(run(*shift(-1))))) / (2 * eps)
            an = sum(float(jnp.sum(gl * d)) for gl, d in zip(jax.tree_util.tree_leaves(g), dirs))
            e_grad = abs(fd - an) / max(1.0, abs(an))
            good = e_fwd < 1e-12 and e_grad < 1e-6
            ok &= good
            print(f"{body} unroll {u}: fwd max abs err vs numpy loop {e_fwd:.1e}, "
                  f"grad vs central difference {e_grad:.1e} (directional {an:.4f}) {'ok' if good else 'FAIL'}")
        # f32 at the bench shapes' layout, tiny: the timed configuration compiles and runs
        h0, seqs = make_inputs(body, 3, 5, 32, jax.random.PRNGKey(0))
        jax.block_until_ready(jax.jit(grad_fn(scan_fn(body, 8)))(h0, seqs))
    print("check:", "all passed" if ok else "FAILED")
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--quick", action="store_true", help="lab shape only")
    p.add_argument("--cases", default=None, help="comma-separated substrings of '<body> <case>'")
    p.add_argument("--unroll", default="1,8")
    p.add_argument("--check", action="store_true")
    args = p.parse_args()
    if args.check:
        sys.exit(0 if check() else 1)
    meta = dict(jax=jax.__version__, device=str(jax.devices()[0].device_kind), date=time.strftime("%Y-%m-%d"))
    print(f"# jax {meta['jax']} on {meta['device']}", flush=True)
    figures = {}
    bench(args, figures)
    print(json.dumps(figures), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(dict(meta=meta, **figures), f, indent=1)


if __name__ == "__main__":
    main()
