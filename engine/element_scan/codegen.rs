//! The element-scan kernel around a body: one compute kernel per (body, direction).
//!
//! One invocation per lane; the state lives in registers (`h_0 .. h_{n-1}`), a loop walks the
//! trip axis forward or backward, reads each sequence's components at the lane and trip,
//! evaluates the body (emitted by the IR's one code generator, [`crate::expr::codegen`]) and
//! writes the new state. Lane shape, trip count and every stride come from the uniform, so
//! one pipeline serves every shape; the kernel name carries the hash of the body.
//!
//! Why the walk is blocked: a walk is bound by memory, and one step at a time keeps only one
//! step's loads in flight per invocation (the H200 moved 30-40% of its copy rate so). The
//! compiler knows every sequence the body reads, so it loads them `u` steps ahead
//! ([`block_steps`]: about 32 values per invocation) into named registers (`c{i}_{j}_{s}`,
//! never arrays, which do not stay in registers), software pipelined: the next block's loads
//! (`n..`) are issued before this block's `u` dependent steps, and a workgroup barrier after
//! every block keeps a workgroup's invocations on the same trips. The barrier needs uniform
//! control flow, so every invocation walks and only live lanes store. The steps and their
//! order are the plain loop's, so the results are bit for bit the same. Bodies that read more
//! than 8 values a step keep the plain loop.
//!
//! The kernel is a recurrence of the one launch (`crate::recurrence::launch`): it opens with
//! the launch prelude, its uniform with the launch header, and walks the segment
//! `[t_begin, t_end)` of the trips that the launch gives each dispatch, resuming from the
//! state the previous segment stored in `out`.

use std::fmt::Write;

use crate::expr::codegen::{comp, emit, helpers, Width};
use crate::expr::Body;

/// The kernel's cache name: the body's hash and the direction.
pub(crate) fn kernel_name(body: &Body, reverse: bool) -> String {
    format!(
        "element_scan/{:016x}{}",
        body.hash64(),
        if reverse { "_reverse" } else { "" }
    )
}

/// The WGSL of the scan kernel for `body` (entry point `element_scan`).
pub(crate) fn wgsl(body: &Body, reverse: bool) -> String {
    let k = body.params.len(); // views 0..k are inputs, view k is the output
    let n = body.state().lanes();
    let mut s = String::from(crate::recurrence::launch::PRELUDE);
    let w = &mut s;
    let _ = writeln!(
        w,
        "// Element scan {} (generated from the body IR).",
        kernel_name(body, reverse)
    );
    let _ = writeln!(
        w,
        "// One invocation per lane: h = body(h, sequences at trip t) for every trip t,"
    );
    let _ = writeln!(
        w,
        "// {}; the state after each trip is written to `out`.",
        if reverse {
            "from the last trip to the first"
        } else {
            "from the first trip to the last"
        }
    );
    let _ = writeln!(
        w,
        "\nstruct View {{\n    offset: u32,\n    trip: u32,                 // stride per trip (0: not along the trip axis)\n    comp: u32,                 // stride per vector component (0: broadcast)\n    _pad: u32,\n    lane: array<vec4<u32>, 2>, // stride per lane axis, axis d at [d / 4][d % 4]\n}}"
    );
    let _ = writeln!(
        w,
        "\nstruct Params {{\n    launch: Launch,             // lanes, trips in t_len (recurrence/launch.wgsl)\n    rank: u32,                  // lane axes, 0..=8\n    _pad0: u32,\n    _pad1: u32,\n    _pad2: u32,\n    shape: array<vec4<u32>, 2>, // lane shape\n    views: array<View, {}>,    // inputs, then the output\n}}\n",
        k + 1
    );
    let _ = writeln!(w, "@group(0) @binding(0) var<uniform> p: Params;");
    for i in 0..k {
        let what = if i == 0 {
            format!("initial state (lanes, {n})")
        } else {
            format!("sequence {i} (lanes, T, {})", body.params[i].lanes())
        };
        let _ = writeln!(
            w,
            "@group(0) @binding({}) var<storage, read> in{i}: array<f32>; // {what}",
            i + 1
        );
    }
    let _ = writeln!(
        w,
        "@group(0) @binding({}) var<storage, read_write> out: array<f32>; // states (lanes, T, {n})\n",
        k + 1
    );
    w.push_str(helpers(body));
    let _ = writeln!(
        w,
        "fn base(v: u32, lane: u32) -> u32 {{\n    var rem = lane;\n    var off = p.views[v].offset;\n    for (var d = i32(p.rank) - 1; d >= 0; d--) {{\n        let q = u32(d) / 4u;\n        let r = u32(d) % 4u;\n        off += (rem % p.shape[q][r]) * p.views[v].lane[q][r];\n        rem = rem / p.shape[q][r];\n    }}\n    return off;\n}}\n"
    );
    let _ = writeln!(
        w,
        "@compute @workgroup_size(WG)\nfn element_scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n                @builtin(local_invocation_index) lid: u32) {{"
    );
    let u = block_steps(body);
    let _ = writeln!(w, "    let id = invocation(wid, nwg, lid);");
    if u > 1 {
        // Every invocation walks (the block loop's barrier needs uniform control flow): one
        // past the last lane walks lane 0's sequences and stores nothing.
        let _ = writeln!(
            w,
            "    let live = id < p.launch.lanes;\n    let lane = select(0u, id, live);"
        );
    } else {
        let _ = writeln!(
            w,
            "    if id >= p.launch.lanes {{\n        return;\n    }}\n    let lane = id;"
        );
    }
    for i in 0..=k {
        let _ = writeln!(
            w,
            "    let b{i} = base({i}u, lane);\n    let tr{i} = p.views[{i}].trip;\n    let cs{i} = p.views[{i}].comp;"
        );
    }
    for j in 0..n {
        let _ = writeln!(w, "    var h_{j}: f32 = in0[b0 + {j}u * cs0];");
    }
    // A later segment resumes from the state stored at the trip before it in scan order.
    let prev = if reverse {
        "p.launch.t_end"
    } else {
        "p.launch.t_begin - 1u"
    };
    let _ = writeln!(
        w,
        "    if launch_resumes(p.launch, {reverse}) {{\n        let tp = {prev};"
    );
    for j in 0..n {
        let _ = writeln!(w, "        h_{j} = out[b{k} + tp * tr{k} + {j}u * cs{k}];");
    }
    let _ = writeln!(w, "    }}");
    let _ = writeln!(w, "    let steps = p.launch.t_end - p.launch.t_begin;\n    var q = 0u;");
    let time = |q: &str| format!("time_at(p.launch.t_begin, p.launch.t_end, {q}, {reverse})");
    let load = |i: u16, j: usize, t: &str| format!("in{i}[b{i} + ({t}) * tr{i} + {j}u * cs{i}]");
    let store = if u > 1 { "if live " } else { "" };
    if u > 1 {
        // Blocks of u steps, software pipelined: the next block's loads are issued into named
        // registers before this block's u dependent steps (see the module docs).
        let _ = writeln!(w, "    if steps >= {u}u {{");
        for_loads(body, u, |i, j, s| {
            let _ = writeln!(w, "        var c{i}_{j}_{s} = {};", load(i, j, &time(&format!("{s}u"))));
        });
        let _ = writeln!(w, "        for (; q + {}u <= steps; q += {u}u) {{", 2 * u);
        for_loads(body, u, |i, j, s| {
            let _ = writeln!(
                w,
                "            let n{i}_{j}_{s} = {};",
                load(i, j, &time(&format!("q + {}u", u + s)))
            );
        });
        for s in 0..u {
            step(w, body, "            ", &time(&format!("q + {s}u")), store, |i, j| {
                format!("c{i}_{j}_{s}")
            });
        }
        for_loads(body, u, |i, j, s| {
            let _ = writeln!(w, "            c{i}_{j}_{s} = n{i}_{j}_{s};");
        });
        let _ = writeln!(w, "            workgroupBarrier();\n        }}");
        for s in 0..u {
            step(w, body, "        ", &time(&format!("q + {s}u")), store, |i, j| {
                format!("c{i}_{j}_{s}")
            });
        }
        let _ = writeln!(w, "        q += {u}u;\n    }}");
    }
    let _ = writeln!(w, "    for (; q < steps; q++) {{");
    step(w, body, "        ", &time("q"), store, |i, j| load(i, j, "t"));
    let _ = writeln!(w, "    }}\n}}");
    s
}

