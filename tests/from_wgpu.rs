//! `Context::from_wgpu` on an application's own device (issue 41, finding 1): the context
//! knows the adapter behind the device, so on a software adapter (lavapipe, llvmpipe GL) its
//! walks stay under Mesa's 65,535-trip loop limit as those of `Context::new` do.
//!
//! Each test opens a device of its own on every adapter the harness offers, as an application
//! would, and hands it to the engine.

use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::scan::{self, Route, ScanOptions, Strategy};
use wgsl_compute::{Context, Tensor};

use crate::common::{assert_close, each_adapter};

/// A device the application opens itself on `shared`'s adapter (default descriptor, as
/// `examples/texture.rs` does), handed to the engine; outputs poisoned (NaN) so an element a
/// walk never reached fails. Also used by `campaign_surfaces`.
pub fn app_context(shared: &Context) -> Context {
    wgsl_compute::context::skip_device_select_layer();
    let backends = wgpu::Backends::from(shared.info().backend);
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    let instance = wgpu::Instance::new(desc);
    let adapter = pollster::block_on(instance.enumerate_adapters(backends))
        .into_iter()
        .find(|a| a.get_info().name == shared.info().name)
        .expect("the shared context's adapter again");
    let (device, queue) =
        pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor::default())).expect("a device");
    let ctx = Context::from_wgpu(device, queue);
    ctx.set_poison(Some(f32::NAN));
    // As the shared contexts: the hand rules, and no cache file written.
    ctx.set_tune_mode(wgsl_compute::tune::TuneMode::Off);
    ctx
}

#[test]
fn from_wgpu_keeps_the_adapters_identity() {
    each_adapter(|shared| {
        let ctx = app_context(shared);
        let (got, want) = (ctx.info(), shared.info());
        assert_eq!(
            (&got.name, got.backend, got.kind, &got.device_type, &got.driver),
            (&want.name, want.backend, want.kind, &want.device_type, &want.driver),
            "from_wgpu against from_adapter"
        );
        assert_eq!((got.vendor, got.device_id), (want.vendor, want.device_id));
        assert_eq!(got.is_software(), want.is_software());
    });
}

#[test]
fn from_wgpu_element_scan_longer_than_the_software_loop_limit() {
    // h_t = x_t + h_{t-1} over T = 70,000 trips, two lanes. Every x is a multiple of 1/8 in
    // [-1, 1], so every partial sum is exact in f32: the GPU must equal the interpreter bit for
    // bit, at t = 69,999 as everywhere (before the fix lavapipe returned 0 there).
    const T: usize = 70_000;
    let mut rng = Rng::new(41_001);
    let x: Vec<f32> = (0..T * 2).map(|_| (rng.below(17) as f32 - 8.0) / 8.0).collect();
    let bind = Bindings::new()
        .tensor(
            "x",
            ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[T, 2]), x).unwrap(),
        )
        .tensor("initial", ndarray::arr1(&[0.25f32, -0.5]).into_dyn());
    let scan =
        ElementScan::from_sexpr("(element-scan (lambda (h x) (+ x h)) initial (list x) :axis 0)", &bind).unwrap();
    let want = scan.run(&Context::cpu()).unwrap().to_vec().unwrap();
    each_adapter(|shared| {
        let ctx = app_context(shared);
        let got = scan.run(&ctx).unwrap().to_vec().unwrap();
        let at = |v: &[f32]| [v[2 * (T - 1)], v[2 * (T - 1) + 1]];
        assert_eq!(at(&got), at(&want), "t = 69,999 on {}", ctx.info().name);
        let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        let first = got.iter().zip(&want).position(|(g, w)| g != w);
        assert_eq!(
            wrong,
            0,
            "wrong values on {}; the first at flat index {first:?}",
            ctx.info().name
        );
    });
}

#[test]
fn from_wgpu_linear_scan_lanes_longer_than_the_software_loop_limit() {
    // linear_scan forced to lane walks (one invocation walks all T = 600,000 steps of its
    // channel) on the GPU route, forward and backward, against the CPU context's f64
    // reference. The forward walk takes 16 steps a loop trip and the backward 8, so the
    // backward's 75,000 trips pass the limit unless the walk is split.
    const T: usize = 600_000;
    let mut rng = Rng::new(41_002);
    let a = rng.vec_range(T * 2, 0.3, 0.95);
    let b = rng.vec_range(T * 2, -1.0, 1.0);
    let g = rng.vec_range(T * 2, -1.0, 1.0);
    let run = |ctx: &Context, route: Route| {
        let opts = ScanOptions::route(route).with_strategy(Strategy::Lanes);
        let [a, b, g] = [&a, &b, &g].map(|v| Tensor::from_slice(ctx, &[1, T, 2], v).unwrap());
        let h = scan::linear_scan_with(&a, &b, None, &opts).unwrap();
        let d = scan::linear_scan_backward_with(&a, None, &h, &g, &opts).unwrap();
        [h, d.da, d.db, d.dh0].map(|t| t.to_vec().unwrap())
    };
    let want = run(&Context::cpu(), Route::Cpu);
    each_adapter(|shared| {
        let ctx = app_context(shared);
        let got = run(&ctx, Route::Gpu);
        for (i, name) in ["h", "da", "db", "dh0"].iter().enumerate() {
            let case = format!("linear_scan {name}, Lanes, T = 600,000");
            assert_close(&ctx, &case, &got[i], &want[i], Gate::new(1e-4, 1e-4));
        }
    });
}
