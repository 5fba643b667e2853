// The decode state of a compiled generation (prepended to the model's decode kernels and the
// sampler): one small device buffer the plan's kernels read and the sampler advances, so one
// plan serves every step (`engine/generate/device.rs`).
//   pos:   position of the current token (the one the next step embeds)
//   step:  tokens chosen so far (index into the ids ring)
//   token: the current token id
//   mode:  0 greedy, 1 top-k sampling with `top_k` candidates and `temperature`
//   seed_lo, seed_hi: the sampler's seed; draw i uses the counter (seed, i)

struct State {
    pos: u32,
    step: u32,
    token: u32,
    mode: u32,
    top_k: u32,
    temperature: f32,
    seed_lo: u32,
    seed_hi: u32,
}