/// Steps a block loads ahead: as many as keep about 32 values of the sequences in flight per
/// invocation (16 steps of two scalar sequences, as the channel scans' forward walk), at least
/// 4; 1 (a plain loop) for bodies that read more than 8 values a step, whose blocks would not
/// stay in registers.
fn block_steps(body: &Body) -> usize {
    let per_step: usize = body.params.iter().skip(1).map(|p| p.lanes()).sum();
    match per_step {
        0 => 1,
        1..=2 => 16,
        3..=4 => 8,
        5..=8 => 4,
        _ => 1,
    }
}

/// Calls `f(i, j, s)` for every sequence i >= 1, component j and step s < u of a block.
fn for_loads(body: &Body, u: usize, mut f: impl FnMut(u16, usize, usize)) {
    for s in 0..u {
        for (i, p) in body.params.iter().enumerate().skip(1) {
            for j in 0..p.lanes() {
                f(i as u16, j, s);
            }
        }
    }
}

/// One step of the walk at trip `t` (a WGSL expression) in a scope of its own: the body with
/// sequence i's component j read as `seq(i, j)`, the new state, and its store (guarded by
/// `store`, e.g. `if live `).
fn step(w: &mut String, body: &Body, indent: &str, t: &str, store: &str, seq: impl Fn(u16, usize) -> String) {
    let n = body.state().lanes();
    let k = body.params.len();
    let _ = writeln!(w, "{indent}{{\n{indent}    let t = {t};");
    let inner = format!("{indent}    ");
    emit(w, body, &inner, Width::Scalar, |i, j| {
        if i == 0 {
            format!("h_{j}")
        } else {
            seq(i, j)
        }
    });
    for j in 0..n {
        let _ = writeln!(w, "{inner}h_{j} = {};", comp(body, body.result, j));
    }
    for j in 0..n {
        let _ = writeln!(w, "{inner}{store}{{ out[b{k} + t * tr{k} + {j}u * cs{k}] = h_{j}; }}");
    }
    let _ = writeln!(w, "{indent}}}");
}
