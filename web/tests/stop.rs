//! The page's Stop for a generation, natively on the CPU reference (the path the page takes
//! on a software adapter): a stop asked during token k ends the run after token k, with the
//! same ids as a full run up to there, and the next generation runs in full again.

use std::cell::Cell;

use engine_web::gpt2::Model;
use wgsl_compute::generate::Sampling;
use wgsl_compute::Context;

const CONFIG: &str = include_str!("../../assets/models/tiny-random/config.json");
const WEIGHTS: &[u8] = include_bytes!("../../assets/models/tiny-random/model.safetensors");

#[test]
fn stop_ends_a_generation_after_the_token_it_is_on() {
    let ctx = Context::cpu();
    let model = Model::load(&ctx, CONFIG, WEIGHTS, None).unwrap();
    let run = |stop_at: Option<usize>| {
        let pauses = Cell::new(0);
        let ids = pollster::block_on(model.generate_ids(
            &[464, 3290],
            12,
            Sampling::Greedy,
            || {
                pauses.set(pauses.get() + 1);
                async {}
            },
            |_| {
                if stop_at == Some(pauses.get() + 1) {
                    model.stop.request();
                }
            },
        ))
        .unwrap();
        (ids, pauses.get())
    };
    let (full, pauses) = run(None);
    assert_eq!((full.len(), pauses), (12, 12), "a pause after every token");
    let (stopped, _) = run(Some(4));
    assert_eq!(stopped, full[..4], "stopped during token 4: its ids so far");
    assert_eq!(run(None).0, full, "the next generation runs in full");
}
