// GELU, tanh form (GPT-2's "gelu_new"), prepended to the kernels whose epilogue applies it.

fn gelu_tanh(x: f32) -> f32 {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); the clamp keeps tanh away from exp overflow.
    let u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + tanh(clamp(u, -15.0, 15.0)));
}
