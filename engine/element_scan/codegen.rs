//! The element-scan kernel around a body: one compute kernel per (body, direction).
//!
//! One invocation per lane; the state lives in registers (`h_0 .. h_{n-1}`), a loop walks the
//! trip axis forward or backward, reads each sequence's components at the lane and trip,
//! evaluates the body (emitted by the IR's one code generator, [`crate::expr::codegen`]) and
//! writes the new state. Lane shape, trip count and every stride come from the uniform, so
//! one pipeline serves every shape; the kernel name carries the hash of the body.
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
    let _ = writeln!(w, "    let lane = invocation(wid, nwg, lid);");
    let _ = writeln!(w, "    if lane >= p.launch.lanes {{\n        return;\n    }}");
    for i in 0..=k {
        let _ = writeln!(w, "    let b{i} = base({i}u, lane);");
    }
    for j in 0..n {
        let _ = writeln!(w, "    var h_{j}: f32 = in0[b0 + {j}u * p.views[0].comp];");
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
        let _ = writeln!(
            w,
            "        h_{j} = out[b{k} + tp * p.views[{k}].trip + {j}u * p.views[{k}].comp];"
        );
    }
    let _ = writeln!(w, "    }}");
    let _ = writeln!(w, "    for (var i = 0u; i < p.launch.t_end - p.launch.t_begin; i++) {{");
    let _ = writeln!(
        w,
        "        let t = time_at(p.launch.t_begin, p.launch.t_end, i, {reverse});"
    );
    emit(w, body, "        ", Width::Scalar, |i, j| {
        if i == 0 {
            format!("h_{j}")
        } else {
            format!("in{i}[b{i} + t * p.views[{i}].trip + {j}u * p.views[{i}].comp]")
        }
    });
    for j in 0..n {
        let _ = writeln!(w, "        h_{j} = {};", comp(body, body.result, j));
    }
    for j in 0..n {
        let _ = writeln!(
            w,
            "        out[b{k} + t * p.views[{k}].trip + {j}u * p.views[{k}].comp] = h_{j};"
        );
    }
    let _ = writeln!(w, "    }}\n}}");
    s
}
