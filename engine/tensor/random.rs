//! Seeded random tensors, drawn on the host from [`Rng`] (the generator the tests and
//! benchmarks use, `check::Rng`, also `wgsl_compute::Rng`) and uploaded: equal seeds give
//! equal tensors on every context and adapter.

use super::create::host_vec;
use super::Tensor;
use crate::check::Rng;
use crate::context::Context;
use crate::error::Result;
use crate::shape::numel;

impl Tensor {
    /// A tensor of `shape` with values uniform in [0, 1), drawn from `Rng::new(seed)`.
    pub fn rand(ctx: &Context, shape: &[usize], seed: u64) -> Result<Tensor> {
        // 24 random bits: every value an f32 below 1 (a rounded 53-bit uniform could be 1.0).
        Self::random(ctx, shape, "Tensor::rand", seed, |r| {
            (r.next_u64() >> 40) as f64 / (1u64 << 24) as f64
        })
    }

    /// A tensor of `shape` with standard normal values (mean 0, standard deviation 1),
    /// drawn from `Rng::new(seed)`.
    pub fn randn(ctx: &Context, shape: &[usize], seed: u64) -> Result<Tensor> {
        Self::random(ctx, shape, "Tensor::randn", seed, |r| r.normal())
    }

    fn random(
        ctx: &Context,
        shape: &[usize],
        op: &'static str,
        seed: u64,
        mut draw: impl FnMut(&mut Rng) -> f64,
    ) -> Result<Tensor> {
        // Checked (element count, host allocator) before anything is drawn.
        let n = numel(op, "shape", shape)?;
        let mut v = host_vec(op, "shape", n)?;
        let mut rng = Rng::new(seed);
        v.extend((0..n).map(|_| draw(&mut rng) as f32));
        Tensor::from_slice(ctx, shape, &v)
    }
}
