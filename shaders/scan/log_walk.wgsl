// prelude: recurrence/launch.wgsl
// prelude: recurrence/chunk_walk.wgsl
// parallel_scan_log, the minGRU scan in log space: the recurrence of recurrence/chunk_walk.wgsl's
// walks and passes (its hooks, below), shared by the width kernels that build.rs generates
// from scan/parallel_scan_log.widths, scan/parallel_scan_log.wgsl (`alias F = vec4<f32>`: four adjacent channels per invocation,
// D % 4 == 0), scan/parallel_scan_log_vec2.wgsl (`alias F = vec2<f32>`, D % 2 == 0) and
// scan/parallel_scan_log_scalar.wgsl (`alias F = f32`), which declare F, the bindings' dtype
// slots (engine/kernel/dtype.rs) and the entry points. Every index counts F values: a time
// step's row holds p.d = D / 4 (D / 2, D). Reads and writes go through the slots' NAME_ld /
// NAME_st: F32, F16 or BF16 storage, f32 state, a half output rounded once when stored, and an
// invocation owns whole packed words of its outputs (the scalar width writes f32).
//
// Forward: with z_{-1} = lv_0 (the log initial state), for t = 0..T-1
//   z_t = logaddexp(lc_t + z_{t-1}, lv_{t+1}),  h_t = exp(z_t),
// i.e. h_t = exp(a*_t + logcumsumexp(lv - a*)_t) with the running cumulative sum a* rebased
// into the carried log state at every step, and each log-add max-shifted (online
// log-sum-exp). No sentinel is needed: a walk starts from lv_0 or from a chunk's first step.
// Rebasing matters: a raw running cumsum reaches |a*| ~ 10^3 at long T and its f32 rounding
// alone breaks the gate.
//
// REVERSE = true: the adjoint over dL/dh = g, in linear space (every factor is exp of a log
// coefficient, at most 1 for minGRU's negative log coefficients, so it cannot blow up):
//   G_t = g_t + exp(lc_{t+1}) G_{t+1},                  G_{T-1} = g_{T-1}
//   d lc_t = G_t exp(lc_t) h_{t-1}   (h_{-1} = exp(lv_0))
//   d lv_{t+1} = G_t exp(lv_{t+1}),  d lv_0 = exp(lc_0) G_0 exp(lv_0)
// Each exp argument is a log coefficient, a log value or their sum with log h: bounded by the
// forward's own values, so the gradient is finite whenever the forward is.
//
// The walk is recurrence/chunk_walk.wgsl's (read its "why"); this file brings the step and
// the combine. In reverse step t's factor exp(lc_{t+1}) is carried from step t + 1, which
// computed it for its own d lc. A forward chunk reduce starts from the chunk's first step
// (its state is its log value alone), so no sentinel for an empty log state is needed.

// The uniform and bindings: scan/log_bindings.wgsl; the walks' side:
@group(0) @binding(7) var<storage, read_write> side: array<F>; // chunked: (chunks, 2, lanes); segmented lanes: (lanes,) state

// A walk in progress; `base` and `base_lv` index (lane, t = 0) of lc and lv.
struct Walk {
    s: F,     // the state: log h forward, the adjoint G in reverse
    prod: F,  // the transitions applied so far: sum of lc forward, product of exp(lc) in reverse
    f: F,     // REVERSE: the next step's factor exp(lc_{t+1}), zero past the end
    init: F,  // REVERSE: h_{-1} = exp(lv_0)
    base: u32,
    base_lv: u32,
}

// log(exp(u) + exp(w)), shifted by the larger so exp never overflows.
fn logaddexp(u: F, w: F) -> F {
    let m = max(u, w);
    return m + log(1.0 + exp(min(u, w) - m));
}

// Index of (lane, t = 0) in lv; step t adds t * p.d.
fn row_lv(lane: u32) -> u32 {
    return (lane / p.d) * (p.launch.t_len + 1u) * p.d + lane % p.d;
}

// The forward state before step 0: lv_0, the log initial state.
fn initial(lane: u32) -> F {
    return lv_ld(row_lv(lane));
}

