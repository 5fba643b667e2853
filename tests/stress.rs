//! Device loss, threads and memory (issue 21, item 3): a destroyed device turns every later
//! call into `Error::DeviceLost` and a new context still works; 8 threads share one context
//! for 1,000 mixed ops each with correct results (Vulkan and GL); a 10,000-op soak keeps host
//! RSS and pool bytes within 10% after warm-up.

use wgsl_compute::context::Backend;
use wgsl_compute::{ops, Context, Error, Tensor};

use crate::common::{contexts, each_adapter};

/// A device of its own on the first adapter of `backend`, handed to the engine, so the test
/// can destroy it.
fn own_device(backend: wgpu::Backends) -> Option<(Context, wgpu::Device)> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backend;
    let instance = wgpu::Instance::new(desc);
    let adapter = pollster::block_on(instance.enumerate_adapters(backend))
        .into_iter()
        .next()?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default())).ok()?;
    Some((Context::from_wgpu(device.clone(), queue), device))
}

#[test]
fn stress_device_loss_is_an_error_and_a_new_context_works() {
    if contexts().iter().all(|c| c.info().backend != Backend::Vulkan) {
        eprintln!("SKIPPED stress_device_loss: no Vulkan adapter");
        return;
    }
    let (ctx, device) = own_device(wgpu::Backends::VULKAN).expect("a Vulkan device");
    let a = Tensor::from_slice(&ctx, &[4], &[1.0, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!(ops::add(&a, &a).unwrap().to_vec().unwrap(), vec![2.0, 4.0, 6.0, 8.0]);

    device.destroy();
    let lost = |what: &str, r: wgsl_compute::Result<Vec<f32>>| match r {
        Err(Error::DeviceLost(_)) => {}
        other => panic!("{what} after device.destroy(): {other:?}, expected Error::DeviceLost"),
    };
    lost("to_vec", a.to_vec());
    lost("add", ops::add(&a, &a).and_then(|t| t.to_vec()));
    lost(
        "from_slice",
        Tensor::from_slice(&ctx, &[2], &[1.0, 2.0]).and_then(|t| t.to_vec()),
    );
    lost("zeros", Tensor::zeros(&ctx, &[3]).and_then(|t| t.to_vec()));
    lost(
        "matmul",
        ops::matmul(&a.reshape(&[2, 2]).unwrap(), &a.reshape(&[2, 2]).unwrap()).and_then(|t| t.to_vec()),
    );
    lost("synchronize", ctx.synchronize().map(|_| vec![]));

    // A new context on the same adapter works.
    let (fresh, _device) = own_device(wgpu::Backends::VULKAN).expect("a second device");
    let b = Tensor::from_slice(&fresh, &[3], &[1.0, 2.0, 3.0]).unwrap();
    assert_eq!(ops::mul(&b, &b).unwrap().to_vec().unwrap(), vec![1.0, 4.0, 9.0]);
}

/// One thread's mixed ops on `ctx`, each checked against host arithmetic.
fn mixed_ops(ctx: &Context, thread: usize, n: usize) {
    let mut rng = wgsl_compute::check::Rng::new(100 + thread as u64);
    for i in 0..n {
        let (r, c) = (1 + rng.below(4), 1 + rng.below(33));
        let x = rng.vec_range(r * c, -2.0, 2.0);
        let y = rng.vec_range(r * c, -2.0, 2.0);
        let tx = Tensor::from_slice(ctx, &[r, c], &x).unwrap();
        let ty = Tensor::from_slice(ctx, &[r, c], &y).unwrap();
        let (got, want): (Vec<f32>, Vec<f32>) = match i % 5 {
            0 => (
                ops::add(&tx, &ty).unwrap().to_vec().unwrap(),
                x.iter().zip(&y).map(|(a, b)| a + b).collect(),
            ),
            1 => (
                ops::mul(&tx, &ty).unwrap().to_vec().unwrap(),
                x.iter().zip(&y).map(|(a, b)| a * b).collect(),
            ),
            2 => (
                ops::sum_last(&tx).unwrap().to_vec().unwrap(),
                x.chunks(c)
                    .map(|row| row.iter().map(|&v| v as f64).sum::<f64>() as f32)
                    .collect(),
            ),
            3 => {
                // (r, c) @ (c, r)
                let got = ops::matmul(&tx, &ty.transpose(0, 1).unwrap())
                    .unwrap()
                    .to_vec()
                    .unwrap();
                let mut want = vec![0f32; r * r];
                for a in 0..r {
                    for b in 0..r {
                        want[a * r + b] = (0..c).map(|k| x[a * c + k] as f64 * y[b * c + k] as f64).sum::<f64>() as f32;
                    }
                }
                (got, want)
            }
            _ => {
                let dst = Tensor::zeros(ctx, &[r, c]).unwrap();
                ops::copy_into(&dst, &tx).unwrap();
                (dst.to_vec().unwrap(), x.clone())
            }
        };
        assert_eq!(got.len(), want.len());
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-4 + 1e-4 * w.abs(),
                "thread {thread} op {i} ({}) element {k}: {g} vs {w} on {}",
                i % 5,
                ctx.info().name
            );
        }
    }
}

