//! The four scans on the GPU against the f64 CPU reference, forward and forward+backward, at
//! the seed's two shapes: lab (B = 128, T = 64) and long-T (B = 16, T = 1024); D = 256 for
//! the channel scans, N = 64 for `matrix_scan`, N = 32 with k = v = 8 for
//! `matrix_affine_scan`. Throughput is reported as elements/s (output elements) and bytes/s
//! (the bytes each pass must read and write at least). Then the buffer pool's peak bytes in
//! use for a `matrix_affine_scan` forward+backward at B = 128, T = 64, N = 8, k = v = 8.
//!
//! ```text
//! cargo bench --bench scan [-- --quick] [filter]
//! ENGINE_BACKEND=vulkan cargo bench --bench scan -- gpu
//! ```
//! The GPU timings include one `synchronize` per iteration (the device has finished).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use wgsl_compute::check::Rng;
use wgsl_compute::scan::{self, Route, ScanOptions};
use wgsl_compute::{Context, Tensor};

/// One benchmarked configuration: its tensors on one context.
struct Inputs {
    op: &'static str,
    /// Transitions (a, A, log_coeffs), injections (b, B, log_values), output gradient.
    x: Tensor,
    y: Tensor,
    g: Tensor,
    /// Output elements of the forward.
    elements: u64,
    /// Bytes a forward must move (inputs read + output written), and a backward.
    fwd_bytes: u64,
    bwd_bytes: u64,
}

fn inputs(ctx: &Context, op: &'static str, b: usize, t: usize) -> Inputs {
    let mut rng = Rng::new(7);
    let up = |shape: &[usize], data: Vec<f32>| Tensor::from_slice(ctx, shape, &data).unwrap();
    let (xs, ys, hs): (Vec<usize>, Vec<usize>, Vec<usize>) = match op {
        "linear_scan" => (vec![b, t, 256], vec![b, t, 256], vec![b, t, 256]),
        "parallel_scan_log" => (vec![b, t, 256], vec![b, t + 1, 256], vec![b, t, 256]),
        "matrix_scan" => (vec![b, t, 64, 2, 2], vec![b, t, 64, 2], vec![b, t, 64, 2]),
        _ => (vec![b, t, 32, 8, 8], vec![b, t, 32, 8, 8], vec![b, t, 32, 8, 8]),
    };
    let n = |s: &[usize]| s.iter().product::<usize>();
    let k = if op == "matrix_affine_scan" { 8.0 } else { 2.0 };
    let x = match op {
        "parallel_scan_log" => rng
            .vec_normal(n(&xs), 1.0)
            .iter()
            .map(|&v| -(1.0 + v.exp()).ln())
            .collect(),
        "linear_scan" => rng.vec_range(n(&xs), -0.9, 0.9),
        _ => rng.vec_range(n(&xs), -0.6 / f64::sqrt(k), 0.6 / f64::sqrt(k)),
    };
    let y = rng.vec_range(n(&ys), -1.0, 1.0);
    let g = rng.vec_normal(n(&hs), 1.0);
    let (nx, ny, nh) = (n(&xs) as u64, n(&ys) as u64, n(&hs) as u64);
    Inputs {
        op,
        x: up(&xs, x),
        y: up(&ys, y),
        g: up(&hs, g),
        elements: nh,
        fwd_bytes: 4 * (nx + ny + nh),
        // Backward: read the transitions, the output and its gradient; write both gradients.
        bwd_bytes: 4 * (nx + nh + nh + nx + ny),
    }
}

fn forward(i: &Inputs, opts: &ScanOptions) -> Tensor {
    match i.op {
        "linear_scan" => scan::linear_scan_with(&i.x, &i.y, None, opts),
        "parallel_scan_log" => scan::parallel_scan_log_with(&i.x, &i.y, opts),
        "matrix_scan" => scan::matrix_scan_with(&i.x, &i.y, None, opts),
        _ => scan::matrix_affine_scan_with(&i.x, &i.y, None, opts),
    }
    .unwrap()
}

fn forward_backward(i: &Inputs, opts: &ScanOptions) -> Vec<Tensor> {
    let h = forward(i, opts);
    match i.op {
        "parallel_scan_log" => {
            let g = scan::parallel_scan_log_backward_with(&i.x, &i.y, &h, &i.g, opts).unwrap();
            vec![h, g.d_log_coeffs, g.d_log_values]
        }
        op => {
            let g = match op {
                "linear_scan" => scan::linear_scan_backward_with(&i.x, None, &h, &i.g, opts),
                "matrix_scan" => scan::matrix_scan_backward_with(&i.x, None, &h, &i.g, opts),
                _ => scan::matrix_affine_scan_backward_with(&i.x, None, &h, &i.g, opts),
            }
            .unwrap();
            vec![h, g.da, g.db, g.dh0]
        }
    }
}

