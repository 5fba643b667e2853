// The loss scaler's step on the device (engine/train/loss_scale.rs, whose host `update` is the
// reference), after a step's unscale (unscale.wgsl) and its gated optimiser step:
//   state = (S, finite steps in a row, found, steps skipped, last found)
// found (an inf or NaN in this step's gradients): S halves (not below the smallest normal
// f32), the count restarts, skipped + 1; else the count + 1, and at growth_interval S doubles
// (while the double is finite) and the count restarts. found moves to last found (what the
// host reads back) and is cleared for the next step. Counts are whole f32s (exact to 2^24).

struct Params {
    growth_interval: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> state: array<f32>; // (5,)

const MIN_NORMAL: f32 = 1.17549435e-38;
const EXPONENT: u32 = 0x7f800000u;

@compute @workgroup_size(1)
fn loss_scale_update() {
    let found = state[2];
    if found != 0.0 {
        state[0] = max(state[0] * 0.5, MIN_NORMAL);
        state[1] = 0.0;
        state[3] = state[3] + 1.0;
    } else {
        let finite = state[1] + 1.0;
        if finite >= f32(p.growth_interval) {
            state[1] = 0.0;
            let doubled = state[0] * 2.0;
            // The bit test, not isinf: WGSL lets a compiler assume floats are finite.
            if (bitcast<u32>(doubled) & EXPONENT) != EXPONENT {
                state[0] = doubled;
            }
        } else {
            state[1] = finite;
        }
    }
    state[4] = found;
    state[2] = 0.0;
}
