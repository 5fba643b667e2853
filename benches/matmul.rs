//! GFLOP/s of each matmul path at 256..2048 (criterion; `cargo bench --bench matmul`).
//!
//! Criterion's throughput line reads "elem/s": each element is one floating-point operation
//! (2 M K N per square product, 2 K N for the matrix-vector path's 1 x K x N), so Gelem/s is
//! GFLOP/s. The adapter comes from `ENGINE_BACKEND` / `WGPU_ADAPTER_NAME` as for the engine.
//! `ENGINE_BENCH_SIZES=256,512` overrides the sizes; software adapters (device type `Cpu`:
//! lavapipe, llvmpipe) default to 256 and 512, where a 2048^3 product on the 16x16 tile takes
//! minutes per sample. Each sample records the product and waits for the device.
//! Ceiling for comparison (measured on one H200, `benches/results/h200.md`): cuBLAS fp32 51.4 TFLOP/s; the naive 16x16
//! WGSL tile 3.26 TFLOP/s.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use wgsl_compute::check::Rng;
use wgsl_compute::ops::{self, MatmulPath};
use wgsl_compute::{Context, Tensor};

fn sizes(ctx: &Context) -> Vec<usize> {
    if let Ok(v) = std::env::var("ENGINE_BENCH_SIZES") {
        return v.split(',').filter_map(|s| s.trim().parse().ok()).collect();
    }
    if ctx.info().is_software() {
        eprintln!("software adapter: sizes 256 and 512 (ENGINE_BENCH_SIZES=256,512,1024,2048 for all)");
        return vec![256, 512];
    }
    vec![256, 512, 1024, 2048]
}

fn matmul_paths(c: &mut Criterion) {
    let ctx = Context::new().expect("a GPU adapter (ENGINE_BACKEND / WGPU_ADAPTER_NAME)");
    eprintln!(
        "adapter: {} ({:?}, {})",
        ctx.info().name,
        ctx.info().backend,
        ctx.info().device_type
    );
    let mut rng = Rng::new(1);
    let mut group = c.benchmark_group(format!("matmul {:?}", ctx.info().backend));
    group.sample_size(10);
    for n in sizes(&ctx) {
        let a = Tensor::from_slice(&ctx, &[n, n], &rng.vec_range(n * n, -1.0, 1.0)).expect("upload");
        let b = Tensor::from_slice(&ctx, &[n, n], &rng.vec_range(n * n, -1.0, 1.0)).expect("upload");
        let row = a.narrow(0, 0, 1).expect("one row");
        for path in MatmulPath::FORCED {
            let (lhs, flops) = match path {
                MatmulPath::Matvec => (&row, 2 * n * n),
                _ => (&a, 2 * n * n * n),
            };
            group.throughput(Throughput::Elements(flops as u64));
            group.bench_with_input(BenchmarkId::new(format!("{path:?}"), n), &n, |bench, _| {
                bench.iter(|| {
                    let c = ops::matmul_with(lhs, &b, path).expect("matmul");
                    ctx.synchronize().expect("device");
                    c
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, matmul_paths);
criterion_main!(benches);