fn gpu_context() -> Option<Context> {
    let ctx = Context::new().ok()?;
    if !ctx.is_gpu() {
        eprintln!("no GPU adapter: only the CPU reference is measured");
        return None;
    }
    Some(ctx)
}

fn bench_scans(c: &mut Criterion) {
    let gpu = gpu_context();
    if let Some(g) = &gpu {
        eprintln!(
            "adapter: {} ({:?}, {})",
            g.info().name,
            g.info().backend,
            g.info().device_type
        );
    }
    let cpu = Context::cpu();
    for (shape, b, t) in [("lab", 128, 64), ("longT", 16, 1024)] {
        for op in ["linear_scan", "parallel_scan_log", "matrix_scan", "matrix_affine_scan"] {
            let mut group = c.benchmark_group(format!("{op}/{shape}"));
            group.sample_size(10);
            let mut sides: Vec<(&str, Context, Route)> = vec![("cpu", cpu.clone(), Route::Cpu)];
            if let Some(g) = &gpu {
                sides.insert(0, ("gpu", g.clone(), Route::Gpu));
            }
            for (side, ctx, route) in &sides {
                let i = inputs(ctx, op, b, t);
                let opts = ScanOptions::route(*route);
                group.throughput(Throughput::ElementsAndBytes {
                    elements: i.elements,
                    bytes: i.fwd_bytes,
                });
                group.bench_function(BenchmarkId::new("fwd", side), |bch| {
                    bch.iter(|| {
                        let h = forward(&i, &opts);
                        ctx.synchronize().unwrap();
                        h
                    })
                });
                group.throughput(Throughput::ElementsAndBytes {
                    elements: i.elements,
                    bytes: i.fwd_bytes + i.bwd_bytes,
                });
                group.bench_function(BenchmarkId::new("fwd+bwd", side), |bch| {
                    bch.iter(|| {
                        let out = forward_backward(&i, &opts);
                        ctx.synchronize().unwrap();
                        out
                    })
                });
            }
            group.finish();
        }
    }
}

/// The pool's peak bytes in use for one `matrix_affine_scan` forward+backward at B = 128,
/// T = 64, N = 8, k = v = 8, inputs included (printed, not timed).
fn pool_peak(_: &mut Criterion) {
    let Some(ctx) = gpu_context() else { return };
    ctx.synchronize().unwrap();
    ctx.reset_pool_peak();
    let before = ctx.pool_stats().in_use;
    let (b, t, n, k) = (128, 64, 8, 8);
    let mut rng = Rng::new(3);
    let a = Tensor::from_slice(&ctx, &[b, t, n, k, k], &rng.vec_range(b * t * n * k * k, -0.2, 0.2)).unwrap();
    let x = Tensor::from_slice(&ctx, &[b, t, n, k, k], &rng.vec_range(b * t * n * k * k, -1.0, 1.0)).unwrap();
    let g = Tensor::from_slice(&ctx, &[b, t, n, k, k], &rng.vec_normal(b * t * n * k * k, 1.0)).unwrap();
    let inputs_bytes = ctx.pool_stats().in_use - before;
    let opts = ScanOptions::route(Route::Gpu);
    let h = scan::matrix_affine_scan_with(&a, &x, None, &opts).unwrap();
    let grads = scan::matrix_affine_scan_backward_with(&a, None, &h, &g, &opts).unwrap();
    ctx.synchronize().unwrap();
    let peak = ctx.pool_stats().peak_in_use - before;
    let tensor_bytes = (b * t * n * k * k * 4) as f64;
    println!(
        "pool peak for matrix_affine_scan fwd+bwd (B={b}, T={t}, N={n}, k=v={k}): {:.2} MB in use at peak \
         ({:.2} MB of it the inputs A, B, dH; one such tensor is {:.2} MB); {:.2} MB beyond the inputs",
        peak as f64 / 1e6,
        inputs_bytes as f64 / 1e6,
        tensor_bytes / 1e6,
        (peak - inputs_bytes) as f64 / 1e6,
    );
    drop((h, grads));
}

criterion_group!(benches, pool_peak, bench_scans);
criterion_main!(benches);
