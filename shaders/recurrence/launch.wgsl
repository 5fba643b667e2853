// The recurrence launch (engine/recurrence/launch.rs), prelude of every recurrence kernel: the
// scans, the mixers' fused scans and generated element scans (the mixers' gate kernels use
// its invocation index too).
//
// Every recurrence kernel's uniform opens with `launch: Launch`, written by the one launch:
//   lanes walks of t_len steps; a lane walk (strategy lanes) covers [t_begin, t_end) of T in
//   this dispatch (a walk is split into segments on adapters that cap a shader's loops) and
//   resumes from the state the previous segment left; the chunked passes split T into
//   `chunks` chunks of `chunk` steps (the last one shorter).
// Invocation index = (wid.x + wid.y * nwg.x) * WG + lid: workgroups folded into x and y so
// no dimension passes 65535. WG is the workgroup size of every recurrence entry point; the
// launch reads it from here (recurrence::launch::WORKGROUP).

const WG: u32 = 64u;

struct Launch {
    lanes: u32,   // independent walks
    t_len: u32,   // T, the steps of a whole walk
    t_begin: u32, // lane walks: the segment [t_begin, t_end) of T this dispatch walks
    t_end: u32,
    chunk: u32,   // chunked passes: steps per chunk
    chunks: u32,  // ceil(T / chunk)
    _pad0: u32,
    _pad1: u32,
}

fn invocation(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wid.x + wid.y * nwg.x) * WG + lid;
}

// Whether this segment of a lane walk continues one: it does not start at the walk's first
// step (t = 0 forward, t = T - 1 in reverse).
fn launch_resumes(l: Launch, reverse: bool) -> bool {
    return select(l.t_begin > 0u, l.t_end < l.t_len, reverse);
}

// The first step of chunk c and the end of its range.
fn chunk_start(l: Launch, c: u32) -> u32 {
    return c * l.chunk;
}

fn chunk_end(l: Launch, c: u32) -> u32 {
    return min((c + 1u) * l.chunk, l.t_len);
}

// The time index of the q-th step of the range [start, end) in scan order.
fn time_at(start: u32, end: u32, q: u32, reverse: bool) -> u32 {
    return select(start + q, end - 1u - q, reverse);
}
