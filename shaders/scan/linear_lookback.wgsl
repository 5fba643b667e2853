// The K = V = 1 affine scan (linear_scan; matrix_affine_scan at k = v = 1) in ONE pass over
// the data, the recurrence of recurrence/lookback.wgsl's chunks (tickets, flag words, the fallback,
// why), shared by scan/linear_lookback_quad.wgsl, _pair.wgsl and _scalar.wgsl, which bring
// F (W adjacent channels an invocation, recurrence/width_*.wgsl) and the dtype slots of the bindings
// (engine/scan/linear_gpu.rs; strategy LookBack). Every index counts F values: a time step's
// row holds p.n = N / W of them. The state is f32 whatever the storage.
//
// Forward: h_t = a_t h_{t-1} + b_t, h_{-1} = h0 (or zero).
// REVERSE = true: G_t = x_t + a_{t+1} G_{t+1} (a_T = 0), out = G, dA_t = G_t h_{t-1},
// dh0 = a_0 G_0 (scan/linear_walk.wgsl's adjoint, walked the same way).

// The uniform and bindings: scan/linear_bindings.wgsl; the look-back's side:
@group(0) @binding(7) var<storage, read_write> side: array<atomic<u32>>; // recurrence/lookback.wgsl's words

// Index of (lane, t = 0); step t adds t * p.n.
struct Rows {
    base: u32,
}

fn rows(lane: u32) -> Rows {
    return Rows((lane / p.n) * p.launch.t_len * p.n + lane % p.n);
}

// Step t's inputs: its transition (a_t forward, a_{t+1} in reverse, zero past the end) and x_t.
struct In {
    f: F,
    x: F,
}

fn load(r: Rows, t: u32) -> In {
    let x = x_ld(r.base + t * p.n);
    if REVERSE {
        if t + 1u < p.launch.t_len {
            return In(a_ld(r.base + (t + 1u) * p.n), x);
        }
        return In(F(0.0), x);
    }
    return In(a_ld(r.base + t * p.n), x);
}

// The aggregate after one more step (from empty when first).
fn local(l: Local, i: In, first: bool) -> Local {
    if first {
        return Local(i.x, i.f);
    }
    return Local(fma(i.f, l.s, i.x), l.p * i.f);
}

fn apply(s: F, i: In) -> F {
    return fma(i.f, s, i.x);
}

// The state after a chunk of transition pc and local state sc, entered with carry.
fn combine(carry: F, pc: F, sc: F) -> F {
    return fma(pc, carry, sc);
}

// (P, S) of the chunks folded so far, then chunk j's (pj, sj) before them.
fn fold(acc: Local, pj: F, sj: F) -> Local {
    return Local(fma(acc.p, sj, acc.s), acc.p * pj);
}

// h_{t-1} for dA_t: the forward output, or h0 (zero) at t = 0.
fn h_prev(lane: u32, base: u32, t: u32) -> F {
    if t > 0u {
        return h_ld(base + (t - 1u) * p.n);
    }
    if p.has_h0 == 1u {
        return h0_ld(lane);
    }
    return F(0.0);
}

// The carry into the first chunk: h0 (or zero) forward, the zero adjoint in reverse.
fn initial(r: Rows, lane: u32) -> F {
    if !REVERSE && p.has_h0 == 1u {
        return h0_ld(lane);
    }
    return F(0.0);
}

// Writes step t's outputs from its state s.
fn emit(lane: u32, r: Rows, t: u32, s: F, i: In) {
    out_st(r.base + t * p.n, s);
    if REVERSE {
        da_st(r.base + t * p.n, s * h_prev(lane, r.base, t));
    }
}

// The reverse walk's chunk at t = 0 ends with G_0 = last: dh0 = a_0 G_0.
fn finish(lane: u32, r: Rows, start: u32, last: F) {
    if REVERSE && start == 0u {
        dh0_st(lane, a_ld(r.base) * last);
    }
}
