// prelude: recurrence/launch.wgsl
// prelude: recurrence/chunk_walk.wgsl
// The K = V = 1 affine scan (linear_scan; matrix_affine_scan at k = v = 1): the recurrence of
// recurrence/chunk_walk.wgsl's walks and passes (its hooks, below), shared by the width
// kernels that build.rs generates from scan/linear.widths, scan/linear.wgsl (`alias F = vec4<f32>`: four adjacent channels per invocation, N % 4 == 0),
// scan/linear_vec2.wgsl (`alias F = vec2<f32>`, N % 2 == 0) and scan/linear_scalar.wgsl
// (`alias F = f32`), which declare F, the dtype slots (engine/kernel/dtype.rs) of the bindings
// and the entry points. Every index below counts F values: a time step's row holds
// p.n = N / 4 (N / 2, N) of them. Inputs and outputs go through the slots' NAME_ld / NAME_st
// (F32, F16 or BF16 storage, f32 values): the state is f32 whatever the storage, and a half
// output is rounded once, when it is stored. An invocation owns whole words of every output
// (a vec2 or vec4 of halves), so no two invocations share a packed word; the scalar width
// keeps f32 outputs (scan/linear_scalar.wgsl).
//
// Forward: h_t = a_t h_{t-1} + b_t, h_{-1} = h0 (or zero).
// REVERSE = true: the adjoint over dL/dh = x, fused with the transitions' gradient:
//   G_t = x_t + a_{t+1} G_{t+1} (a_T = 0),  out = dB = G,  dA_t = G_t h_{t-1},  dh0 = a_0 G_0.
//
// The walk is recurrence/chunk_walk.wgsl's (read its "why"); this file brings the step. In
// reverse, step t's transition a_{t+1} is the a the previous step (t + 1) loaded: it is
// carried in `f`, so each step reads a once. In reverse the lane walk that ends at t = 0 and
// the carry walk also write dh0.

// The uniform and bindings: scan/linear_bindings.wgsl; the walks' side:
@group(0) @binding(7) var<storage, read_write> side: array<F>;    // f32: chunked (chunks, 2, lanes) P and S; segmented lanes (lanes,) state

// A walk in progress; `base` indexes (lane, t = 0).
struct Walk {
    s: F,     // the state: h forward, the adjoint G in reverse
    prod: F,  // the product of the transitions applied so far (a chunk's transition)
    f: F,     // REVERSE: the next step's transition a_{t+1}, zero past the end
    init: F,  // REVERSE: h_{-1} (h0 or zero), for dA_0
    base: u32,
}

// Index of (lane, t = 0); step t adds t * p.n.
fn row(lane: u32) -> u32 {
    return (lane / p.n) * p.launch.t_len * p.n + lane % p.n;
}

fn initial(lane: u32) -> F {
    if p.has_h0 == 1u {
        return h0_ld(lane);
    }
    return F(0.0);
}

fn begin(lane: u32, end: u32) -> Walk {
    var w = Walk(F(0.0), F(1.0), F(0.0), F(0.0), row(lane));
    if REVERSE {
        if end < p.launch.t_len {
            w.f = a_ld(w.base + end * p.n);
        }
        w.init = initial(lane);
    }
    return w;
}

// h_{t-1} for dA_t (REVERSE and `write`; unused otherwise, so a chunk reduce does not read
// H): the forward output, or h0 at t = 0.
fn h_prev(w: ptr<function, Walk>, t: u32, write: bool) -> F {
    if !REVERSE || !write {
        return F(0.0);
    }
    let v = h_ld((*w).base + (max(t, 1u) - 1u) * p.n);
    return select(v, (*w).init, t == 0u);
}

// Step t's loads: a_t, x_t and, in reverse, h_{t-1}.
struct Step {
    a: F,
    x: F,
    h: F,
}

fn load_step(w: ptr<function, Walk>, t: u32, write: bool) -> Step {
    let i = (*w).base + t * p.n;
    return Step(a_ld(i), x_ld(i), h_prev(w, t, write));
}

// One dependent update at step t from its loads.
fn update(w: ptr<function, Walk>, t: u32, l: Step, write: bool) {
    let i = (*w).base + t * p.n;
    var f = l.a;
    if REVERSE {
        f = (*w).f;
        (*w).f = l.a;
    }
    (*w).s = fma(f, (*w).s, l.x);
    (*w).prod *= f;
    if write {
        out_st(i, (*w).s);
        if REVERSE {
            da_st(i, (*w).s * l.h);
        }
    }
}

// A chunk reduce walks its whole chunk from the zero state and the identity.
fn reduce_from(w: ptr<function, Walk>, start: u32) -> u32 {
    return start;
}

fn combine(carry: F, pc: F, sc: F) -> F {
    return fma(pc, carry, sc);
}

fn lane_done(w: ptr<function, Walk>, lane: u32) {
    if REVERSE && p.launch.t_begin == 0u {
        // The walk ended at t = 0: s = G_0 and f = a_0.
        dh0_st(lane, (*w).f * (*w).s);
    }
}

fn carries_done(lane: u32, carry: F) {
    if REVERSE {
        dh0_st(lane, a_ld(row(lane)) * carry);
    }
}

// The forward lane walk's hooks (recurrence/chunk_walk.wgsl's walk_forward): a step's row is
// r = t * p.n; a_t, x_t, the update and the store of h_t.
fn fwd_stride() -> u32 {
    return p.n;
}

fn fwd_a(w: Walk, r: u32) -> F {
    return a_ld(w.base + r);
}

fn fwd_b(w: Walk, r: u32) -> F {
    return x_ld(w.base + r);
}

fn fwd_step(s: F, a: F, x: F) -> F {
    return fma(a, s, x);
}

fn fwd_store(w: Walk, r: u32, s: F) {
    out_st(w.base + r, s);
}