fn begin(lane: u32, end: u32) -> Walk {
    let base = (lane / p.d) * p.launch.t_len * p.d + lane % p.d;
    var w = Walk(F(0.0), F(0.0), F(0.0), F(0.0), base, row_lv(lane));
    if REVERSE {
        w.prod = F(1.0);
        if end < p.launch.t_len {
            w.f = exp(lc_ld(w.base + end * p.d));
        }
        w.init = exp(lv_ld(w.base_lv));
    }
    return w;
}

// g_t (REVERSE; unused forward).
fn grad_at(w: ptr<function, Walk>, t: u32) -> F {
    if !REVERSE {
        return F(0.0);
    }
    return g_ld((*w).base + t * p.d);
}

// lv_{t+1}: the forward always reads it, the reverse only for d lv (`write`), so a chunk
// reduce does not.
fn value_at(w: ptr<function, Walk>, t: u32, write: bool) -> F {
    if REVERSE && !write {
        return F(0.0);
    }
    return lv_ld((*w).base_lv + (t + 1u) * p.d);
}

// h_{t-1} (REVERSE and `write`; unused otherwise): the forward output, or exp(lv_0) at t = 0.
fn h_prev(w: ptr<function, Walk>, t: u32, write: bool) -> F {
    if !REVERSE || !write {
        return F(0.0);
    }
    let v = h_ld((*w).base + (max(t, 1u) - 1u) * p.d);
    return select(v, (*w).init, t == 0u);
}

// Step t's loads: lc_t and lv_{t+1} and, in reverse, g_t and h_{t-1}.
struct Step {
    c: F,
    v: F,
    g: F,
    h: F,
}

fn load_step(w: ptr<function, Walk>, t: u32, write: bool) -> Step {
    return Step(lc_ld((*w).base + t * p.d), value_at(w, t, write), grad_at(w, t), h_prev(w, t, write));
}

// One dependent update at step t from its loads.
fn update(w: ptr<function, Walk>, t: u32, l: Step, write: bool) {
    let i = (*w).base + t * p.d;
    if !REVERSE {
        (*w).s = logaddexp(l.c + (*w).s, l.v);
        (*w).prod += l.c;
        if write {
            out_st(i, exp((*w).s));
        }
        return;
    }
    let f = (*w).f;
    let c = exp(l.c);
    (*w).f = c;
    (*w).s = fma(f, (*w).s, l.g);
    (*w).prod *= f;
    if write {
        let s = (*w).s;
        out_st(i, s * c * l.h);
        out2_st((*w).base_lv + (t + 1u) * p.d, s * exp(l.v));
        if t == 0u {
            out2_st((*w).base_lv, c * s * l.h);
        }
    }
}

// A chunk reduce from empty: in reverse the whole chunk from the zero adjoint; forward the
// first step's state is its log value alone, and the walk goes on from the next step.
fn reduce_from(w: ptr<function, Walk>, start: u32) -> u32 {
    if REVERSE {
        return start;
    }
    (*w).s = lv_ld((*w).base_lv + (start + 1u) * p.d);
    (*w).prod = lc_ld((*w).base + start * p.d);
    return start + 1u;
}

// The state after a chunk of transition pc and local state sc, from carry.
fn combine(carry: F, pc: F, sc: F) -> F {
    if REVERSE {
        return fma(pc, carry, sc);
    }
    return logaddexp(pc + carry, sc);
}

fn lane_done(w: ptr<function, Walk>, lane: u32) {}

fn carries_done(lane: u32, carry: F) {}

// The forward lane walk's hooks (recurrence/chunk_walk.wgsl's walk_forward): a step's row is
// r = t * p.d; lc_t, lv_{t+1}, the update of the log state and the store of h_t = exp(z_t).
fn fwd_stride() -> u32 {
    return p.d;
}

fn fwd_a(w: Walk, r: u32) -> F {
    return lc_ld(w.base + r);
}

fn fwd_b(w: Walk, r: u32) -> F {
    return lv_ld(w.base_lv + p.d + r);
}

fn fwd_step(s: F, c: F, v: F) -> F {
    return logaddexp(c + s, v);
}

fn fwd_store(w: Walk, r: u32, s: F) {
    out_st(w.base + r, exp(s));
}
