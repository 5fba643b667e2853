// Advances Adam's bias-correction state on the device, once per step before its updates
// (adam.wgsl reads it): beta1^t and beta2^t as running f32 products, the same multiplications
// the host's reference makes, so that a captured training step replayed steps on; not on a
// step its gate skips (adam.wgsl).

struct Params {
    beta1: f32,
    beta2: f32,
    gate_at: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> powers: array<f32>; // (2,) beta1^t, beta2^t
@group(0) @binding(2) var<storage, read> gate: array<f32>;         // (gate_at + 1,) 0: step

@compute @workgroup_size(1)
fn adam_tick() {
    if gate[p.gate_at] != 0.0 {
        return;
    }
    powers[0] = powers[0] * p.beta1;
    powers[1] = powers[1] * p.beta2;
}
