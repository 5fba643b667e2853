//! The page's trainer, run natively on every adapter present: a few steps lower the loss, a
//! sample has the asked length, and bad input is an error.

use engine_web::train::Trainer;
use wgsl_compute::context::Backend;
use wgsl_compute::Context;

const TEXT: &str = include_str!("../../assets/text/shakespeare.txt");

#[test]
fn the_page_trainer_learns_on_every_adapter() {
    let list = pollster::block_on(Context::each_adapter()).expect("enumerating adapters");
    if list.is_empty() && wgsl_compute::context::require_gpu() {
        panic!("ENGINE_REQUIRE_GPU=1 but no GPU adapter was found");
    }
    // Vulkan only: 15 steps on llvmpipe GL take 40 s here, and tests/train.rs already trains
    // every mixer on GL through the same wgsl_compute::train code.
    for ctx in list.iter().filter(|c| c.info().backend != Backend::Gl) {
        let mut t = Trainer::new(ctx, &TEXT[..20_000], "givens:4", 32, 16, 3).unwrap();
        let losses: Vec<f32> = (0..15).map(|_| pollster::block_on(t.step()).unwrap()).collect();
        let (first, last) = (
            losses[..3].iter().sum::<f32>() / 3.0,
            losses[12..].iter().sum::<f32>() / 3.0,
        );
        assert!(last < 0.9 * first, "{}: loss {first} -> {last}", ctx.info().name);
        let s = pollster::block_on(t.sample("ROMEO:\n", 20, 0.8)).unwrap();
        assert_eq!(s.chars().count(), 20);
        assert!(t.describe().contains("GivensMinGRU(k=4)"));
    }
    let cpu = Context::cpu();
    assert!(Trainer::new(&cpu, TEXT, "lstm", 32, 4, 0).is_err());
    assert!(Trainer::new(&cpu, "abcabc", "mingru", 32, 4, 0).is_err());
    assert!(
        Trainer::new(&cpu, TEXT, "givens:8", 12, 4, 0).is_err(),
        "width 12 is not a multiple of 8"
    );
    assert!(Trainer::new(&cpu, TEXT, "mingru", 32, 0, 0).is_err());
}