#[test]
fn stress_eight_threads_share_one_context() {
    let threads = 8;
    let ops_per_thread = std::env::var("ENGINE_STRESS_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let run = |ctx: &Context| {
        let t0 = std::time::Instant::now();
        std::thread::scope(|s| {
            for t in 0..threads {
                s.spawn(move || mixed_ops(ctx, t, ops_per_thread));
            }
        });
        eprintln!(
            "stress: {threads} threads x {ops_per_thread} ops on {} ({:?}): {:.1} s",
            ctx.info().name,
            ctx.info().backend,
            t0.elapsed().as_secs_f64()
        );
    };
    run(&Context::cpu());
    each_adapter(run);
}

/// Resident set size of this process in bytes (Linux; 0 elsewhere).
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .map_or(0, |pages| pages * 4096)
}

/// The soak itself, in a child process (so other tests' allocations do not move its RSS).
#[test]
fn stress_soak_probe() {
    if std::env::var_os("ENGINE_SOAK_PROBE").is_none() {
        return;
    }
    let ctx = pollster::block_on(Context::each_adapter())
        .unwrap()
        .into_iter()
        .find(|c| c.info().backend == Backend::Vulkan)
        .unwrap_or_else(Context::cpu);
    let (warm, total) = (1_000, 10_000);
    let mut rng = wgsl_compute::check::Rng::new(7);
    let x = Tensor::from_slice(&ctx, &[16, 64], &rng.vec_range(1024, -1.0, 1.0)).unwrap();
    let w = Tensor::from_slice(&ctx, &[64, 64], &rng.vec_range(4096, -0.1, 0.1)).unwrap();
    let mut marks = (0, 0);
    for i in 0..total {
        let y = match i % 4 {
            0 => ops::matmul(&x, &w).unwrap(),
            1 => ops::gelu(&x).unwrap(),
            2 => ops::softmax_last(&x, Some(i % 16)).unwrap(),
            _ => ops::add(&x, &x).unwrap(),
        };
        if i % 100 == 99 {
            y.to_vec().unwrap();
        }
        if i + 1 == warm {
            ctx.synchronize().unwrap();
            let p = ctx.pool_stats();
            marks = (rss(), p.in_use + p.idle);
        }
    }
    ctx.synchronize().unwrap();
    let p = ctx.pool_stats();
    println!(
        "soak: {total} ops on {}: rss {} -> {} bytes, pool {} -> {} bytes",
        ctx.info().name,
        marks.0,
        rss(),
        marks.1,
        p.in_use + p.idle
    );
}

#[test]
fn stress_soak_keeps_memory_bounded() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "--exact",
            "stress::stress_soak_probe",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ENGINE_SOAK_PROBE", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let line = text
        .lines()
        .find_map(|l| l.find("soak:").map(|i| &l[i..]))
        .unwrap_or_else(|| panic!("no soak line: {text}{}", String::from_utf8_lossy(&out.stderr)));
    eprintln!("{line}");
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|s| s.parse().ok())
        .collect();
    // [total, (adapter digits...), rss0, rss1, pool0, pool1]: the last four.
    let [r0, r1, p0, p1] = nums[nums.len() - 4..] else {
        unreachable!()
    };
    assert!(
        r1 as f64 <= r0 as f64 * 1.10,
        "{line}: RSS grew more than 10% after warm-up"
    );
    assert!(
        p1 as f64 <= p0 as f64 * 1.10,
        "{line}: pool bytes grew more than 10% after warm-up"
    );
}
