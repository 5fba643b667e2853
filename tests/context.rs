//! Context, tensor and pool plumbing.

use wgsl_compute::{Context, Tensor};

use crate::common::{each_adapter, each_adapter_alone};

#[test]
fn cpu_context_runs_the_reference() {
    let ctx = Context::cpu();
    assert!(!ctx.is_gpu());
    let a = Tensor::from_slice(&ctx, &[2, 2], &[1.0, 2.0, 3.0, 4.0]).unwrap();
    let b = wgsl_compute::ops::exp(&a).unwrap();
    let got = b.to_vec().unwrap();
    assert!((got[3] - 4f32.exp()).abs() < 1e-5);
}

#[test]
fn info_reports_limits_and_features() {
    each_adapter(|ctx| {
        let info = ctx.info();
        assert!(info.max_storage_binding >= 128 << 20, "{info}");
        assert!(info.max_invocations >= 256, "{info}");
        let text = info.to_string();
        assert!(text.contains(&info.name) && text.contains("storage binding"));
    });
}

#[test]
fn tensors_round_trip_and_views_need_no_copy() {
    each_adapter(|ctx| {
        let data: Vec<f32> = (0..24).map(|i| i as f32 * 0.5 - 3.0).collect();
        let t = Tensor::from_slice(ctx, &[2, 3, 4], &data).unwrap();
        assert_eq!(t.to_vec().unwrap(), data);
        let arr = t.to_array().unwrap();
        assert_eq!(arr.shape(), &[2, 3, 4]);

        // A transposed, narrowed view reads back in its own row-major order.
        let v = t.transpose(0, 2).unwrap().narrow(1, 1, 3).unwrap(); // (4, 2, 2)
        assert_eq!(v.shape(), &[4, 2, 2]);
        let want: Vec<f32> = arr
            .permuted_axes(vec![2, 1, 0])
            .slice(ndarray::s![.., 1..3, ..])
            .iter()
            .copied()
            .collect();
        assert_eq!(v.to_vec().unwrap(), want);
        assert!(!v.is_contiguous());
        assert!(v.contiguous().unwrap().is_contiguous());
        let r = t.reshape(&[6, 4]).unwrap();
        assert_eq!(r.to_vec().unwrap(), data);
        assert!(t.reshape(&[5, 5]).is_err());
    });
}

#[test]
fn an_upload_larger_than_one_staged_piece_arrives_whole() {
    // Gpu::write stages 16 MiB at a time: 20 MiB is two pieces, the second partial.
    each_adapter(|ctx| {
        let n = 5 << 20;
        let data: Vec<f32> = (0..n).map(|i| (i % 9973) as f32 - 17.0).collect();
        let t = Tensor::from_slice(ctx, &[n], &data).unwrap();
        let back = t.to_vec().unwrap();
        assert!(back == data, "the upload differs from the data");
    });
}

#[test]
fn from_slice_rejects_a_wrong_length() {
    each_adapter(|ctx| {
        let e = Tensor::from_slice(ctx, &[2, 3], &[1.0; 5]).unwrap_err().to_string();
        assert!(
            e.contains("Tensor::from_slice") && e.contains('6') && e.contains('5'),
            "{e}"
        );
    });
}

#[test]
fn too_large_tensors_are_a_clear_error() {
    each_adapter(|ctx| {
        let limit = ctx.info().max_storage_binding;
        let n = (limit / 4 + 1) as usize;
        let e = Tensor::zeros(ctx, &[n]).unwrap_err().to_string();
        assert!(e.contains("storage binding limit"), "{e}");
    });
}

#[test]
fn pool_reuses_freed_buffers_and_tracks_the_peak() {
    // Fresh contexts: the shared ones serve other tests concurrently, which moves the counts.
    let fresh = pollster::block_on(Context::each_adapter()).unwrap();
    fresh.iter().for_each(|ctx| {
        let before = ctx.pool_stats();
        ctx.reset_pool_peak();
        {
            let _a = Tensor::zeros(ctx, &[1000]).unwrap();
            let _b = Tensor::zeros(ctx, &[1000]).unwrap();
            assert!(ctx.pool_stats().in_use >= before.in_use + 8000);
        }
        let mid = ctx.pool_stats();
        let _c = Tensor::zeros(ctx, &[1000]).unwrap();
        let after = ctx.pool_stats();
        assert!(
            after.reused > mid.reused,
            "a freed buffer of the same class is reused: {after:?}"
        );
        assert!(after.peak_in_use >= before.in_use + 8000);
    });
}

#[test]
fn pipelines_are_built_once_across_threads() {
    each_adapter_alone(|ctx| {
        let x = Tensor::from_slice(ctx, &[64], &[0.5; 64]).unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| wgsl_compute::ops::sigmoid(&x).unwrap().to_vec().unwrap());
            }
        });
        let built = ctx.pipelines_built();
        for n in [1usize, 7, 300] {
            let y = Tensor::from_slice(ctx, &[n], &vec![0.25; n]).unwrap();
            wgsl_compute::ops::sigmoid(&y).unwrap().to_vec().unwrap();
        }
        assert_eq!(ctx.pipelines_built(), built, "new shapes reuse the pipeline");
    });
}

#[test]
fn bad_wgsl_is_an_error_with_the_kernel_name_and_source() {
    each_adapter(|ctx| {
        let e = wgsl_compute::context::check_wgsl(ctx, "broken", "fn main( {")
            .unwrap_err()
            .to_string();
        assert!(e.contains("broken") && e.contains("fn main("), "{e}");
    });
}

#[test]
fn mixing_contexts_is_an_error() {
    each_adapter(|ctx| {
        let a = Tensor::zeros(ctx, &[3]).unwrap();
        let b = Tensor::zeros(&Context::cpu(), &[3]).unwrap();
        let e = wgsl_compute::ops::add(&a, &b).unwrap_err().to_string();
        assert!(e.contains("add") && e.contains("different context"), "{e}");
    });
}

#[test]
fn regions_are_timed_on_the_device_when_timestamps_exist() {
    each_adapter(|ctx| {
        let x = Tensor::from_slice(ctx, &[4096], &[0.5; 4096]).unwrap();
        let (y, timed) = ctx.time(|| wgsl_compute::ops::exp(&x)).unwrap();
        assert_eq!(y.shape(), &[4096]);
        assert!(timed.seconds.is_finite() && timed.seconds >= 0.0, "{timed:?}");
    });
}

#[test]
fn a_healthy_run_prints_no_error_line() {
    // Mesa's implicit Vulkan layer (VK_LAYER_MESA_device_select) printed "error:
    // XDG_RUNTIME_DIR is invalid ..." twice on machines without a display; the engine skips it
    // (engine/context/adapter.rs). The info example opens every adapter and runs an op.
    let exe = std::env::current_exe().expect("the test binary's path");
    let info = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|dir| {
            dir.join("examples")
                .join(format!("info{}", std::env::consts::EXE_SUFFIX))
        })
        .expect("target/<profile>/examples");
    if !info.exists() {
        eprintln!(
            "SKIPPED a_healthy_run_prints_no_error_line: {} is not built",
            info.display()
        );
        return;
    }
    let out = std::process::Command::new(&info)
        .env_remove("NODEVICE_SELECT")
        .output()
        .expect("the info example runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "info failed: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.to_lowercase().contains("error")).collect();
    assert!(errors.is_empty(), "a healthy run printed {errors:?}");
}
