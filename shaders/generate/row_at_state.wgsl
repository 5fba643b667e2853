// prelude: generate/state.wgsl
// dtype: table scalar
// One row of a table, picked by the decode state: the current token's (an embedding) or the
// current position's (a table of rotary angles):
//   out[c] = table[r * W + c]     c < W,   r = state.token (WHICH 0) or state.pos (WHICH 1)
// r is clamped below R, so a bad state can never read out of bounds. The table is F32, F16
// or BF16 (a dtype slot), dense from offset 0. Grid: ceil(W / 256) workgroups.

struct Params {
    w: u32,    // W, the row's length
    rows: u32, // R
    which: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> state: State;
@group(0) @binding(2) var<storage, read> table: array<table_word>; // (R, W)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;    // (1, W)

@compute @workgroup_size(256)
fn row_at_state(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    if c >= p.w {
        return;
    }
    let r = min(select(state.token, state.pos, p.which == 1u), p.rows - 1u);
    out[c] = table_at(r * p.w + c);
}
