// parallel_scan_log in ONE pass over the data: scan/log_walk.wgsl's recurrences (read its
// header for the math) over recurrence/lookback.wgsl's chunks (tickets, flag words, the fallback,
// why), shared by scan/parallel_scan_log_lookback_quad.wgsl, _pair.wgsl and _scalar.wgsl,
// which bring F (W adjacent channels an invocation, recurrence/width_*.wgsl) and the dtype slots of
// the bindings (engine/scan/parallel_scan_log.rs; strategy LookBack). Every index counts F
// values: a time step's row holds p.d = D / W of them. The state is f32 whatever the storage.
//
// Forward, in log space: a chunk from empty has the local state S_q (its first step's state is
// that step's log value alone) and the log transition P_q = the sum of its lc; the state after
// step q from the carry z_in is logaddexp(P_q + z_in, S_q), and h = exp of it.
// REVERSE, in linear space like linear_lookback's adjoint: G_t = g_t + exp(lc_{t+1}) G_{t+1};
// then d lc_t = G_t exp(lc_t) h_{t-1}, d lv_{t+1} = G_t exp(lv_{t+1}) and
// d lv_0 = exp(lc_0) G_0 exp(lv_0), read again when the outputs are written.

// The uniform and bindings: scan/log_bindings.wgsl; the look-back's side:
@group(0) @binding(7) var<storage, read_write> side: array<atomic<u32>>; // recurrence/lookback.wgsl's words

// log(exp(u) + exp(w)), shifted by the larger (scan/log_walk.wgsl's).
fn logaddexp(u: F, w: F) -> F {
    let m = max(u, w);
    return m + log(1.0 + exp(min(u, w) - m));
}

// Indices of (lane, t = 0) in lc (g, h, out) and in lv (out2).
struct Rows {
    base: u32,
    base_lv: u32,
}

fn rows(lane: u32) -> Rows {
    let b = lane / p.d;
    let c = lane % p.d;
    return Rows(b * p.launch.t_len * p.d + c, b * (p.launch.t_len + 1u) * p.d + c);
}

// Step t's inputs: forward lc_t and lv_{t+1}; in reverse the transition exp(lc_{t+1}) (zero
// past the end) and g_t.
struct In {
    c: F,
    v: F,
}

fn load(r: Rows, t: u32) -> In {
    if REVERSE {
        var f = F(0.0);
        if t + 1u < p.launch.t_len {
            f = exp(lc_ld(r.base + (t + 1u) * p.d));
        }
        return In(f, g_ld(r.base + t * p.d));
    }
    return In(lc_ld(r.base + t * p.d), lv_ld(r.base_lv + (t + 1u) * p.d));
}

// The aggregate after one more step (from empty when first: the step's log value alone).
fn local(l: Local, i: In, first: bool) -> Local {
    if REVERSE {
        if first {
            return Local(i.v, i.c);
        }
        return Local(fma(i.c, l.s, i.v), l.p * i.c);
    }
    if first {
        return Local(i.v, i.c);
    }
    return Local(logaddexp(i.c + l.s, i.v), l.p + i.c);
}

fn apply(s: F, i: In) -> F {
    if REVERSE {
        return fma(i.c, s, i.v);
    }
    return logaddexp(i.c + s, i.v);
}

// The state after a chunk of transition pc and local state sc, entered with carry.
fn combine(carry: F, pc: F, sc: F) -> F {
    if REVERSE {
        return fma(pc, carry, sc);
    }
    return logaddexp(pc + carry, sc);
}

// (P, S) of the chunks folded so far, then chunk j's (pj, sj) before them.
fn fold(acc: Local, pj: F, sj: F) -> Local {
    if REVERSE {
        return Local(fma(acc.p, sj, acc.s), acc.p * pj);
    }
    return Local(logaddexp(acc.p + sj, acc.s), acc.p + pj);
}

// Writes step t's outputs from its state s: h = exp(s) forward; the gradients in reverse.
fn emit(lane: u32, r: Rows, t: u32, s: F, i: In) {
    if !REVERSE {
        out_st(r.base + t * p.d, exp(s));
        return;
    }
    let c = exp(lc_ld(r.base + t * p.d));
    var h_prev = F(0.0);
    if t == 0u {
        h_prev = exp(lv_ld(r.base_lv));
    } else {
        h_prev = h_ld(r.base + (t - 1u) * p.d);
    }
    out_st(r.base + t * p.d, s * c * h_prev);
    out2_st(r.base_lv + (t + 1u) * p.d, s * exp(lv_ld(r.base_lv + (t + 1u) * p.d)));
    if t == 0u {
        out2_st(r.base_lv, c * s * h_prev);
    }
}

// The carry into the first chunk: lv_0 forward, the zero adjoint in reverse.
fn initial(r: Rows, lane: u32) -> F {
    if REVERSE {
        return F(0.0);
    }
    return lv_ld(r.base_lv);
}

// Nothing follows a chunk: d lv_0 is written with step t = 0.
fn finish(lane: u32, r: Rows, start: u32, last: F) {}
